"""The core's hot paths build some values directly instead of through dataclasses.replace: each such builder must
carry every field, so a field added to the class and not to the builder fails here."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime
from typing import Any

from autoscaler.core.types import BehaviorState, MetricHealth, Recommendation, ScaleEvent

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
BEHAVIOR_STATE: dict[str, Any] = {
    "recommendations": (Recommendation(4, T0),),
    "scale_up_events": (ScaleEvent(2, T0, False),),
    "scale_down_events": (ScaleEvent(1, T0, True),),
    "metric_health": (MetricHealth(key="0", failures=2),),
    "idle_since": T0,
    "forecast": ((T0, 3.0, 2.5),),
    "last_scale_down": T0,
}


def test_every_field_of_a_behavior_state_is_set_in_the_state_above() -> None:
    assert {f.name for f in fields(BehaviorState)} == set(BEHAVIOR_STATE)


def test_a_state_with_new_recommendations_is_what_replace_makes() -> None:
    state = BehaviorState(**BEHAVIOR_STATE)
    for recommendations in ((Recommendation(5, T0),), (), None):
        assert state.with_recommendations(recommendations) == replace(state, recommendations=recommendations)


def test_a_state_with_new_scale_events_is_what_replace_makes() -> None:
    state = BehaviorState(**BEHAVIOR_STATE)
    up, down = (ScaleEvent(3, T0, False),), ()
    assert state.with_scale_events(up, down) == replace(state, scale_up_events=up, scale_down_events=down)
