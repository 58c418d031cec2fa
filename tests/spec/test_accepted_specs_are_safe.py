"""No spec the validator accepts can make the core divide by zero, overflow or propose a negative count.

Hypothesis builds autoscaling/v2 specs from the whole range each field allows (bounds included: int32
maxima, quantities up to the largest milli-value, windows of 0 and 3600, tolerances of 0), keeps those the
spec layer accepts, and decides them against targets and readings from 0 to the int64 edge: every decision
comes back, with a desired count in [0, int32] that the spec's bounds explain, and no negative quantity in
the status it would write for non-negative readings.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from autoscaler.core.decision import decide
from autoscaler.core.types import (
    BehaviorState,
    Condition,
    ExternalReading,
    MetricInput,
    ObjectReading,
    PodsReading,
    Recommendation,
    ResourceReading,
    Scale,
    ScaleEvent,
    Settings,
)
from autoscaler.spec.errors import SpecError
from autoscaler.spec.hpa import to_core
from autoscaler.spec.validation import load_spec
from tests.spec.strategies import MAX_INT32, MAX_INT64, NOW, counts, pods_of, reading_for, specs


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(raw=specs, data=st.data())
def test_an_accepted_spec_never_breaks_the_core(raw: dict[str, Any], data: st.DataObject) -> None:
    gate = data.draw(st.booleans(), label="HPAScaleToZero")
    try:
        spec = to_core(load_spec(raw, scale_to_zero=gate))
    except SpecError:
        assume(False)
        return
    draw = data.draw
    current = draw(counts, label="spec.replicas")
    status_replicas = draw(counts, label="status.replicas")
    pods = pods_of(min(current, 12), draw)
    readings = tuple(reading_for(m, pods, draw) for m in spec.metrics)
    history = draw(st.lists(st.integers(0, MAX_INT32), max_size=4))
    state = BehaviorState(
        recommendations=tuple(Recommendation(r, NOW - timedelta(seconds=15 * i)) for i, r in enumerate(history)),
        scale_up_events=(ScaleEvent(draw(st.integers(1, MAX_INT32)), NOW - timedelta(seconds=30)),),
        scale_down_events=(ScaleEvent(draw(st.integers(1, MAX_INT32)), NOW - timedelta(seconds=45)),),
    )
    conditions = (Condition("ScaledToZero", draw(st.sampled_from(["True", "False"])), "ScaledToZero", ""),)

    result = decide(
        spec=spec,
        scale=Scale(current, status_replicas, "app=web"),
        pods=pods,
        metrics=readings,
        state=state,
        settings=Settings(hpa_scale_to_zero=gate),
        now=NOW,
        conditions=conditions,
    )

    desired = result.desired_replicas
    assert desired is not None
    assert 0 <= desired <= MAX_INT32
    if result.rescale:
        # A write lands within the spec's bounds, or (from zero) on the minimum.
        assert spec.min_replicas <= desired <= spec.max_replicas or desired == 0 == spec.min_replicas
    else:
        assert desired == current
    # A proposal below 0 (negative readings) counts as 0, as reconcileAutoscaler's max with 0 does: the
    # behaviour state never records a negative recommendation.
    assert all(r.replicas >= 0 for r in result.state.recommendations or ())
    negative = any(_negative(r) for r in readings)
    for metric in result.metrics:
        if metric.proposed_replicas is not None:
            assert metric.proposed_replicas <= MAX_INT32
            assert negative or metric.proposed_replicas >= 0
        status = metric.status
        if status is not None:
            for value in (status.value, status.average_value, status.average_utilization):
                assert value is None or ((negative or value >= 0) and abs(value) <= MAX_INT64)


def _negative(reading: MetricInput) -> bool:
    match reading:
        case ResourceReading():
            return any(v < 0 for p in reading.pods for c in p.containers for v in c.usage.values())
        case PodsReading():
            return any(item.value < 0 for item in reading.items)
        case ObjectReading():
            return reading.value < 0
        case ExternalReading():
            return any(v < 0 for v in reading.values)
    return False
