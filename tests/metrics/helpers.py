"""Small builders for the tests: metric specs, pods, read contexts and requests."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from autoscaler.core.types import (
    Container,
    LabelSelector,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReference,
    Pod,
    PodPhase,
)
from autoscaler.metrics import MetricRequest, PrometheusBinding, ReadContext

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
