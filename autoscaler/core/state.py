"""The behaviour state's JSON form: how a decision's memory survives a restart or a failover.

The same form is written to the custom resource's `status.behaviorState`, read from and written to decision
snapshots (docs/snapshot.md), and printed by `autoscaler replay`. `recommendations: null` (or absent) means
"never reconciled"; `[]` is an empty history.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from autoscaler.core.formats import format_time, parse_time
from autoscaler.core.types import BehaviorState, MetricHealth, Recommendation, ScaleEvent


def behavior_state_to_json(state: BehaviorState) -> dict[str, Any]:
    def events(items: tuple[ScaleEvent, ...]) -> list[dict[str, Any]]:
        return [
            {"replicaChange": e.replica_change, "timestamp": format_time(e.timestamp), "outdated": e.outdated}
            for e in items
        ]

    document: dict[str, Any] = {
        "recommendations": (
            [{"replicas": r.replicas, "timestamp": format_time(r.timestamp)} for r in state.recommendations]
            if state.recommendations is not None
            else None
        ),
        "scaleUpEvents": events(state.scale_up_events),
        "scaleDownEvents": events(state.scale_down_events),
    }
    # The extensions' keys only when they hold something: the HPA path's document is unchanged.
    if state.metric_health:
        document["metricHealth"] = [_health_to_json(h) for h in state.metric_health]
    if state.idle_since is not None:
        document["idleSince"] = format_time(state.idle_since)

    if state.forecast:  # mode: predictive only; absent is empty
        document["forecast"] = [_sample_to_json(sample) for sample in state.forecast]
    if state.last_scale_down is not None:  # mode: predictive only; absent (a state of an earlier version too): none
        document["lastScaleDown"] = format_time(state.last_scale_down)
    return document


def _sample_to_json(sample: tuple[datetime, float, float]) -> dict[str, Any]:
    """One forecast sample; `unboosted` only when a saturated reading made it differ from `required`."""
    when, required, unboosted = sample
    item: dict[str, Any] = {"timestamp": format_time(when), "required": required}
    if unboosted != required:  # a saturated reading's need; absent (a state of an earlier version too): the same
        item["unboosted"] = unboosted
    return item


def _sample_from_json(item: Any, field: str) -> tuple[datetime, float, float]:
    """One stored forecast sample; without `unboosted` (a state of an earlier version too) it is `required`."""
    if not isinstance(item, Mapping):
        raise ValueError(f"{field}: {item!r} is not a forecast sample (a mapping with `timestamp` and `required`)")
    required = _need(item["required"], f"{field}.required")
    given = item.get("unboosted")
    unboosted = required if given is None else _need(given, f"{field}.unboosted")
    if unboosted > required:
        raise ValueError(f"{field}.unboosted: {unboosted!r} is above the sample's required {required!r}")
    return parse_time(item["timestamp"]), required, unboosted


def _health_to_json(health: MetricHealth) -> dict[str, Any]:
    item: dict[str, Any] = {"metric": health.key, "failures": health.failures}
    if health.last_good is not None and health.last_good_time is not None:
        item["lastGood"] = {"milliValue": health.last_good, "time": format_time(health.last_good_time)}
    if health.recovered_at is not None:
        item["recoveredAt"] = format_time(health.recovered_at)
    return item


def _health_from_json(item: Any, field: str) -> MetricHealth:
    if not isinstance(item, Mapping) or not isinstance(item.get("metric"), str):
        raise ValueError(f"{field}: {item!r} is not a metric's health (a mapping with a string `metric`)")
    good = item.get("lastGood")
    if good is not None and not isinstance(good, Mapping):
        raise ValueError(f"{field}.lastGood: {good!r} is not a mapping")
    value = good.get("milliValue") if good else None
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{field}.lastGood.milliValue: {value!r} is not an integer")
    return MetricHealth(
        key=item["metric"],
        failures=_count(item.get("failures", 0), f"{field}.failures", minimum=0),
        last_good=value,
        last_good_time=parse_time(good["time"]) if good else None,
        recovered_at=parse_time(item["recoveredAt"]) if item.get("recoveredAt") else None,
    )


def _need(value: Any, field: str) -> float:
    """A forecast sample's need: a finite, non-negative number (repr round-trips a float exactly)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{field}: {value!r} is not a non-negative number")
    return float(value)


def _time(value: Any, field: str) -> datetime:
    """A stored time, the field named when it is not one."""
    try:
        return parse_time(value)
    except ValueError as err:
        raise ValueError(f"{field}: {err}") from err


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
        metric_health=tuple(
            _health_from_json(item, f"metricHealth[{i}]") for i, item in enumerate(data.get("metricHealth") or ())
        ),
        idle_since=parse_time(data["idleSince"]) if data.get("idleSince") else None,
        forecast=tuple(_sample_from_json(f, f"forecast[{i}]") for i, f in enumerate(data.get("forecast") or ())),
        last_scale_down=_time(data["lastScaleDown"], "lastScaleDown") if data.get("lastScaleDown") else None,
    )


def newest_recommendation_time(state: BehaviorState) -> datetime | None:
    """When the newest recommendation was recorded: for a stored state, the decision it was saved from."""
    if not state.recommendations:
        return None
    return max(r.timestamp for r in state.recommendations)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def refresh_offset(key: str, refresh_seconds: float) -> timedelta:
    """The target's place in the refresh period: in [0, refresh_seconds), stable across processes (a hash of `key`).

    Spread evenly over the period, so N targets first written in the same tick are refreshed N / period per
    second rather than all at once a period later.
    """
    period = round(refresh_seconds * 1_000_000)
    if period <= 0:
        return timedelta(0)
    digest = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")
    return timedelta(microseconds=digest % period)


def refresh_due(saved_at: datetime, *, refresh_seconds: float, offset: timedelta) -> datetime:
    """When a state saved at `saved_at` must be stored again: the first instant strictly after it that is
    `offset` past a multiple of `refresh_seconds` since the Unix epoch (so at most `refresh_seconds` later).

    `refresh_seconds` 0 (or less): at once (`saved_at`).
    """
    period = round(refresh_seconds * 1_000_000)
    if period <= 0:
        return saved_at
    since = (saved_at - _EPOCH) // _MICRO - offset // _MICRO
    return saved_at + timedelta(microseconds=period - since % period)


def restore_conservatively(
    state: BehaviorState, *, refresh_seconds: float, offset: timedelta, now: datetime
) -> BehaviorState:
    """A stored behaviour state made safe to continue from after a restart or a failover.

    The daemon stores the state at once whenever the set of recorded values changes, and otherwise at the
    first tick at or after `refresh_due(saved_at, refresh_seconds=..., offset=...)` (`saved_at`: the newest
    recommendation stored; the due time is at most `refresh_seconds` after it). So every recommendation the
    lost process made after `saved_at` has one of the stored values and was made before
    `min(due, now)` (`until`). The newest entry of each stored value is stamped
    `until` (never moved back): each window then holds at least the values the lost memory held (the
    scale-down window's maximum is never lower, the scale-up window's minimum never higher), so no window is
    ever shorter than the HPA's with full memory. It may be longer, by up to a whole window: a value that was
    about to leave a window is restamped too (it may have been recommended again, unstored). Scale events need
    nothing: they are stored at once.
    """
    saved_at = newest_recommendation_time(state)
    if saved_at is None or state.recommendations is None or refresh_seconds <= 0:
        return state
    until = min(refresh_due(saved_at, refresh_seconds=refresh_seconds, offset=offset), now)
    if until <= saved_at:
        return state
    newest: dict[int, int] = {}
    for i, rec in enumerate(state.recommendations):
        if rec.replicas not in newest or rec.timestamp >= state.recommendations[newest[rec.replicas]].timestamp:
            newest[rec.replicas] = i
    restamped = tuple(
        Recommendation(rec.replicas, until) if newest[rec.replicas] == i else rec
        for i, rec in enumerate(state.recommendations)
    )
    return state.with_recommendations(restamped)


def compact_recommendations(state: BehaviorState) -> BehaviorState:
    """The state with only the newest recommendation of each distinct replica count (order kept).

    A stabilization window takes the max or min over the entries newer than its cutoff, so an older entry
    with the same count as a newer one never changes it, for any cutoff; the HPA's list holds one entry per
    sync period (300 with a 1 s period and the 300 s window), this one at most one per distinct count.
    """
    recs = state.recommendations
    if not recs or len(recs) < 2:
        return state
    newest: dict[int, int] = {}
    for i, rec in enumerate(recs):
        if rec.replicas not in newest or rec.timestamp >= recs[newest[rec.replicas]].timestamp:
            newest[rec.replicas] = i
    if len(newest) == len(recs):
        return state
    kept = sorted(newest.values())
    return state.with_recommendations(tuple(recs[i] for i in kept))
