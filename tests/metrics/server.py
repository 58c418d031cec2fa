"""A real Prometheus server for the tests: started on 127.0.0.1 with a temporary TSDB, stopped after.

The binary comes from `.tools/prometheus/usr/bin` (scripts/install-prometheus.sh) or the PATH. Data is
pushed by remote write (the receiver is on; the out-of-order window lets tests write any recent time).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = """\
global:
  scrape_interval: 1h
storage:
  tsdb:
    out_of_order_time_window: 30d
"""


def find_binary(name: str = "prometheus") -> str | None:
    """A Prometheus tool (`prometheus`, `promtool`): the project's tools directory first, then the PATH."""
    local = REPO / ".tools" / "prometheus" / "usr" / "bin" / name
    if local.is_file():
        return str(local)
    return shutil.which(name)


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    """A server process of the tests, how to reach it and where it logs."""

    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class PrometheusServer(ServerProcess):
    """A running Prometheus."""


def spawn(
    name: str,
    argv: list[str],
    *,
    port: int,
    log_path: Path,
    ready: Callable[[str], bool],
    deadline_seconds: float,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server on 127.0.0.1:`port` and poll `ready(url)` with a deadline; a server that exits or is not
    ready in time fails the test with the end of its log (never a skip)."""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}: {log_path.read_text()[-2000:]}")
        try:
            if ready(url):
                return process, url
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.02)  # polling interval, not a wait for time to pass
    ServerProcess(process, url, log_path).stop()
    raise RuntimeError(f"{name} not ready within {deadline_seconds} s: {log_path.read_text()[-2000:]}")


def answers(path: str, body: bytes | None = None) -> Callable[[str], bool]:
    def ready(url: str) -> bool:
        with urllib.request.urlopen(f"{url}{path}", timeout=1) as response:
            return bool(response.status == 200 and (body is None or response.read().strip() == body))

    return ready


def start(binary: str, workdir: Path, *, deadline_seconds: float = 30.0) -> PrometheusServer:
    """Start Prometheus and wait, polling with a deadline, until /-/ready answers 200."""
    config = workdir / "prometheus.yml"
    config.write_text(CONFIG)
    port = free_port()
    log_path = workdir / "prometheus.log"
    argv = [
        binary,
        f"--config.file={config}",
        f"--web.listen-address=127.0.0.1:{port}",
        f"--storage.tsdb.path={workdir / 'tsdb'}",
        "--web.enable-remote-write-receiver",
    ]
    process, url = spawn(
        "prometheus", argv, port=port, log_path=log_path, ready=answers("/-/ready"), deadline_seconds=deadline_seconds
    )
    return PrometheusServer(process, url, log_path)
