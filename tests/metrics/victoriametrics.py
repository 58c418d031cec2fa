"""A real VictoriaMetrics single-node server for the backend tests: 127.0.0.1, a temporary data directory.

The binary comes from `.tools/victoria-metrics/usr/bin` (scripts/install-victoria-metrics.sh) or the PATH.
Samples go in through its Prometheus remote-write endpoint (`/api/v1/write`, the same request the Prometheus
tests send); `/internal/force_flush` then makes them searchable at once, instead of within a second.
`-search.latencyOffset` (30 s by default) would hide samples close to now, and the response cache could
serve an answer computed before a later push: both are off. Everything else is the server's default.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tests.metrics import remote_write
from tests.metrics.server import REPO, free_port

TOOLS = REPO / ".tools" / "victoria-metrics"


def find_binary() -> str | None:
    """The victoria-metrics binary: the project's tools directory first, then the PATH."""
    local = TOOLS / "usr" / "bin" / "victoria-metrics"
    if local.is_file():
        return str(local)
    return shutil.which("victoria-metrics")


def installed_version() -> str:
    """The Debian package version the install script recorded ("" when the binary came from the PATH)."""
    path = TOOLS / "VERSION"
    return path.read_text().strip() if path.is_file() else ""


@dataclass
class VictoriaMetricsServer:
    """A running server and how to reach it."""

    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def push(self, series: Iterable[remote_write.TimeSeries]) -> None:
        """Write series by remote write and make them searchable before returning."""
        remote_write.push(self.url, series)
        with urllib.request.urlopen(f"{self.url}/internal/force_flush", timeout=10) as response:
            if response.status != 200:
                raise RuntimeError(f"force_flush answered {response.status}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start(binary: str, workdir: Path, *, deadline_seconds: float = 30.0) -> VictoriaMetricsServer:
    """Start the server and wait, polling with a deadline, until /health answers OK."""
    port = free_port()
    log_path = workdir / "victoria-metrics.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"-httpListenAddr=127.0.0.1:{port}",
                f"-storageDataPath={workdir / 'data'}",
                "-search.latencyOffset=0s",
                "-search.disableCache",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = VictoriaMetricsServer(process=process, url=f"http://127.0.0.1:{port}", log_path=log_path)
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"victoria-metrics exited with {process.returncode}: {log_path.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/health", timeout=1) as response:
                if response.status == 200 and response.read().strip() == b"OK":
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.02)  # polling interval, not a wait for time to pass
    server.stop()
    raise RuntimeError(f"victoria-metrics not ready within {deadline_seconds} s: {log_path.read_text()[-2000:]}")
