"""`missingPods`: the HPA's rebalancing of pods without a sample (the default) against the stricter Hold.

With one of three pods' CPU series stale, the HPA counts the missing pod at 100 % of its request on a
scale-down and still scales 3 -> 2; Hold keeps 3 until every pod reports. Scale-ups are the same in both.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autoscaler.core.decision import decide
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    Container,
    ContainerUsage,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    MissingPods,
    Pod,
    PodUsage,
    ResourceReading,
    Scale,
    Settings,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
CPU_70 = MetricSpec(
    MetricSourceType.RESOURCE,
    MetricTarget(MetricTargetType.UTILIZATION, average_utilization=70),
    resource_name="cpu",
)


def _pods(count: int) -> tuple[Pod, ...]:
    started = NOW - timedelta(minutes=30)
    return tuple(
        Pod(
            f"web-{i}",
            "Running",
            ready="True",
            ready_transition=started,
            start_time=started,
            containers=(Container("app", {"cpu": 1000}),),
        )
        for i in range(count)
    )


def _decide(usage: dict[str, int], *, replicas: int, policy: MissingPods) -> tuple[int | None, str]:
    reading = ResourceReading(
        tuple(PodUsage(name, NOW, 30.0, (ContainerUsage("app", {"cpu": cpu}),)) for name, cpu in usage.items())
    )
    spec = AutoscalerSpec(max_replicas=10, metrics=(CPU_70,), missing_pods=policy)
    result = decide(
        spec=spec,
        scale=Scale(replicas, replicas, "app=web"),
        pods=_pods(replicas),
        metrics=(reading,),
        state=BehaviorState(recommendations=()),
        settings=Settings(),
        now=NOW,
    )
    return result.desired_replicas, result.metrics[0].calculation.note if result.metrics[0].calculation else ""


TWO_OF_THREE_LOW = {"web-0": 100, "web-1": 100}
TWO_OF_THREE_HIGH = {"web-0": 1000, "web-1": 1000}
CASES = [
    ("Rebalance (the HPA): one stale pod, 3 -> 2", TWO_OF_THREE_LOW, MissingPods.REBALANCE, 2),
    ("Hold: one stale pod, no scale-down", TWO_OF_THREE_LOW, MissingPods.HOLD, 3),
    ("Hold: every pod reports, 3 -> 1", {**TWO_OF_THREE_LOW, "web-2": 100}, MissingPods.HOLD, 1),
    ("Rebalance: a scale-up with the missing pod at 0 holds", TWO_OF_THREE_HIGH, MissingPods.REBALANCE, 3),
    ("Hold: the same scale-up case rebalances like the HPA", TWO_OF_THREE_HIGH, MissingPods.HOLD, 3),
    ("Hold: a scale-up is never held back", {"web-0": 2000, "web-1": 2000}, MissingPods.HOLD, 6),
    ("Hold: within tolerance nothing changes", {"web-0": 700, "web-1": 700}, MissingPods.HOLD, 3),
]


@pytest.mark.parametrize(("usage", "policy", "desired"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_missing_pods_policy(usage: dict[str, int], policy: MissingPods, desired: int) -> None:
    assert _decide(usage, replicas=3, policy=policy)[0] == desired


def test_hold_says_why() -> None:
    _, note = _decide({"web-0": 100, "web-1": 100}, replicas=3, policy=MissingPods.HOLD)
    assert "1 pod(s) without a sample (web-2)" in note and "missingPods: Hold" in note


@given(
    replicas=st.integers(min_value=1, max_value=10),
    data=st.data(),
)
def test_hold_never_scales_down_while_a_pod_is_missing(replicas: int, data: st.DataObject) -> None:
    reporting = data.draw(st.integers(min_value=1, max_value=replicas))
    usage = {f"web-{i}": data.draw(st.integers(min_value=0, max_value=4000)) for i in range(reporting)}
    desired, _ = _decide(usage, replicas=replicas, policy=MissingPods.HOLD)
    assert desired is not None
    if reporting < replicas:
        assert desired >= replicas
