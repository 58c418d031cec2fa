"""The daemon process scales a Deployment up when its load rises and down only after the stabilization window,
and its flight recorder replays to the decisions it made."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Stack, log_time, spec_document, utc_now, write_spec
from tests.e2e.stack import DaemonProcess, scale_writes, wait_for
from tests.sim.conftest import NS

WINDOW = 8  # seconds of scale-down stabilization
SYNC = 1.0
SLACK = 0.2  # seconds between a tick's time and the start of its reconcile (reading the specs), at most


@dataclass
class Run:
    stack: Stack
    daemon: DaemonProcess
    address: str
    recorder_dir: Path
    fell_at: datetime  # the moment the load fell
    writes: list[Any]  # the scale writes of the run (audit records)


def writes_of(stack: Stack, name: str) -> list[Any]:
    return scale_writes(stack.emulator.audit.records(name=name, namespace=NS))


def replicas_written(record: Any) -> int:
    return int(record.body_json()["spec"]["replicas"])


@pytest.fixture(scope="module")
def run(emulator: Any, generator: Any, prometheus: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """One run: 2 pods at target, the load triples (scale up to 6), then falls to a tenth (down to 1)."""
    tmp = tmp_path_factory.mktemp("scaling")
    stack = Stack(emulator, generator, prometheus, tmp)
    demand = stack.deploy("updown", replicas=2, load=20)
    write_spec(tmp / "specs", "updown", spec_document("updown", window=WINDOW))
    recorder_dir = tmp / "flight"
    daemon, address = stack.daemon(
        "updown", tmp / "specs", flightRecorder={"size": 200, "directory": str(recorder_dir)}
    )
    daemon.start()
    try:
        wait_for(
            lambda: [d for d in daemon.events("decision", target=f"{NS}/updown") if d.get("metrics")],
            deadline_seconds=30,
            what="a decision with a metric reading",
        )
        demand.value = 60  # 30 requests/s per pod against 10: 6 pods
        wait_for(
            lambda: stack.replicas("updown") >= 6, deadline_seconds=30, what="scaled up to 6 (or 7: the rate lags)"
        )
        wait_for(
            lambda: [d for d in daemon.events("decision", target=f"{NS}/updown") if d.get("current", 0) >= 6],
            deadline_seconds=30,
            what="a decision at 6 replicas",
        )
        fell_at = utc_now()
        demand.value = 6  # 1 request/s per pod: 1 pod, once the window has passed
        wait_for(lambda: stack.replicas("updown") == 1, deadline_seconds=WINDOW + 30, what="scaled down to 1")
        # A tick's decision lines are written at the tick's end (logs.batched_lines), after its scale writes.
        wait_for(
            lambda: [d for d in daemon.events("decision", target=f"{NS}/updown", wrote=True) if d["desired"] == 1],
            deadline_seconds=15,
            what="the scale-down's decision line",
        )
        assert daemon.alive(), daemon.tail()
        yield Run(stack, daemon, address, recorder_dir, fell_at, writes_of(stack, "updown"))
    finally:
        if daemon.alive():
            daemon.terminate()


def test_scales_up_when_the_load_rises_and_down_only_after_the_window(run: Run) -> None:
    ups = [w for w in run.writes if w.time < run.fell_at]
    downs = [w for w in run.writes if w.time >= run.fell_at]
    counts = [replicas_written(w) for w in run.writes]
    up, down = counts[: len(ups)], counts[len(ups) :]
    # Up as the rate window fills (2 -> 4 -> 6, say), then down only, to 1.
    assert up and up == sorted(set(up)) and up[-1] in (6, 7), counts
    assert down and down == sorted(set(down), reverse=True) and down[-1] == 1, counts
    decisions = run.daemon.events("decision", target=f"{NS}/updown")
    # The daemon saw the low load and held: the window, not a slow reading, waited.
    held = [
        d
        for d in decisions
        if d.get("reason") == "ScaleDownStabilized" and d.get("current", 0) >= 6 and log_time(d) >= run.fell_at
    ]
    assert held, "no decision after the fall held a scale-down in the window"
    # Every decision before the fall recommended 6 or more (the load was 6 pods' worth), and a recommendation
    # stays in the window for WINDOW seconds from its tick (which began `seconds` before the decision's line): no
    # count below 6 can be written earlier than that. Timed from the daemon's own ticks, not from the fall: a
    # tick that ran late under load made the last of them more than a sync period before it.
    before = [d for d in decisions if log_time(d) < run.fell_at and d.get("current", 0) >= 6]
    assert before, "no decision at 6 or more before the fall"
    high_at = log_time(before[-1]) - timedelta(seconds=before[-1]["seconds"])
    below_six = [w for w in downs if replicas_written(w) < 6]
    assert below_six, counts
    assert below_six[0].time >= high_at + timedelta(seconds=WINDOW - SLACK), (below_six[0].time, high_at, run.fell_at)
    wrote = [d for d in run.daemon.events("decision", target=f"{NS}/updown") if d.get("wrote")]
    assert [d["desired"] for d in wrote] == [replicas_written(w) for w in run.writes]


def test_flight_recorder_snapshots_replay_to_the_decisions_the_daemon_made(run: Run) -> None:
    status, body = run.daemon.get(run.address, f"/debug/snapshots?target={NS}/updown")
    assert status == 200, body
    served = json.loads(body)
    entries = served if isinstance(served, list) else served[f"{NS}/updown"]
    files = sorted(run.recorder_dir.glob(f"{NS}_updown_*.json"))
    assert len(entries) >= 3 and len(files) == len(entries), (len(entries), len(files))
    # Each entry's decision is its snapshot replayed, checked against the fingerprint of what the daemon decided
    # (its outcome: counts, conditions, proposals): no entry differs.
    assert [e.get("replayMismatch") for e in entries] == [None] * len(entries)
    # Several decisions over the run: at least the scale-up, a held scale-down and the scale-down itself.
    decisions = [e["decision"] for e in entries]
    desired = {d["desiredReplicas"] for d in decisions}
    assert 1 in desired and desired & {6, 7}, desired

    snapshot_files = []
    for i, entry in enumerate(entries):
        path = run.recorder_dir.parent / f"served-{i}.json"
        path.write_text(json.dumps(entry["snapshot"]))
        snapshot_files.append(path)
    replayed = replay([*snapshot_files, *files])
    from_files = [json.loads(f.read_text()) for f in files]
    expected = decisions + [decision_of(run, snap) for snap in from_files]
    assert len(replayed) == len(expected)
    for got, want in zip(replayed, expected, strict=True):
        assert got["desiredReplicas"] == want["desiredReplicas"]
        assert reasons(got) == reasons(want)


def decision_of(run: Run, snapshot: dict[str, Any]) -> dict[str, Any]:
    """The decision the daemon recorded with this snapshot (the served entry holding the same snapshot)."""
    _, body = run.daemon.get(run.address, f"/debug/snapshots?target={NS}/updown")
    served = json.loads(body)
    entries = served if isinstance(served, list) else served[f"{NS}/updown"]
    for entry in entries:
        if entry["snapshot"] == snapshot:
            return dict(entry["decision"])
    raise AssertionError(f"a snapshot file the daemon no longer serves: {json.dumps(snapshot)[:300]}")


def reasons(decision: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["type"], c["status"], c["reason"]) for c in decision.get("conditions", [])]


def replay(paths: list[Path]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "autoscaler", "replay", "-o", "jsonl", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
