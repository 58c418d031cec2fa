"""The flight recorder: the last N snapshots per target in memory, and as replayable files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from autoscaler.daemon.model import TargetKey
from autoscaler.daemon.recorder import FlightRecorder
from autoscaler.replay import replay_data
from tests.daemon.fakes import outcome_for, target

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def test_keeps_the_last_n_per_target_in_memory_and_on_disk(tmp_path: Path) -> None:
    recorder = FlightRecorder(2, str(tmp_path))
    web, api = target("web"), target("api")
    for i in range(5):
        recorder.record(outcome_for(web), now=T0 + timedelta(seconds=i))
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
