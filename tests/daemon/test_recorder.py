"""The flight recorder: the last N snapshots per target in memory, and as replayable files."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from autoscaler.core import types as core
from autoscaler.daemon.model import Target, TargetKey, TargetOutcome
from autoscaler.daemon.recorder import FlightRecorder
from autoscaler.replay import decide_snapshot, replay_data
from autoscaler.spec.render import decision as render_decision
from autoscaler.spec.snapshot import load_snapshot
from autoscaler.spec.snapshot_out import DecisionInputs, snapshot_json
from autoscaler.spec.validation import load_spec
from tests.daemon.fakes import outcome_for, shipped_snapshot, target

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def test_keeps_the_last_n_per_target_in_memory_and_on_disk(tmp_path: Path) -> None:
    recorder = FlightRecorder(2, str(tmp_path))
    web, api = target("web"), target("api")
    for i in range(5):  # five different outcomes (a steady run is folded: the next test)
        recorder.record(replace(outcome_for(web), error=f"failure {i}"), now=T0 + timedelta(seconds=i))
    recorder.record(outcome_for(api), now=T0)
    entries = recorder.snapshots(TargetKey("shop", "web"))["shop/web"]
    assert [e["time"] for e in entries] == ["2026-03-01T12:00:03Z", "2026-03-01T12:00:04Z"]
    assert entries[-1]["decision"]["desiredReplicas"] == 5
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [
        "shop_api_20260301T120000.000000Z.json",
        "shop_web_20260301T120003.000000Z.json",
        "shop_web_20260301T120004.000000Z.json",
    ]
    replayed = replay_data(json.loads((tmp_path / files[-1]).read_text()))
    assert replayed["desiredReplicas"] == entries[-1]["decision"]["desiredReplicas"]
    recorder.forget(TargetKey("shop", "web"))
    assert list(recorder.snapshots()) == ["shop/api"]


def test_a_run_of_one_outcome_keeps_its_newest_decision(tmp_path: Path) -> None:
    """Five ticks deciding the same (only readings and times differ) take one entry and one file, the newest,
    standing for five since the first; a different outcome after it is a new entry, the run's entry stays."""
    recorder = FlightRecorder(10, str(tmp_path))
    web = target("web")
    for i in range(5):
        recorder.record(outcome_for(web), now=T0 + timedelta(seconds=i))
    entries = recorder.snapshots(web.key)["shop/web"]
    assert [(e["time"], e["firstTime"], e["repeated"]) for e in entries] == [
        ("2026-03-01T12:00:04Z", "2026-03-01T12:00:00Z", 5),
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shop_web_20260301T120004.000000Z.json"]
    recorder.record(replace(outcome_for(web), wrote_scale=not entries[-1]["wroteScale"]), now=T0 + timedelta(seconds=5))
    recorder.record(outcome_for(web), now=T0 + timedelta(seconds=6))
    recorder.record(outcome_for(web), now=T0 + timedelta(seconds=7))
    entries = recorder.snapshots(web.key)["shop/web"]
    assert [(e["time"], e["firstTime"], e["repeated"]) for e in entries] == [
        ("2026-03-01T12:00:04Z", "2026-03-01T12:00:00Z", 5),
        ("2026-03-01T12:00:05Z", "2026-03-01T12:00:05Z", 1),
        ("2026-03-01T12:00:07Z", "2026-03-01T12:00:06Z", 2),
    ]
    assert len(list(tmp_path.iterdir())) == 3
    for entry in entries:
        assert replay_data(entry["snapshot"])["desiredReplicas"] == entry["decision"]["desiredReplicas"]


def test_an_outcome_without_a_snapshot_is_not_recorded(tmp_path: Path) -> None:
    from dataclasses import replace

    recorder = FlightRecorder(3, str(tmp_path))
    recorder.record(replace(outcome_for(target("web")), snapshot=None), now=T0)
    assert recorder.snapshots() == {}
    assert list(tmp_path.iterdir()) == []


def test_size_0_records_nothing(tmp_path: Path) -> None:
    recorder = FlightRecorder(0, str(tmp_path / "snapshots"))
    recorder.record(outcome_for(target("web")), now=T0)
    assert recorder.snapshots() == {}
    assert not (tmp_path / "snapshots").exists()


def _lazy_outcome(t: Target, *, metrics: tuple[core.MetricInput, ...] | None = None) -> tuple[TargetOutcome, Any]:
    """An outcome as the reconciler makes it: the decision and its inputs by reference (`DecisionInputs`)."""
    data = shipped_snapshot()
    snap = load_snapshot(data)
    spec_model = load_spec(data["autoscaler"]["spec"], scale_to_zero=False)
    inputs = DecisionInputs(
        name=t.key.name, namespace=t.key.namespace, spec_model=spec_model, scale=snap.scale, pods=snap.pods,
        metrics=snap.metrics if metrics is None else metrics, state=snap.state, settings=snap.settings,
        now=snap.now, conditions=snap.conditions, last_scale_time=snap.last_scale_time,
        previous_desired_replicas=snap.previous_desired_replicas,
    )  # fmt: skip
    decided = decide_snapshot(replace(snap, metrics=inputs.metrics))
    outcome = TargetOutcome(
        key=t.key, target=t, decision=decided, snapshot=inputs, wrote_scale=False, wrote_status=False,
        dry_run=False, seconds=0.01,
    )  # fmt: skip
    return outcome, inputs


def test_an_entry_kept_by_reference_is_served_as_the_eager_rendering_was(tmp_path: Path) -> None:
    """The recorder keeps the inputs, renders them when read and serves the decision they replay to: the same
    JSON as rendering the inputs and the daemon's decision when recorded, in memory and in the file."""
    recorder = FlightRecorder(3, str(tmp_path))
    web = target("web")
    outcome, inputs = _lazy_outcome(web)
    recorder.record(outcome, now=T0)
    (entry,) = recorder.snapshots(web.key)["shop/web"]
    assert outcome.decision is not None
    eager = {
        "time": "2026-03-01T12:00:00Z",
        "source": "test: web",
        "origin": "file",
        "dryRun": False,
        "wroteScale": False,
        "error": None,
        "snapshot": snapshot_json(
            name="web",
            namespace="shop",
            spec_model=inputs.spec_model,
            scale=inputs.scale,
            pods=inputs.pods,
            metrics=inputs.metrics,
            state=inputs.state,
            settings=inputs.settings,
            now=inputs.now,
            conditions=inputs.conditions,
            last_scale_time=inputs.last_scale_time,
            previous_desired_replicas=inputs.previous_desired_replicas,
        ),
        "decision": render_decision(outcome.decision, now=T0, name="web", namespace="shop", source="test: web"),
        "repeated": 1,
        "firstTime": "2026-03-01T12:00:00Z",
    }
    assert json.dumps(entry) == json.dumps(eager)
    (file,) = tmp_path.iterdir()
    assert json.loads(file.read_text()) == eager["snapshot"]
    assert replay_data(entry["snapshot"])["desiredReplicas"] == outcome.decision.desired_replicas


def test_a_decision_its_snapshot_does_not_replay_to_is_served_as_a_mismatch(tmp_path: Path) -> None:
    """The recorder keeps a fingerprint of the daemon's decision, not the decision: at each read it replays the
    snapshot and checks it. A decision the snapshot does not give again (here: made from other readings than the
    snapshot's) is served with `replayMismatch`, the daemon's desired count beside the replay's, and logged."""
    recorder = FlightRecorder(3, "")
    web = target("web")
    outcome, inputs = _lazy_outcome(web)
    assert outcome.decision is not None
    recorder.record(outcome, now=T0)
    other, _ = _lazy_outcome(web, metrics=(core.MetricFailure("no data"),))
    assert other.decision is not None and other.decision.desired_replicas != outcome.decision.desired_replicas
    recorder.record(replace(other, snapshot=inputs), now=T0 + timedelta(seconds=15))
    with capture_logs() as logs:
        faithful, mismatched = recorder.snapshots(web.key)["shop/web"]
    assert "replayMismatch" not in faithful
    assert faithful["decision"]["desiredReplicas"] == outcome.decision.desired_replicas
    assert mismatched["replayMismatch"] == {
        "desiredReplicas": other.decision.desired_replicas,
        "replayedDesiredReplicas": outcome.decision.desired_replicas,
    }
    assert [(line["event"], line["log_level"]) for line in logs] == [("snapshot_replay_mismatch", "error")]


def test_a_snapshot_that_cannot_be_rendered_is_logged_and_left_out(tmp_path: Path) -> None:
    """A metric failure without a message has no form in the snapshot format: that entry is not served nor
    written (one error line with the traceback); the target's other entries and other targets are."""
    recorder = FlightRecorder(3, str(tmp_path))
    web, api = target("web"), target("api")
    recorder.record(_lazy_outcome(web)[0], now=T0)
    with capture_logs() as logs:
        recorder.record(_lazy_outcome(web, metrics=(core.MetricFailure(""),))[0], now=T0 + timedelta(seconds=1))
        recorder.record(_lazy_outcome(api)[0], now=T0)
        served = recorder.snapshots()
    assert [e["time"] for e in served["shop/web"]] == ["2026-03-01T12:00:00Z"]
    assert len(served["shop/api"]) == 1
    assert [(line["event"], line["target"]) for line in logs] == [("snapshot_failed", "shop/web")] * 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "shop_api_20260301T120000.000000Z.json",
        "shop_web_20260301T120000.000000Z.json",
    ]


def test_a_folded_run_keeps_one_file_per_entry_and_a_failed_write_removes_nothing(tmp_path: Path) -> None:
    """With the directory full (size 2), a decision folded into the newest entry replaces that entry's file,
    the older entry's file stays; a write that fails (here its name is taken by a directory) removes nothing."""
    recorder = FlightRecorder(2, str(tmp_path))
    web = target("web")
    recorder.record(replace(outcome_for(web), error="first"), now=T0)
    recorder.record(outcome_for(web), now=T0 + timedelta(seconds=1))
    recorder.record(outcome_for(web), now=T0 + timedelta(seconds=2))  # folded into the second entry
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "shop_web_20260301T120000.000000Z.json",
        "shop_web_20260301T120002.000000Z.json",
    ]
    (tmp_path / "shop_web_20260301T120003.000000Z.json").mkdir()  # the next file cannot be written
    with capture_logs() as logs:
        recorder.record(outcome_for(web), now=T0 + timedelta(seconds=3))
    assert [line["event"] for line in logs] == ["snapshot_write_failed"]
    assert (tmp_path / "shop_web_20260301T120002.000000Z.json").is_file(), "the run's last good file stays"
    assert [e["repeated"] for e in recorder.snapshots(web.key)["shop/web"]] == [1, 3]


def test_a_replay_that_fails_is_served_as_a_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a replay raises, the entry is still served, its decision None and `replayMismatch` saying why."""
    from autoscaler.daemon import recorder as module

    recorder = FlightRecorder(3, "")
    web = target("web")
    outcome, _ = _lazy_outcome(web)
    recorder.record(outcome, now=T0)

    def broken(snap: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(module, "decide_snapshot", broken)
    with capture_logs() as logs:
        (entry,) = recorder.snapshots(web.key)["shop/web"]
    assert entry["decision"] is None and entry["snapshot"]["kind"]
    assert entry["replayMismatch"] == {
        "desiredReplicas": outcome.decision.desired_replicas if outcome.decision else None,
        "replayError": "ZeroDivisionError: division by zero",
    }
    assert [line["event"] for line in logs] == ["snapshot_replay_mismatch"]
