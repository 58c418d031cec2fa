"""The values passed between the daemon's parts: a target to reconcile, and what one tick made of it.

Spec sources (the custom resource, spec files) produce `Target`s; the reconciler turns a tick's due targets
into a `TickReport`; the loop reports it (logs, /metrics, the flight recorder). Plain frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from autoscaler.core.decision import Decision
from autoscaler.spec.objects import Autoscaler


class Origin(StrEnum):
    """Where a spec was read: a PrometheusAutoscaler object in the cluster, or a document of a spec file."""

    RESOURCE = "resource"
    FILE = "file"


@dataclass(frozen=True, slots=True, order=True)
class TargetKey:
    """An autoscaler's identity: its namespace and name (a file spec without a namespace is in "default")."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Target:
    """One autoscaler spec to reconcile, as its source last read it.

    `source` names where it was read ("PrometheusAutoscaler shop/web", "specs/web.yaml: document 2");
    `stored` is the custom resource as last seen (its status and resourceVersion), None for a file spec;
    `sync_period_seconds` and `dry_run` are the spec's own, or the daemon's defaults.
    """

    key: TargetKey
    origin: Origin
    autoscaler: Autoscaler
    source: str
    sync_period_seconds: float
    dry_run: bool
    uid: str = ""
    generation: int | None = None
    stored: Mapping[str, Any] | None = None


class Snapshot(Protocol):
    """A decision's inputs, rendered on demand in `autoscaler replay`'s format (`snapshot_out.DecisionInputs`)."""

    def json(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    """What one tick did for one target.

    `decision` is the core's (None when no decision could be made, e.g. the spec's target kind is unknown);
    `error` and `error_type` name a failure outside the core ("" when none); `snapshot` holds the decision's
    inputs (by reference), whose `json()` is `autoscaler replay`'s format (docs/snapshot.md), replaying to
    `decision`: rendered only when someone reads it.
    """

    key: TargetKey
    target: Target
    decision: Decision | None
    snapshot: Snapshot | None
    wrote_scale: bool
    wrote_status: bool
    dry_run: bool
    seconds: float
    error: str = ""
    error_type: str = ""


@dataclass(frozen=True, slots=True)
class TickReport:
    """One tick: when it started, each due target's outcome, and what it cost."""

    started: datetime
    outcomes: tuple[TargetOutcome, ...]
    seconds: float
    metric_queries: int = 0
    metric_seconds: float = 0.0
    # Each outcome was recorded and reported (log line, metrics) as it was made, by the reconciler's hook.
    recorded: bool = False
