"""Stand-ins for the daemon tests: targets, a real decision from a shipped snapshot, a fake reconciler."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from autoscaler.daemon.model import Origin, Target, TargetKey, TargetOutcome, TickReport
from autoscaler.replay import decide_snapshot
from autoscaler.spec.objects import load_autoscaler
from autoscaler.spec.snapshot import load_snapshot

SNAPSHOTS = Path(__file__).resolve().parents[2] / "docs" / "snapshots"


def spec_object(name: str, *, namespace: str = "shop", target: str = "web", max_replicas: int = 10) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": max_replicas,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
        },
    }


def target(name: str, *, namespace: str = "shop", period: float = 15.0, origin: Origin = Origin.FILE) -> Target:
    autoscaler = load_autoscaler(spec_object(name, namespace=namespace), scale_to_zero=False)
    return Target(
        key=TargetKey(namespace, name),
        origin=origin,
        autoscaler=autoscaler,
        source=f"test: {name}",
        sync_period_seconds=period,
        dry_run=False,
    )


def shipped_snapshot(name: str = "resource-cpu-utilization.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SNAPSHOTS / name).read_text())
    return data


@dataclass(frozen=True)
class FixedSnapshot:
    """A snapshot already in replay's format (a shipped file), as an outcome carries one: `json()` gives it."""

    data: dict[str, Any]

    def json(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.data))


def outcome_for(t: Target, *, snapshot: dict[str, Any] | None = None, error_type: str = "") -> TargetOutcome:
    """An outcome carrying a real decision: the shipped CPU snapshot, decided by the core."""
    data = snapshot or shipped_snapshot()
    snap = load_snapshot(data)
    decision = decide_snapshot(snap)
    return TargetOutcome(
        key=t.key, target=t, decision=decision, snapshot=FixedSnapshot(data), wrote_scale=decision.rescale,
        wrote_status=False, dry_run=t.dry_run, seconds=0.01, error="boom" if error_type else "", error_type=error_type,
    )  # fmt: skip


@dataclass
class FakeReconciler:
    """Records each call; answers with a real decision per target (or blocks, to test shutdown)."""

    calls: list[tuple[datetime, list[TargetKey], bool]] = field(default_factory=list)
    forgotten: list[TargetKey | None] = field(default_factory=list)
    block: threading.Event | None = None  # when set: reconcile waits until this is set
    entered: threading.Event = field(default_factory=threading.Event)
    outcome: Callable[[Target], TargetOutcome] = outcome_for

    def reconcile(self, targets: Sequence[Target], *, now: datetime, write: bool = True) -> TickReport:
        self.calls.append((now, [t.key for t in targets], write))
        self.entered.set()
        if self.block is not None:
            self.block.wait()
        return TickReport(started=now, outcomes=tuple(self.outcome(t) for t in targets), seconds=0.02, metric_queries=1)

    def forget(self, key: TargetKey | None = None) -> None:
        self.forgotten.append(key)


class FakeClock:
    """A wall clock that moves only when told."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        from datetime import timedelta

        self.now += timedelta(seconds=seconds)


class StaticSource:
    """A spec source whose targets the test sets."""

    def __init__(self, targets: Sequence[Target] = (), origin: Origin = Origin.FILE) -> None:
        self.targets = list(targets)
        self.origin = origin

    def refresh(self) -> list[Target]:
        return list(self.targets)

    @property
    def loaded(self) -> bool:
        return True

    def counts(self) -> dict[str, int]:
        return {"valid": len(self.targets), "invalid": 0}
