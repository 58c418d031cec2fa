"""Status serialization: behaviour state round trip, condition transition times kept while unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

from autoscaler.core.state import behavior_state_from_json, behavior_state_to_json
from autoscaler.core.types import BehaviorState, Condition, Recommendation, ScaleEvent
from autoscaler.kube.status import AutoscalerStatus, status_to_json

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 1, 1, 12, 1, 0, tzinfo=UTC)


def test_behavior_state_round_trip() -> None:
    state = BehaviorState(
        recommendations=(Recommendation(3, T0), Recommendation(4, T1)),
        scale_up_events=(ScaleEvent(2, T0),),
        scale_down_events=(ScaleEvent(1, T1, outdated=True),),
    )
    assert behavior_state_from_json(behavior_state_to_json(state)) == state
    assert behavior_state_from_json(None) == BehaviorState()


def test_condition_transition_time_kept_while_status_unchanged() -> None:
    first = status_to_json(
        AutoscalerStatus(3, 3, conditions=(Condition("AbleToScale", "True", "ReadyForNewScale", "ok"),)),
        previous=None,
        now=T0,
    )
    assert first["conditions"][0]["lastTransitionTime"] == "2026-01-01T12:00:00Z"
    same = status_to_json(
        AutoscalerStatus(3, 3, conditions=(Condition("AbleToScale", "True", "SucceededRescale", "ok"),)),
        previous=first,
        now=T1,
    )
    assert same["conditions"][0]["lastTransitionTime"] == "2026-01-01T12:00:00Z"
    flipped = status_to_json(
        AutoscalerStatus(3, 3, conditions=(Condition("AbleToScale", "False", "FailedGetScale", "no"),)),
        previous=same,
        now=T1,
    )
    assert flipped["conditions"][0]["lastTransitionTime"] == "2026-01-01T12:01:00Z"
