"""A real VictoriaMetrics single-node server for the backend tests: 127.0.0.1, a temporary data directory.

The binary comes from `.tools/victoria-metrics/usr/bin` (scripts/install-victoria-metrics.sh) or the PATH.
Samples go in through its Prometheus remote-write endpoint (`/api/v1/write`, the same request the Prometheus
tests send); `/internal/force_flush` then makes them searchable at once, instead of within a second.
`-search.latencyOffset` (30 s by default) would hide samples close to now, and the response cache could
serve an answer computed before a later push: both are off. Everything else is the server's default.
"""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from tests.metrics import remote_write
from tests.metrics.server import REPO, ServerProcess, answers, free_port, spawn

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


class VictoriaMetricsServer(ServerProcess):
    """A running VictoriaMetrics."""

    def push(self, series: Iterable[remote_write.TimeSeries]) -> None:
        """Write series by remote write and make them searchable before returning."""
        remote_write.push(self.url, series)
        with urllib.request.urlopen(f"{self.url}/internal/force_flush", timeout=10) as response:
            if response.status != 200:
                raise RuntimeError(f"force_flush answered {response.status}")


def start(
    binary: str, workdir: Path, *, deadline_seconds: float = 30.0, server_defaults: bool = False
) -> VictoriaMetricsServer:
    """Start the server and wait, polling with a deadline, until /health answers OK. `server_defaults` keeps the
    latency offset and the cache as a user's server has them (for a test of what they change)."""
    port = free_port()
    log_path = workdir / "victoria-metrics.log"
    argv = [binary, f"-httpListenAddr=127.0.0.1:{port}", f"-storageDataPath={workdir / 'data'}"]
    if not server_defaults:
        argv += ["-search.latencyOffset=0s", "-search.disableCache"]
    process, url = spawn(
        "victoria-metrics",
        argv,
        port=port,
        log_path=log_path,
        ready=answers("/health", b"OK"),
        deadline_seconds=deadline_seconds,
    )
    return VictoriaMetricsServer(process, url, log_path)
