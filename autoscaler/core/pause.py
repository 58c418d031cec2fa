"""Pausing a target: an annotation asks that metrics leave it alone (hold), or hold it at a given count.

`autoscaler.dev/paused: "true"` holds the target at its current count; `autoscaler.dev/paused-replicas: "N"`
scales it to N (once it differs) and holds it there. Either may sit on the target workload or on the
autoscaler's own metadata (the custom resource or the spec file's document). A value that does not read is a
problem named with the annotation and the value: the target is held, never scaled on metrics as if the
annotation were absent. While paused, the metrics are not computed; ScalingActive is False with reason
ScalingPaused, and a Normal Event says when pausing starts and when it ends (docs/spec.md, "Pausing").
Standard library only; no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from autoscaler.core.events import Event, EventReason, EventType
from autoscaler.core.types import Condition, ConditionType

PAUSED = "autoscaler.dev/paused"
PAUSED_REPLICAS = "autoscaler.dev/paused-replicas"
PAUSE_ANNOTATIONS = (PAUSED, PAUSED_REPLICAS)
SCALING_PAUSED = "ScalingPaused"
INVALID_PAUSE = "InvalidPauseAnnotation"
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Pause:
    """A pause request: hold (`replicas` None) or hold at `replicas`; `problem` names a value that did not read.

    `source` names the object that carries the annotation ("Deployment web", "PrometheusAutoscaler shop/web").
    """

    source: str
    replicas: int | None = None
    problem: str = ""


@dataclass(frozen=True, slots=True)
class Held:
    """What a paused reconcile decides: the count, why, the ScalingActive condition and the Event to send."""

    desired: int
    rescale_reason: str
    condition: Condition
    events: tuple[Event, ...]
    summary: str


def pause_from_annotations(annotations: Mapping[str, str], *, source: str) -> Pause | None:
    """The pause an object's annotations ask for, None when they ask for none.

    `paused` takes "true" or "false" exactly; `paused-replicas` a decimal count from 0 to 2147483647 and
    pauses whatever `paused` says, except "false", which contradicts it and is a problem.
    """
    paused = annotations.get(PAUSED)
    replicas = annotations.get(PAUSED_REPLICAS)
    problems: list[str] = []
    if paused is not None and paused not in ("true", "false"):
        problems.append(f'annotation {PAUSED}: "{paused}" is not "true" or "false"')
    count: int | None = None
    if replicas is not None:
        if replicas.isascii() and replicas.isdigit() and int(replicas) <= _INT32_MAX:
            count = int(replicas)
        else:
            problems.append(f'annotation {PAUSED_REPLICAS}: "{replicas}" is not a replica count (0 to {_INT32_MAX})')
        if paused == "false":
            problems.append(f'annotation {PAUSED}: "false" contradicts {PAUSED_REPLICAS}: "{replicas}"')
    if problems:
        return Pause(source=source, problem=f"{source}: " + "; ".join(problems))
    if count is not None:
        return Pause(source=source, replicas=count)
    if paused == "true":
        return Pause(source=source)
    return None


def combine(requests: Sequence[Pause | None]) -> Pause | None:
    """One pause from several objects (the spec's first): a problem wins, then a count, then a plain hold."""
    found = [r for r in requests if r is not None]
    chosen = next((r for r in found if r.problem), None) or next((r for r in found if r.replicas is not None), None)
    return chosen or (found[0] if found else None)


def was_paused(conditions: Sequence[Condition]) -> bool:
    """Whether the previous reconcile held the target paused (its ScalingActive condition says so)."""
    active = next((c for c in conditions if c.type == ConditionType.SCALING_ACTIVE), None)
    return active is not None and active.status == "False" and active.reason in (SCALING_PAUSED, INVALID_PAUSE)


def hold(pause: Pause, *, current: int, conditions: Sequence[Condition]) -> Held:
    """A paused reconcile: the count to keep or reach, its condition, and the Event when pausing starts."""
    active = next((c for c in conditions if c.type == ConditionType.SCALING_ACTIVE), None)
    before = active is not None and active.status == "False" and active.reason == SCALING_PAUSED
    if pause.problem:
        message = f"scaling is held: {pause.problem}"
        event = Event(EventType.WARNING, EventReason.INVALID_PAUSE_ANNOTATION, message)
        condition = Condition(ConditionType.SCALING_ACTIVE, "False", INVALID_PAUSE, message)
        # A bad value is reported every time it is read, as a metric's failure is.
        return Held(current, "", condition, (event,), f"hold at {current}: {pause.problem}")
    if pause.replicas is None:
        message = f"scaling is paused by the annotation {PAUSED} on {pause.source}: the replica count is left alone"
        summary = f"paused at {current} (annotation {PAUSED} on {pause.source})"
        desired, reason = current, ""
    else:
        message = (
            f"scaling is paused at {pause.replicas} replicas by the annotation {PAUSED_REPLICAS} on {pause.source}"
        )
        desired = pause.replicas
        reason = f"paused at {pause.replicas} replicas by the annotation {PAUSED_REPLICAS} on {pause.source}"
        verdict = f"scale {current} -> {desired}" if desired != current else f"paused at {current}"
        summary = f"{verdict} (annotation {PAUSED_REPLICAS} on {pause.source})"
    condition = Condition(ConditionType.SCALING_ACTIVE, "False", SCALING_PAUSED, message)
    events = () if before else (Event(EventType.NORMAL, EventReason.SCALING_PAUSED, message),)
    return Held(desired, reason, condition, events, summary)


def resumed(conditions: Sequence[Condition]) -> Event | None:
    """The Event when a reconcile finds no pause after a paused one: scaling on metrics again."""
    if not was_paused(conditions):
        return None
    return Event(EventType.NORMAL, EventReason.SCALING_RESUMED, "scaling resumed: the pause annotation is gone")
