"""The behaviour state's JSON form: how a decision's memory survives a restart or a failover.

The same form is written to the custom resource's `status.behaviorState`, read from and written to decision
snapshots (docs/snapshot.md), and printed by `autoscaler replay`. `recommendations: null` (or absent) means
"never reconciled"; `[]` is an empty history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autoscaler.core.formats import format_time, parse_time
from autoscaler.core.types import BehaviorState, Recommendation, ScaleEvent


def behavior_state_to_json(state: BehaviorState) -> dict[str, Any]:
    def events(items: tuple[ScaleEvent, ...]) -> list[dict[str, Any]]:
        return [
            {"replicaChange": e.replica_change, "timestamp": format_time(e.timestamp), "outdated": e.outdated}
            for e in items
        ]

    return {
        "recommendations": (
            [{"replicas": r.replicas, "timestamp": format_time(r.timestamp)} for r in state.recommendations]
            if state.recommendations is not None
            else None
        ),
        "scaleUpEvents": events(state.scale_up_events),
        "scaleDownEvents": events(state.scale_down_events),
    }


def _count(value: Any, field: str, *, minimum: int) -> int:
    """An integer field of at least `minimum`: `"2"`, `2.0` and `true` are refused rather than read as 2 or 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{field}: {value!r} is not an integer")
    if value < minimum:
        raise ValueError(f"{field}: {value} is below {minimum}")
    return value


def _flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{field}: {value!r} is not a boolean")
    return value


def behavior_state_from_json(data: Mapping[str, Any] | None) -> BehaviorState:
    """The inverse of `behavior_state_to_json`; raises ValueError (or KeyError) on a malformed entry."""
    if not data:
        return BehaviorState()

    def events(items: Any, name: str) -> tuple[ScaleEvent, ...]:
        return tuple(
            ScaleEvent(
                _count(e["replicaChange"], f"{name}[{i}].replicaChange", minimum=1),
                parse_time(e["timestamp"]),
                _flag(e.get("outdated", False), f"{name}[{i}].outdated"),
            )
            for i, e in enumerate(items or ())
        )

    recs = data.get("recommendations")
    return BehaviorState(
        recommendations=(
            None
            if recs is None
            else tuple(
                Recommendation(
                    _count(r["replicas"], f"recommendations[{i}].replicas", minimum=0), parse_time(r["timestamp"])
                )
                for i, r in enumerate(recs)
            )
        ),
        scale_up_events=events(data.get("scaleUpEvents"), "scaleUpEvents"),
        scale_down_events=events(data.get("scaleDownEvents"), "scaleDownEvents"),
    )
