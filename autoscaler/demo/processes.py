"""The demo's child processes: started with their output in a log file, waited for, and always stopped."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


class DemoError(Exception):
    """The demo cannot go on: a missing tool, a process that did not start; the message says what to do."""


def free_port() -> int:
    """A port nobody listens on right now, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_prometheus(explicit: str | None, *, root: Path) -> str:
    """The Prometheus binary: `explicit`, else `prometheus` on the PATH, else the project's .tools copy."""
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise DemoError(f"--prometheus {explicit}: not an executable file")
        return explicit
    found = shutil.which("prometheus")
    if found:
        return found
    local = root / ".tools" / "prometheus" / "usr" / "bin" / "prometheus"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    raise DemoError(
        "no prometheus binary on the PATH or in .tools/prometheus: run `make demo` (as root on a fresh "
        "Debian/Ubuntu machine it fetches the distribution's package with scripts/install-prometheus.sh), "
        "install your distribution's prometheus package, or pass --prometheus PATH"
    )


def answers(url: str) -> bool:
    """Whether `url` answers 200 now."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


@dataclass
class Child:
    """One child process, its log file and its readiness URL."""

    name: str
    argv: Sequence[str]
    log_path: Path
    ready_url: str
    env: dict[str, str] | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def start(self, *, deadline_seconds: float) -> None:
        """Start it and wait until `ready_url` answers 200; `DemoError` with its log's tail otherwise."""
        with self.log_path.open("ab") as log:
            # Same process group as the driver: a Ctrl-C in the terminal reaches every process of the demo.
            self.process = subprocess.Popen(
                list(self.argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env
            )
        deadline = time.monotonic() + deadline_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise DemoError(f"{self.name} exited with status {self.process.returncode}:\n{self.tail()}")
            if answers(self.ready_url):
                return
            time.sleep(0.2)  # polling for readiness
        raise DemoError(f"{self.name} not ready within {deadline_seconds:g} s ({self.ready_url}):\n{self.tail()}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, *, grace_seconds: float = 15.0) -> int | None:
        """SIGTERM, wait up to `grace_seconds`, then SIGKILL; the exit status (None when never started)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace_seconds)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join("    " + line for line in text.splitlines()[-lines:])
