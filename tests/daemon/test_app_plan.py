"""`autoscaler plan`: one evaluation of every target with write=False, as a table or JSON."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from autoscaler.daemon.app import Daemon
from autoscaler.daemon.model import Target, TargetOutcome
from autoscaler.daemon.observe import Observer
from autoscaler.daemon.plan import plan
from autoscaler.daemon.recorder import FlightRecorder
from tests.daemon.fakes import FakeReconciler, StaticSource, outcome_for, shipped_snapshot, target

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


def _missing_deployment(t: Target) -> TargetOutcome:
    """The api target's Deployment does not exist (FailedGetScale); web decides."""
    if t.key.name != "api":
        return outcome_for(t)
    data = shipped_snapshot()
    data["scale"] = {"error": 'deployments.apps "api" not found'}
    return outcome_for(t, snapshot=data)


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_target_that_could_not_be_evaluated_is_shown_and_exits_1(output: str) -> None:
    out = io.StringIO()
    assert plan(_daemon(FakeReconciler(outcome=_missing_deployment)), output=output, out=out, clock=lambda: T0) == 1
    message = 'unable to get the target\'s current scale: deployments.apps "api" not found'
    if output == "json":
        rows = {r["target"]: r for r in json.loads(out.getvalue())}
        assert (rows["shop/api"]["error"], rows["shop/api"]["errorType"]) == (message, "scale")
        assert (rows["shop/web"]["error"], rows["shop/web"]["errorType"]) == (None, None)
        return
    lines = out.getvalue().splitlines()
    assert lines[1].split()[0] == "shop/api" and lines[1].endswith("FailedGetScale")
    assert lines[2] == f"  error (scale): {message}"
    assert lines[3].split()[0] == "shop/web" and len(lines) == 4
