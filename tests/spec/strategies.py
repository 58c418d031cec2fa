"""Hypothesis strategies shared by the spec layer's property tests: autoscaling/v2 specs, pods and readings.

The specs cover the whole range each field allows (bounds included: int32 maxima, quantities up to the
largest milli-value, windows of 0 and 3600, tolerances of 0); readings go from 0 to the int64 edge.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from autoscaler.core.types import (
    Container,
    ContainerUsage,
    ExternalReading,
    MetricFailure,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    ObjectReading,
    Pod,
    PodsReading,
    PodUsage,
    PodValue,
    ResourceReading,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
MAX_QUANTITY_MILLI = MAX_INT64

counts = st.one_of(st.integers(0, 12), st.sampled_from([MAX_INT32 - 1, MAX_INT32]))
milli_values = st.one_of(
    st.integers(0, 10**6), st.sampled_from([1, MAX_INT64 // 2, MAX_INT64 - 1, MAX_INT64]), st.integers(-(10**6), -1)
)
negative_milli_values = st.sampled_from([-1, -(10**9), -(2**62)])
quantities = st.one_of(
    st.integers(1, 10**6).map(lambda m: f"{m}m"),
    st.sampled_from(["1m", "1", "1e3", f"{MAX_QUANTITY_MILLI}m", "9223372036854775"]),
)


def _target(kinds: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    choices = []
    if "Utilization" in kinds:
        utilizations = st.sampled_from([1, 50, 100, 400, MAX_INT32])
        choices.append(utilizations.map(lambda u: {"type": "Utilization", "averageUtilization": u}))
    if "Value" in kinds:
        choices.append(quantities.map(lambda q: {"type": "Value", "value": q}))
    if "AverageValue" in kinds:
        choices.append(quantities.map(lambda q: {"type": "AverageValue", "averageValue": q}))
    return st.one_of(choices)


SERVICE = {"apiVersion": "v1", "kind": "Service", "name": "s"}
metrics = st.one_of(
    _target(["Utilization", "AverageValue"]).map(
        lambda t: {"type": "Resource", "resource": {"name": "cpu", "target": t}}
    ),
    _target(["AverageValue"]).map(lambda t: {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": t}}),
    _target(["Value", "AverageValue"]).map(
        lambda t: {"type": "Object", "object": {"describedObject": SERVICE, "metric": {"name": "qps"}, "target": t}}
    ),
    _target(["Value", "AverageValue"]).map(
        lambda t: {"type": "External", "external": {"metric": {"name": "q"}, "target": t}}
    ),
)  # fmt: skip

policies = st.lists(
    st.builds(
        lambda kind, value, period: {"type": kind, "value": value, "periodSeconds": period},
        st.sampled_from(["Pods", "Percent"]),
        st.sampled_from([1, 4, 100, 1000, MAX_INT32]),
        st.sampled_from([1, 15, 60, 1800]),
    ),
    min_size=1,
    max_size=3,
)
rules = st.fixed_dictionaries(
    {},
    optional={
        "stabilizationWindowSeconds": st.sampled_from([0, 1, 300, 3600]),
        "selectPolicy": st.sampled_from(["Max", "Min", "Disabled"]),
        "policies": policies,
        "tolerance": st.sampled_from(["0", "0.1", "1", "5"]),
    },
)
specs = st.builds(
    lambda minimum, maximum, ms, behavior, missing: {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": minimum,
        "maxReplicas": maximum,
        "metrics": ms,
        **({"behavior": behavior} if behavior is not None else {}),
        "missingPods": missing,
    },
    st.one_of(st.integers(0, 5), st.just(MAX_INT32)),
    st.one_of(st.integers(1, 20), st.just(MAX_INT32)),
    st.lists(metrics, min_size=1, max_size=3),
    st.one_of(st.none(), st.fixed_dictionaries({}, optional={"scaleUp": rules, "scaleDown": rules})),
    st.sampled_from(["Rebalance", "Hold"]),
)


def pods_of(count: int, draw: Any) -> tuple[Pod, ...]:
    started = NOW - timedelta(minutes=draw(st.sampled_from([0, 1, 10])))
    return tuple(
        Pod(
            f"p{i}",
            draw(st.sampled_from(["Running", "Running", "Pending", "Succeeded", "Failed"])),
            ready=draw(st.sampled_from(["True", "True", "False", None])),
            ready_transition=started,
            start_time=started,
            containers=(Container("app", {"cpu": draw(st.sampled_from([1, 100, 1000, MAX_INT64 // 4]))}),),
        )
        for i in range(count)
    )


def reading_for(metric: MetricSpec, pods: tuple[Pod, ...], draw: Any) -> MetricInput:
    if draw(st.integers(0, 9)) == 0:
        return MetricFailure("no data")
    if draw(st.integers(0, 9)) == 0:
        milli = draw(negative_milli_values)  # a metric may be negative (a derivative, a balance)
        if metric.type == MetricSourceType.OBJECT:
            return ObjectReading(milli, NOW)
        if metric.type == MetricSourceType.EXTERNAL:
            return ExternalReading((milli,), NOW)
    names = [p.name for p in pods if draw(st.booleans())]
    match metric.type:
        case MetricSourceType.RESOURCE:
            return ResourceReading(
                tuple(PodUsage(n, NOW, 30.0, (ContainerUsage("app", {"cpu": draw(milli_values)}),)) for n in names)
            )
        case MetricSourceType.PODS:
            return PodsReading(tuple(PodValue(n, draw(milli_values), NOW) for n in names))
        case MetricSourceType.OBJECT:
            return ObjectReading(draw(milli_values), NOW)
    return ExternalReading(tuple(draw(st.lists(milli_values, min_size=1, max_size=3))), NOW)
