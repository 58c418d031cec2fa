"""The TARGETS and REFERENCE columns, as kubectl's formatHPAMetrics and printHorizontalPodAutoscaler print them."""

from __future__ import annotations

import pytest

from autoscaler.core.metric import MetricStatus
from autoscaler.core.types import MetricSourceType, MetricSpec, MetricTarget, MetricTargetType, ObjectReference
from autoscaler.spec.render import format_reference, format_targets

T = MetricTargetType
CPU = MetricSpec(MetricSourceType.RESOURCE, MetricTarget(T.UTILIZATION, average_utilization=70), resource_name="cpu")
MEM = MetricSpec(MetricSourceType.RESOURCE, MetricTarget(T.AVERAGE_VALUE, average_value=1000), resource_name="memory")
PODS = MetricSpec(MetricSourceType.PODS, MetricTarget(T.AVERAGE_VALUE, average_value=500), metric_name="rps")
EXT = MetricSpec(MetricSourceType.EXTERNAL, MetricTarget(T.VALUE, value=10_000), metric_name="queue")
EXT_AVG = MetricSpec(MetricSourceType.EXTERNAL, MetricTarget(T.AVERAGE_VALUE, average_value=30_000), metric_name="q")
OBJ = MetricSpec(MetricSourceType.OBJECT, MetricTarget(T.VALUE, value=2_000), metric_name="hits")
CONTAINER = MetricSpec(
    MetricSourceType.CONTAINER_RESOURCE,
    MetricTarget(T.UTILIZATION, average_utilization=60),
    resource_name="cpu",
    container="app",
)


@pytest.mark.parametrize(
    ("metrics", "statuses", "expected"),
    [
        pytest.param((), None, "<none>", id="no-metrics"),
        pytest.param((CPU,), (MetricStatus(CPU, average_value=450, average_utilization=45),), "cpu: 45%/70%", id="cpu"),
        pytest.param((CPU,), None, "cpu: <unknown>/70%", id="cpu-before-any-status"),
        pytest.param((CPU,), (None,), "cpu: <unknown>/70%", id="cpu-failed"),
        pytest.param((MEM,), (MetricStatus(MEM, average_value=500),), "memory: 500m/1", id="resource-average-value"),
        pytest.param((PODS,), (MetricStatus(PODS, average_value=300),), "300m/500m", id="pods"),
        pytest.param((EXT,), (MetricStatus(EXT, value=12_000),), "12/10", id="external-value"),
        pytest.param((EXT_AVG,), (MetricStatus(EXT_AVG, average_value=15_000),), "15/30 (avg)", id="external-avg"),
        pytest.param((OBJ,), (None,), "<unknown>/2", id="object-failed"),
        pytest.param(
            (CONTAINER,), (MetricStatus(CONTAINER, average_utilization=61),), "cpu: 61%/60%", id="container-resource"
        ),
        pytest.param(
            (CPU, PODS),
            (MetricStatus(CPU, average_utilization=45), MetricStatus(PODS, average_value=300)),
            "cpu: 45%/70%, 300m/500m",
            id="two-metrics",
        ),
        pytest.param(
            (CPU, PODS, EXT, OBJ),
            (MetricStatus(CPU, average_utilization=45), None, None, None),
            "cpu: 45%/70%, <unknown>/500m + 2 more...",
            id="more-than-two",
        ),
    ],
)
def test_targets_column_as_kubectl_prints_it(
    metrics: tuple[MetricSpec, ...], statuses: tuple[MetricStatus | None, ...] | None, expected: str
) -> None:
    assert format_targets(metrics, statuses) == expected


def test_reference_column() -> None:
    assert format_reference(ObjectReference("Deployment", "web", "apps/v1")) == "Deployment/web"
