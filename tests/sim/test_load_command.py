"""`python -m autoscaler.sim.load` in its own process: URL on stdout, series for the emulator's pods, clean
SIGTERM exit, and clear errors for bad flags."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import workload


@pytest.fixture
def emulator() -> Iterator[EmulatedApiServer]:
    with EmulatedApiServer(crds=[], start_delay_seconds=0.1, ready_delay_seconds=0.1) as srv:
        srv.create(workload("Deployment", "web", replicas=2))
        yield srv


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "autoscaler.sim.load", *args]


def test_serves_the_pods_series_and_stops_on_sigterm(emulator: EmulatedApiServer, tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("timestamp_seconds,value\n0,1\n60,4\n")
    argv = _command("--api", emulator.url, "--listen", "127.0.0.1:0", "--workload", "default/Deployment/web:cpu,rps",
                    "--trace", str(trace), "--scale", "2", "--speed", "60", "--poll-interval", "0.2")  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics"), (
            proc.stderr.read() if proc.stderr else ""
        )
        deadline = time.monotonic() + 30
        while True:
            with urllib.request.urlopen(url, timeout=5) as response:
                families = {f.name: f for f in text_string_to_metric_families(response.read().decode())}
            pods = {s.labels["pod"] for s in families["container_cpu_usage_seconds"].samples}
            demand = [s.value for s in families["load_model_demand"].samples]
            if len(pods) == 2 and demand == [2.0]:  # a minute of trace in a second: the scaled peak
                break
            assert time.monotonic() < deadline, (pods, demand)
            time.sleep(0.1)  # polling interval, not a wait for time to pass
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--workload", "web:cpu", "--constant", "1"], "expected NS/KIND/NAME", id="bad workload"),
        pytest.param(["--workload", "d/Deployment/w:cpu", "--trace", "/nonexistent.csv"], "cannot read", id="no trace"),
        pytest.param(
            ["--workload", "d/Deployment/w:cpu", "--constant", "1", "--scale", "3"], "--trace only", id="scale"
        ),
        pytest.param(["--workload", "d/Deployment/w:cpu", "--constant", "-1"], "negative", id="negative demand"),
        pytest.param(["--workload", "d/Deployment/w:cpu", "--steps", "0:1,x"], "SECONDS:VALUE", id="bad steps"),
        pytest.param(["--workload", "d/Deployment/w:cpu", "--constant", "1", "--speed", "0"], "speed", id="speed 0"),
        pytest.param(
            ["--workload", "d/Deployment/w:cpu", "--constant", "1", "--listen", "9400"], "HOST:PORT", id="listen"
        ),
    ],
)
def test_bad_flags_exit_1_naming_the_problem(args: list[str], message: str) -> None:
    done = subprocess.run(_command("--api", "http://127.0.0.1:1", *args), capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: ") and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
