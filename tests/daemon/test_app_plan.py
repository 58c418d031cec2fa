"""`autoscaler plan`: one evaluation of every target with write=False, as a table or JSON."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

from autoscaler.daemon.app import Daemon
from autoscaler.daemon.observe import Observer
from autoscaler.daemon.plan import plan
from autoscaler.daemon.recorder import FlightRecorder
from tests.daemon.fakes import FakeReconciler, StaticSource, target

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def _daemon(reconciler: FakeReconciler) -> Daemon:
    return Daemon(
        reconciler=reconciler, sources=[StaticSource([target("web"), target("api", period=300)])],
        observer=Observer(), recorder=FlightRecorder(3), tick_seconds=1.0, shutdown_grace_seconds=1.0,
    )  # fmt: skip


def test_plan_evaluates_every_target_once_without_writing() -> None:
    reconciler = FakeReconciler()
    out = io.StringIO()
    assert plan(_daemon(reconciler), out=out, clock=lambda: T0) == 0
    assert reconciler.calls == [(T0, [target("api").key, target("web").key], False)]
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["TARGET", "REFERENCE", "CURRENT", "DESIRED", "METRICS", "REASON"]
    assert lines[2].split()[:4] == ["shop/web", "Deployment/web", "3", "5"]
    assert "=90%/60%→5" in lines[2] and lines[2].endswith("SucceededRescale")


def test_plan_as_json() -> None:
    out = io.StringIO()
    assert plan(_daemon(FakeReconciler()), output="json", out=out, clock=lambda: T0) == 0
    rows = json.loads(out.getvalue())
    assert [r["target"] for r in rows] == ["shop/api", "shop/web"]
    assert rows[1]["reference"] == "Deployment/web" and rows[1]["decision"]["desiredReplicas"] == 5
