"""Status serialization: behaviour state round trip, condition transition times kept while unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

from autoscaler.core.state import behavior_state_from_json, behavior_state_to_json
from autoscaler.core.types import BehaviorState, Condition, Recommendation, ScaleEvent
from autoscaler.kube.status import AutoscalerStatus, format_time, status_to_json
from tests.core.test_time_format import FoldedZone

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


def test_metav1_times_of_two_instants_across_a_fold_are_two_texts() -> None:
    """A condition's transition time: one text per instant, although the two local times compare equal."""
    first = datetime(2026, 11, 1, 1, 30, tzinfo=FoldedZone())
    second = first.replace(fold=1)
    assert format_time(first) == "2026-11-01T05:30:00Z"
    assert format_time(second) == "2026-11-01T06:30:00Z"
