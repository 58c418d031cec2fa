"""`make demo`'s driver, run for real for a short DURATION: the emulator, the load model, a real Prometheus and
the daemon, as a user runs it. Asserted from its outputs: the web service went up and down, the queue worker
from zero and back to zero, the chart is a PNG, the decision log has lines, nothing it started survives.
"""

from __future__ import annotations

import csv
import json
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DURATION = 75  # seconds: a whole cycle with config/demo's shortened windows (the test takes about 90 s)


@dataclass(frozen=True)
class DemoRun:
    status: int
    stdout: str
    stderr: str
    output: Path
    survivors: list[str]  # `ps` lines of processes still in the driver's process group after it exited

    def samples(self) -> list[dict[str, str]]:
        with (self.output / "samples.csv").open(newline="") as handle:
            return list(csv.DictReader(handle))

    def explain(self) -> str:
        return f"status {self.status}\nstdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-2000:]}"


def process_group(pgid: int) -> list[str]:
    """The `ps` lines of the processes whose process group is `pgid`."""
    listing = subprocess.run(["ps", "-eo", "pid=,pgid=,args="], capture_output=True, text=True, check=True)
    out = []
    for line in listing.stdout.splitlines():
        fields = line.split(None, 2)
        if len(fields) >= 2 and fields[1] == str(pgid):
            out.append(line.strip())
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """One demo run for the module: its own process group, so `ps` can tell whatever it left behind."""
    output = tmp_path_factory.mktemp("demo") / "out"
    argv = [sys.executable, "-m", "autoscaler.demo", "--duration", str(DURATION), "--output", str(output)]
    process = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=DURATION + 240)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"the demo did not end within {DURATION + 240} s:\n{stdout[-4000:]}\n{stderr[-2000:]}")
    return DemoRun(process.returncode, stdout, stderr, output, process_group(process.pid))


def test_the_demo_ends_by_itself_and_leaves_no_process(run: DemoRun) -> None:
    assert run.status == 0, run.explain()
    assert run.survivors == [], f"still running after the demo ended: {run.survivors}"
    assert "stopped the daemon, Prometheus, the load model and the emulator" in run.stdout, run.explain()


def test_the_table_has_one_line_per_sync_period(run: DemoRun) -> None:
    lines = [line for line in run.stdout.splitlines() if line.strip().split(" ", 1)[0].endswith("s")]
    rows = [line for line in lines if line.strip()[:-1].split("s", 1)[0].isdigit()]
    assert len(rows) >= DURATION // 2 - 2, run.explain()  # one every 2 s
    assert any("cpu " in row and "/60%" in row for row in rows), run.explain()


def test_the_web_service_scaled_up_then_down(run: DemoRun) -> None:
    replicas = [int(row["web_replicas"]) for row in run.samples()]
    assert replicas, run.explain()
    top = max(replicas)
    peak_at = replicas.index(top)
    assert top > replicas[0], f"never scaled up: {replicas}"
    assert min(replicas[peak_at:]) < top, f"never scaled down after the peak: {replicas}"


def test_the_chart_is_a_png(run: DemoRun) -> None:
    data = (run.output / "chart.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    chunks = []
    at = 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind!r}"
        chunks.append(kind)
        at += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks, chunks
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 400 and height >= 300, (width, height)


def test_the_decision_log_has_the_web_decisions(run: DemoRun) -> None:
    lines = [json.loads(line) for line in (run.output / "decisions.jsonl").read_text().splitlines()]
    web = [line for line in lines if line["target"] == "default/web"]
    assert len(web) >= DURATION // 2 - 2, f"{len(web)} decisions of default/web"
    assert all(line["event"] == "decision" for line in lines)
    assert any(line["wrote"] and line["desired"] > line["current"] for line in web), "no scale-up written"
    assert any(line["wrote"] and line["desired"] < line["current"] for line in web), "no scale-down written"
    assert sorted(p.name for p in (run.output / "snapshots").iterdir()), "no replayable snapshot written"


def test_the_queue_worker_went_from_zero_and_back_to_zero(run: DemoRun) -> None:
    rows = run.samples()
    replicas = [int(row["worker_replicas"]) for row in rows]
    first_zero = replicas.index(0) if 0 in replicas else None
    assert first_zero is not None, f"the worker never went to zero: {replicas}"
    woke = next((i for i in range(first_zero, len(replicas)) if replicas[i] > 0), None)
    assert woke is not None, f"the worker never left zero: {replicas}"
    assert 0 in replicas[woke:], f"the worker did not go back to zero: {replicas}"
    assert max(float(row["queue"]) for row in rows[first_zero:]) > 5, "no backlog woke it"


def test_ctrl_c_stops_everything_and_still_writes_the_outputs(tmp_path: Path) -> None:
    """A Ctrl-C in the terminal: SIGINT to the whole foreground process group, the driver's children included."""
    output = tmp_path / "out"
    argv = [sys.executable, "-m", "autoscaler.demo", "--duration", "0", "--output", str(output)]
    process = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or ()], daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        while len([line for line in seen if line.strip().startswith(("0s", "2s", "4s"))]) < 3:
            seen.append(lines.get(timeout=120))  # a bound on a hung start, not a wait for time to pass
        assert len(process_group(process.pid)) >= 3, process_group(process.pid)  # driver, prometheus, daemon
        os.killpg(process.pid, signal.SIGINT)
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    reader.join(timeout=10)
    while not lines.empty():
        seen.append(lines.get())
    text = "".join(seen)
    assert status == 0, text
    assert "stopped by SIGINT" in text, text
    assert process_group(process.pid) == [], text
    assert (output / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (output / "decisions.jsonl").read_text().strip(), text
