"""From a real Prometheus to a decision, wired as the daemon will wire it: the metric-source layer reads,
every failure becomes the core's `MetricFailure`, and the core decides. No failure ever reads as a number:
Prometheus down, an empty answer or a NaN holds the target where it is instead of scaling it down."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.decision import Decision
from autoscaler.core.types import MetricSourceType, MetricSpec, MetricTarget, MetricTargetType, ResourceReading
from autoscaler.metrics import MetricsReader
from tests.metrics.conftest import Push
from tests.metrics.helpers import context, cpu_samples, decide_tick, request, running_pods
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


def _decide(
    reader: MetricsReader, now: datetime, namespace: str, metrics: tuple[MetricSpec, ...], bindings: list[Any]
) -> Decision:
    """One tick for one target: read every metric in one pass, then decide."""
    pods = running_pods(namespace, now)
    ctx = context(namespace, now, *pods)
    result = reader.read([request(m, ctx, b) for m, b in zip(metrics, bindings, strict=True)])
    return decide_tick(result.outcomes, metrics, pods, now)


@pytest.fixture(scope="module")
def now(base_time: datetime) -> datetime:
    return base_time + timedelta(minutes=2)


@pytest.fixture
def cpu_at(push: Push, now: datetime) -> CpuAt:
    """Every pod of `namespace` uses `cores` CPU in its container over the last minute (counters every 15 s)."""

    def write(namespace: str, cores: float) -> None:
        push(*cpu_samples(namespace, now, cores, ["web-1", "web-2", "web-3"]))

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


@pytest.mark.parametrize(
    ("namespace", "binding", "age_seconds"),
    [
        pytest.param("decisions-stopped", None, 150, id="its series stopped 150 s ago: gone from the 60 s rate"),
        pytest.param(
            "decisions-stale",
            {"windowSeconds": 120, "stalenessSeconds": 30},
            45,
            id="its newest sample is past the staleness budget: dropped by the timestamp check",
        ),
    ],
)
def test_a_stale_pod_is_missing_and_the_hpa_still_scales_down(
    make_reader: Callable[..., MetricsReader],
    prometheus: PrometheusServer,
    push: Push,
    now: datetime,
    namespace: str,
    binding: dict[str, Any] | None,
    age_seconds: float,
) -> None:
    """One of three pods' CPU series is stale: the pod reads as missing, and the HPA's rule for a missing pod
    on a scale-down (it counts as using 100 % of its request) still takes 3 pods to 2: (10 + 10 + 100) / 3 =
    40 % against 60 %. The HPA's own behaviour, kept as the default and documented in docs/metrics.md."""
    push(*cpu_samples(namespace, now, 0.05, ["web-1", "web-2"]))
    push(*cpu_samples(namespace, now - timedelta(seconds=age_seconds), 0.05, ["web-3"]))
    pods = running_pods(namespace, now)
    outcome = make_reader(prometheus.url).read([request(CPU, context(namespace, now, *pods), binding)]).outcomes[0]
    assert isinstance(outcome, ResourceReading)
    assert [p.pod for p in outcome.pods] == ["web-1", "web-2"]  # web-3 is missing
    decision = decide_tick([outcome], (CPU,), pods, now)
    assert (decision.desired_replicas, decision.rescale) == (2, True)
