"""From a real Prometheus to a decision, wired as the daemon will wire it: the metric-source layer reads,
every failure becomes the core's `MetricFailure`, and the core decides. No failure ever reads as a number:
Prometheus down, an empty answer or a NaN holds the target where it is instead of scaling it down."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.decision import Decision, decide
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    MetricFailure,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Pod,
    Scale,
    Settings,
)
from autoscaler.metrics import MetricsError, MetricsReader
from tests.metrics.conftest import Push
from tests.metrics.helpers import context, pod, request
from tests.metrics.server import PrometheusServer

CPU = MetricSpec(
    MetricSourceType.RESOURCE, MetricTarget(MetricTargetType.UTILIZATION, average_utilization=60), resource_name="cpu"
)
QUEUE = MetricSpec(
    MetricSourceType.EXTERNAL,
    MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=30_000),
    metric_name="queue_depth",
)
CpuAt = Callable[[str, float], None]


def _pods(namespace: str, now: datetime) -> tuple[Pod, ...]:
    """Three pods, running and ready for an hour: past the HPA's CPU initialization period."""
    started = now - timedelta(hours=1)
    return tuple(
        replace(pod(f"web-{i}", namespace=namespace), start_time=started, ready_transition=started) for i in (1, 2, 3)
    )


def _decide(
    reader: MetricsReader, now: datetime, namespace: str, metrics: tuple[MetricSpec, ...], bindings: list[Any]
) -> Decision:
    """One tick for one target: read every metric in one pass, then decide."""
    pods = _pods(namespace, now)
    ctx = context(namespace, now, *pods)
    result = reader.read([request(m, ctx, b) for m, b in zip(metrics, bindings, strict=True)])
    inputs: list[MetricInput] = [
        MetricFailure(str(outcome)) if isinstance(outcome, MetricsError) else outcome for outcome in result.outcomes
    ]
    return decide(
        spec=AutoscalerSpec(max_replicas=10, min_replicas=1, metrics=metrics),
        scale=Scale(3, 3, "app=web"),
        pods=pods,
        metrics=inputs,
        state=BehaviorState(recommendations=()),
        settings=Settings(),
        now=now,
    )


@pytest.fixture(scope="module")
def now(base_time: datetime) -> datetime:
    return base_time + timedelta(minutes=2)


@pytest.fixture
def cpu_at(push: Push, now: datetime) -> CpuAt:
    """Every pod of `namespace` uses `cores` CPU in its container over the last minute (counters every 15 s)."""

    def write(namespace: str, cores: float) -> None:
        series: list[Any] = []
        for i in (1, 2, 3):
            labels = {"__name__": "container_cpu_usage_seconds_total", "namespace": namespace}
            labels |= {"pod": f"web-{i}", "container": "app"}
            series += [labels, [(now - timedelta(seconds=60 - 15 * k), 1000 + cores * 15 * k) for k in range(5)]]
        push(*series)

    return write


def test_cpu_from_prometheus_scales_up_like_the_hpa(
    make_reader: Callable[..., MetricsReader], prometheus: PrometheusServer, cpu_at: CpuAt, now: datetime
) -> None:
    """0.45 cores of a 500m request is 90 % against 60 %: ceil(1.5 * 3) = 5."""
    cpu_at("decisions-up", 0.45)
    decision = _decide(make_reader(prometheus.url), now, "decisions-up", (CPU,), [None])
    assert decision.metrics[0].status is not None and decision.metrics[0].status.average_utilization == 90
    assert (decision.desired_replicas, decision.rescale) == (5, True)


def test_prometheus_down_holds_instead_of_scaling_down(
    make_reader: Callable[..., MetricsReader], now: datetime
) -> None:
    decision = _decide(make_reader("http://127.0.0.1:9"), now, "decisions-down", (CPU,), [None])
    assert (decision.desired_replicas, decision.rescale) == (3, False)
    assert decision.metrics[0].error is not None and decision.metrics[0].proposed_replicas is None


@pytest.mark.parametrize(
    ("query", "why"),
    [
        pytest.param("sum(queue_depth_absent_series)", "no series", id="an empty answer"),
        pytest.param("vector(0) / 0", "NaN", id="NaN"),
        pytest.param("vector(1) / 0", "Inf", id="+Inf"),
    ],
)
def test_no_data_never_scales_down_even_when_the_other_metric_would(
    make_reader: Callable[..., MetricsReader],
    prometheus: PrometheusServer,
    cpu_at: CpuAt,
    now: datetime,
    query: str,
    why: str,
) -> None:
    """CPU alone would take 3 pods to 1; the queue metric has no data, so the HPA's rule holds at 3."""
    namespace = f"decisions-{why.split()[-1].lower()}"
    cpu_at(namespace, 0.05)
    decision = _decide(make_reader(prometheus.url), now, namespace, (CPU, QUEUE), [None, {"query": query}])
    assert decision.metrics[0].proposed_replicas == 1
    assert decision.metrics[1].error is not None and why.lower() in decision.metrics[1].error.lower()
    assert (decision.desired_replicas, decision.rescale) == (3, False)
    assert [e.reason for e in decision.events] == ["FailedGetExternalMetric", "FailedComputeMetricsReplicas"]
