"""Small builders for the tests: metric specs, pods, read contexts and requests, and one tick's decision
from what a pass read (wired as the daemon wires it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from autoscaler.core.decision import Decision, decide
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    Container,
    LabelSelector,
    MetricFailure,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReference,
    Pod,
    PodPhase,
    Scale,
    Settings,
)
from autoscaler.metrics import MetricRequest, MetricsError, PrometheusBinding, ReadContext
from autoscaler.metrics.evaluate import Outcome

TARGETS = {
    MetricTargetType.UTILIZATION: MetricTarget(MetricTargetType.UTILIZATION, average_utilization=70),
    MetricTargetType.VALUE: MetricTarget(MetricTargetType.VALUE, value=10_000),
    MetricTargetType.AVERAGE_VALUE: MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=10_000),
}


def pod(name: str, *containers: str, namespace: str = "") -> Pod:
    """A running, ready pod with containers requesting 500m CPU each."""
    return Pod(
        name=name,
        phase=PodPhase.RUNNING,
        ready="True",
        namespace=namespace,
        labels={"app": "web"},
        containers=tuple(Container(c, {"cpu": 500}) for c in containers or ("app",)),
    )


def context(namespace: str, now: datetime, *pods: Pod, sync_period_seconds: float = 15.0) -> ReadContext:
    return ReadContext(
        namespace=namespace, pods=pods, selector="app=web", now=now, sync_period_seconds=sync_period_seconds
    )


def spec(
    metric_type: MetricSourceType,
    target: MetricTargetType = MetricTargetType.AVERAGE_VALUE,
    *,
    resource: str = "",
    container: str = "",
    metric: str = "",
    selector: dict[str, str] | None = None,
    described: ObjectReference | None = None,
) -> MetricSpec:
    return MetricSpec(
        type=metric_type,
        target=TARGETS[target],
        resource_name=resource,
        container=container,
        metric_name=metric,
        metric_selector=LabelSelector(match_labels=tuple(sorted((selector or {}).items()))) if selector else None,
        described_object=described,
    )


def request(metric_spec: MetricSpec, ctx: ReadContext, binding: dict[str, Any] | None = None) -> MetricRequest:
    """A request; `binding` is the YAML-style (camelCase) `prometheus:` block."""
    parsed = PrometheusBinding.model_validate(binding) if binding is not None else None
    return MetricRequest(spec=metric_spec, context=ctx, binding=parsed)


def running_pods(namespace: str, now: datetime, count: int = 3) -> tuple[Pod, ...]:
    """`web-1`..`web-<count>`, running and ready for an hour: past the HPA's CPU initialization period."""
    started = now - timedelta(hours=1)
    return tuple(
        replace(pod(f"web-{i}", namespace=namespace), start_time=started, ready_transition=started)
        for i in range(1, count + 1)
    )


def cpu_samples(namespace: str, now: datetime, cores: float, pods: Sequence[str]) -> list[Any]:
    """For `push`: each pod's container `app` uses `cores` CPU over the last minute (a counter every 15 s)."""
    series: list[Any] = []
    for name in pods:
        labels = {"__name__": "container_cpu_usage_seconds_total", "namespace": namespace}
        labels |= {"pod": name, "container": "app"}
        series += [labels, [(now - timedelta(seconds=60 - 15 * k), 1000 + cores * 15 * k) for k in range(5)]]
    return series


def decide_tick(
    outcomes: Sequence[Outcome], metrics: Sequence[MetricSpec], pods: Sequence[Pod], now: datetime
) -> Decision:
    """The core's decision for a target at 3 replicas (min 1, max 10) from one pass's outcomes: every error
    becomes a `MetricFailure`, as the daemon does."""
    inputs: list[MetricInput] = [
        MetricFailure(str(outcome)) if isinstance(outcome, MetricsError) else outcome for outcome in outcomes
    ]
    return decide(
        spec=AutoscalerSpec(max_replicas=10, min_replicas=1, metrics=tuple(metrics)),
        scale=Scale(3, 3, "app=web"),
        pods=tuple(pods),
        metrics=inputs,
        state=BehaviorState(recommendations=()),
        settings=Settings(),
        now=now,
    )
