"""What a target remembers between ticks, and how it is read back from storage after a restart or a failover.

The HPA keeps the behaviour state (recommendations, scale events) in memory and reads its conditions,
lastScaleTime and desiredReplicas from the HPA object's status. The daemon does the same with the status
document it writes: a PrometheusAutoscaler's `status` (from `Target.stored`), or, for a file spec, the same
document in its ConfigMap (`autoscaler.kube.state.ConfigMapStateStore`). `status.behaviorState` carries the
behaviour state, so a new leader continues the stabilization windows where the old one left them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import structlog

from autoscaler.core.formats import parse_time
from autoscaler.core.state import behavior_state_from_json
from autoscaler.core.types import BehaviorState, Condition

log = structlog.get_logger(__name__)


class StateStore(Protocol):
    """Status documents of specs that have no object of their own (file specs): `ConfigMapStateStore`."""

    def load(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def save(self, namespace: str, name: str, document: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True, slots=True)
class Memory:
    """One target's memory between ticks: the inputs of its next decision that the last one produced.

    `document` is the status document as last stored (None: never stored), to write only what changed.
    """

    state: BehaviorState = field(default_factory=BehaviorState)
    conditions: tuple[Condition, ...] = ()
    last_scale_time: datetime | None = None
    desired_replicas: int | None = None
    current_replicas: int | None = None
    document: Mapping[str, Any] | None = None


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


def memory_from_status(document: Mapping[str, Any] | None, *, where: str) -> Memory:
    """The memory a stored status document gives back; an unreadable one is logged and starts afresh.

    Starting afresh is what the HPA does after every restart: the target's current size is its first
    recommendation, so nothing scales on a missing history; only the windows restart.
    """
    if not document:
        return Memory()
    try:
        return Memory(
            state=behavior_state_from_json(document.get("behaviorState")),
            conditions=_conditions(document.get("conditions")),
            last_scale_time=parse_time(document["lastScaleTime"]) if document.get("lastScaleTime") else None,
            desired_replicas=_count(document.get("desiredReplicas")),
            current_replicas=_count(document.get("currentReplicas")),
            document=document,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        log.warning("stored_status_unreadable", where=where, error=f"{type(err).__name__}: {err}")
        return Memory(document=document)
