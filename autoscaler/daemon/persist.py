"""What a target remembers between ticks, and how it is read back from storage after a restart or a failover.

The HPA keeps the behaviour state (recommendations, scale events) in memory and reads its conditions,
lastScaleTime and desiredReplicas from the HPA object's status. The daemon does the same with the status
document it writes: a PrometheusAutoscaler's `status` (from `Target.stored`), or, for a file spec, the same
document in its ConfigMap (`autoscaler.kube.state.ConfigMapStateStore`). `status.behaviorState` carries the
behaviour state, so a new leader continues the stabilization windows where the old one left them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeGuard, cast

import msgspec
import structlog

from autoscaler.core.formats import parse_time
from autoscaler.core.state import (
    behavior_state_from_json,
    compact_recommendations,
    newest_recommendation_time,
    refresh_due,
    restore_conservatively,
)
from autoscaler.core.types import BehaviorState, Condition
from autoscaler.kube.status import pack_status, unpack_status

log = structlog.get_logger(__name__)
_DOCUMENT = msgspec.json.Decoder(dict[str, Any])


class StateStore(Protocol):
    """Status documents of specs that have no object of their own (file specs): `ConfigMapStateStore`."""

    def load(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def save(self, namespace: str, name: str, document: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True, slots=True)
class Memory:
    """One target's memory between ticks: the inputs of its next decision that the last one produced.

    `stored` is the status document as last stored, as compact JSON text packed (`kube.status.pack_status`,
    None: never stored), to write only what changed (`document` decodes it: ~0.2 KiB per target instead of ~1.1
    KiB of text or ~3.5 KiB of dicts), and `saved_at` the newest recommendation time in it (the decision it was
    saved from; None: no recommendation).
    """

    state: BehaviorState = field(default_factory=BehaviorState)
    conditions: tuple[Condition, ...] = ()
    last_scale_time: datetime | None = None
    desired_replicas: int | None = None
    current_replicas: int | None = None
    stored: bytes | None = None
    saved_at: datetime | None = None

    @property
    def document(self) -> dict[str, Any] | None:
        """The status document as last stored, decoded anew (None: never stored)."""
        if self.stored is None:
            return None
        text = unpack_status(self.stored)
        # msgspec: the same dicts and lists as json.loads in less than half the time (read for every target on
        # every tick); json.loads reads what msgspec refuses (NaN, a number past a float's range).
        try:
            return _DOCUMENT.decode(text)
        except msgspec.MsgspecError:
            return cast(dict[str, Any], json.loads(text))


def stored_status(document: Mapping[str, Any]) -> bytes:
    """A status document as `Memory.stored` keeps it: its compact JSON text, packed."""
    return pack_status(json.dumps(document, separators=(",", ":")))


def _conditions(items: Any) -> tuple[Condition, ...]:
    out = []
    for item in items or ():
        when = item.get("lastTransitionTime")
        out.append(
            Condition(
                type=str(item["type"]),
                status=str(item["status"]),
                reason=str(item.get("reason") or ""),
                message=str(item.get("message") or ""),
                last_transition_time=parse_time(when) if when else None,
            )
        )
    return tuple(out)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def memory_from_status(
    document: Mapping[str, Any] | None,
    *,
    where: str,
    now: datetime | None = None,
    refresh_seconds: float = 0.0,
    offset: timedelta = timedelta(0),
    packed: bytes | None = None,
) -> Memory:
    """The memory a stored status document gives back at `now`; an unreadable one is logged and starts afresh.

    The behaviour state is restored conservatively (`core.state.restore_conservatively`): the recommendations
    a lost process did not store (those before the target's next refresh, `write_reason`, at most
    `refresh_seconds` of them) are assumed to have been any of the stored values. Starting afresh is what the
    HPA does after every restart: the target's current size is its first recommendation, so nothing scales on
    a missing history; only the windows restart. `packed` is the document as `Memory.stored` keeps it when the
    caller has it so.
    """
    if not document:
        return Memory()
    try:
        stored = behavior_state_from_json(document.get("behaviorState"))
        state = (
            stored
            if now is None
            else restore_conservatively(stored, refresh_seconds=refresh_seconds, offset=offset, now=now)
        )
        state = compact_recommendations(state)  # as the daemon remembers it (a state stored before compaction)
        return Memory(
            state=state,
            conditions=_conditions(document.get("conditions")),
            last_scale_time=parse_time(document["lastScaleTime"]) if document.get("lastScaleTime") else None,
            desired_replicas=_count(document.get("desiredReplicas")),
            current_replicas=_count(document.get("currentReplicas")),
            stored=packed if packed is not None else stored_status(document),
            saved_at=newest_recommendation_time(stored),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        log.warning("stored_status_unreadable", where=where, error=f"{type(err).__name__}: {err}")
        return Memory(stored=packed if packed is not None else stored_status(document))


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """isinstance(value, Mapping), a dict (every decoded document's objects) answered without the ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


# Status fields whose change is written at once; the others (metric values, the TARGETS text, recommendation
# timestamps) wait for the refresh.
_BEHAVIOR_STATE = "behaviorState"
_SHADOW = "shadow"  # shadow mode's comparison: its counts at once, its observedAt with the refresh
_LAZY = frozenset({"currentMetrics", "targets", _BEHAVIOR_STATE, _SHADOW})


def _without_time(shadow: Any) -> Any:
    """Shadow mode's comparison without its observedAt (a new one every tick)."""
    return {k: v for k, v in shadow.items() if k != "observedAt"} if _is_mapping(shadow) else shadow


def _same_but_values(old: Any, new: Any) -> bool:
    """Whether two currentMetrics are equal but for their `current` values: the same metrics, each with a value
    in the same fields (which metrics have a value, not the values). Compared in place: this runs for every
    target on every tick."""
    if not (isinstance(old, list) and isinstance(new, list)) or len(old) != len(new):
        return bool(old == new)
    for before, after in zip(old, new, strict=True):
        if not (_is_mapping(before) and _is_mapping(after)) or before.keys() != after.keys():
            if before != after:
                return False
            continue
        for key, value in before.items():
            other = after[key]
            if _is_mapping(value) and _is_mapping(other):
                current, other_current = value.get("current"), other.get("current")
                if _is_mapping(current) and _is_mapping(other_current):
                    if current.keys() != other_current.keys() or value.keys() != other.keys():
                        return False
                    if any(value[k] != other[k] for k in value if k != "current"):
                        return False
                    continue
            if value != other:
                return False
    return True


def _recorded_values(state: Any) -> frozenset[Any] | None:
    recs = state.get("recommendations") if _is_mapping(state) else None
    if not isinstance(recs, list):
        return None
    return frozenset(r.get("replicas") for r in recs if _is_mapping(r))


def _failing(state: Mapping[str, Any]) -> frozenset[Any]:
    """The metrics with a failure count above 0 in a stored behaviour state."""
    items = state.get("metricHealth")
    if not isinstance(items, list):
        return frozenset()
    return frozenset(h.get("metric") for h in items if _is_mapping(h) and h.get("failures"))


def write_reason(
    saved: Mapping[str, Any] | None,
    wanted: Mapping[str, Any],
    *,
    saved_at: datetime | None,
    now: datetime,
    refresh_seconds: float,
    offset: timedelta = timedelta(0),
) -> str:
    """Why the status document `wanted` must be stored now, given the one stored (`saved`); "" when it may wait.

    At once: a first write, and any change of a field users or the HPA's semantics read (replicas, desired,
    conditions, lastScaleTime, observedGeneration, reference, which metrics have a value, scale events, the
    SET of recorded recommendation values, so a recommendation not stored always has a stored value, the idle
    stretch's start and the set of failing metrics). Metric
    values, the TARGETS text and recommendation timestamps alone wait for the target's next refresh after
    `saved_at` (the newest stored recommendation): `core.state.refresh_due`, at most `refresh_seconds` later,
    spread over the period by the target's `offset` (`core.state.refresh_offset`);
    `core.state.restore_conservatively` relies on exactly this.
    """
    if saved is None:
        return "first write"
    if saved == wanted:
        return ""
    for key in sorted(set(saved) | set(wanted)):
        if key not in _LAZY and saved.get(key) != wanted.get(key):
            return f"{key} changed"
    if not _same_but_values(saved.get("currentMetrics"), wanted.get("currentMetrics")):
        return "currentMetrics changed (a metric gained or lost its value)"
    if _without_time(saved.get(_SHADOW)) != _without_time(wanted.get(_SHADOW)):
        return "shadow changed"
    old, new = saved.get(_BEHAVIOR_STATE), wanted.get(_BEHAVIOR_STATE)
    old_state = old if _is_mapping(old) else {}
    new_state = new if _is_mapping(new) else {}
    for key in ("scaleUpEvents", "scaleDownEvents"):
        if old_state.get(key) != new_state.get(key):
            return f"{key} changed"
    if _recorded_values(old_state) != _recorded_values(new_state):
        return "the recorded recommendation values changed"
    # Extensions: scaleToZero's idle stretch, and which metrics are failing (fallback), are stored at once; a
    # failure count, a last good value and its time wait (restored older, they only delay a fallback).
    if old_state.get("idleSince") != new_state.get("idleSince"):
        return "idleSince changed"
    if _failing(old_state) != _failing(new_state):
        return "the failing metrics changed"
    if saved_at is None or now >= refresh_due(saved_at, refresh_seconds=refresh_seconds, offset=offset):
        return "refresh"
    return ""
