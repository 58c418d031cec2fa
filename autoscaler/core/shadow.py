"""Shadow mode: this autoscaler's decision beside the count the autoscaler it would replace wants.

The daemon reads that count (a HorizontalPodAutoscaler's `status.desiredReplicas`, or that of the HPA KEDA
made for a ScaledObject) and passes it to `decide` as a `ShadowReading`; the decision carries the comparison
for the status and the metrics (docs/migration.md). A spec in shadow mode never writes the scale (it runs
as dry-run). Standard library only; no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ShadowReading:
    """What the shadowed autoscaler wants: `desired_replicas`, or `error` when it could not be read.

    `source` names the object read ("HorizontalPodAutoscaler web", "ScaledObject worker (HPA keda-hpa-worker)");
    `observed_at` is when it was read (the tick's `now`).
    """

    source: str
    observed_at: datetime
    desired_replicas: int | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class ShadowComparison:
    """Ours beside theirs: `difference` is ours minus theirs (None when either is unknown)."""

    source: str
    observed_at: datetime
    desired_replicas: int | None
    theirs: int | None
    difference: int | None
    error: str = ""


def compare(desired_replicas: int | None, reading: ShadowReading) -> ShadowComparison:
    """The comparison of this decision's desired count with the shadowed autoscaler's."""
    theirs = reading.desired_replicas if not reading.error else None
    difference = None if desired_replicas is None or theirs is None else desired_replicas - theirs
    return ShadowComparison(
        source=reading.source,
        observed_at=reading.observed_at,
        desired_replicas=desired_replicas,
        theirs=theirs,
        difference=difference,
        error=reading.error,
    )
