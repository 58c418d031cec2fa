"""The processes of an end-to-end run: a scraping Prometheus, and the daemon itself.

`ScrapingPrometheus` scrapes the targets of a file_sd file every `scrape_interval` (1 s in the tests) and can
be stopped and started again on the same port and TSDB, as a Prometheus outage looks to the daemon.
`DaemonProcess` runs `autoscaler run --config FILE` as a real process, its output in a log file.
Every process listens on 127.0.0.1 and is stopped by its fixture; readiness is polled with a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.metrics import server

SCRAPE_CONFIG = """\
global:
  scrape_interval: {interval}
  evaluation_interval: {interval}
scrape_configs:
  - job_name: load
    scrape_interval: {interval}
    scrape_timeout: {interval}
    file_sd_configs:
      - files: [{targets}]
        refresh_interval: 1s
"""


def wait_for(
    check: Callable[[], Any],
    *,
    deadline_seconds: float,
    what: str,
    interval: float = 0.1,
    explain: Callable[[], str] | None = None,
) -> Any:
    """Poll `check()` until it returns something truthy; fail naming `what`, the last value and `explain()` (a
    daemon's log tail, say) after the deadline."""
    deadline = time.monotonic() + deadline_seconds
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)  # a polling interval, not a wait for time to pass
    context = f"\n{explain()}" if explain is not None else ""
    raise AssertionError(f"not within {deadline_seconds} s: {what} (last: {last!r}){context}")


class ScrapingPrometheus:
    """A real Prometheus scraping file_sd targets; `stop()` and `start()` again keep its port and data."""

    def __init__(self, binary: str, workdir: Path, *, scrape_interval: str = "1s") -> None:
        self.binary = binary
        self.workdir = workdir
        self.port = server.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.targets_file = workdir / "targets.json"
        self.targets_file.write_text("[]")
        self.config = workdir / "prometheus.yml"
        self.config.write_text(
            SCRAPE_CONFIG.format(interval=scrape_interval, targets=json.dumps(str(self.targets_file)))
        )
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, *, deadline_seconds: float = 30.0) -> None:
        self.starts += 1
        argv = [
            self.binary,
            f"--config.file={self.config}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            f"--storage.tsdb.path={self.workdir / 'tsdb'}",
        ]
        self.process, _ = server.spawn(
            "prometheus",
            argv,
            port=self.port,
            log_path=self.workdir / f"prometheus-{self.starts}.log",
            ready=server.answers("/-/ready"),
            deadline_seconds=deadline_seconds,
        )

    def stop(self) -> None:
        if self.process is not None:
            server.ServerProcess(self.process, self.url, self.workdir / "prometheus.log").stop()
            self.process = None

    def scrape(self, *addresses: str, labels: dict[str, str] | None = None) -> None:
        """Scrape these host:port targets (replacing the previous list); Prometheus re-reads the file."""
        self.targets_file.write_text(json.dumps([{"targets": list(addresses), "labels": labels or {}}]))

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result list (empty when the server is down or answers nothing)."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                body = json.load(response)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return []
        return list(body.get("data", {}).get("result", []))

    def value(self, promql: str) -> float | None:
        """The single value of an instant query, or None when it has none."""
        result = self.query(promql)
        return float(result[0]["value"][1]) if len(result) == 1 else None


class DaemonProcess:
    """`autoscaler run --config FILE` as a real process; `terminate()` sends SIGTERM and waits."""

    def __init__(
        self, config: dict[str, Any], workdir: Path, *, name: str = "daemon", env: dict[str, str] | None = None
    ):
        self.workdir = workdir
        self.name = name
        self.config_path = workdir / f"{name}.yaml"
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        self.log_path = workdir / f"{name}.log"
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *extra: str) -> None:
        argv = [sys.executable, "-m", "autoscaler", "run", "--config", str(self.config_path), *extra]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def terminate(self, *, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit status (killed, and the test failed, if it does not exit in `timeout`)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"{self.name} did not exit {timeout} s after SIGTERM: {self.tail()}") from None

    def kill(self) -> None:
        if self.alive():
            assert self.process is not None
            self.process.kill()
            self.process.wait()

    def lines(self) -> list[dict[str, Any]]:
        """The JSON log lines written so far (other lines skipped)."""
        out = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    def events(self, name: str, **where: Any) -> list[dict[str, Any]]:
        """The log lines of one event name whose fields equal `where`."""
        return [e for e in self.lines() if e.get("event") == name and all(e.get(k) == v for k, v in where.items())]

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def get(self, address: str, path: str) -> tuple[int, bytes]:
        """GET one of the daemon's HTTP endpoints: (status, body); (0, b"") when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://{address}{path}", timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return 0, b""


def scale_writes(records: Sequence[Any]) -> list[Any]:
    """The audit records of successful writes to a /scale subresource."""
    return [r for r in records if r.subresource == "scale" and r.verb in ("update", "patch") and 200 <= r.code < 300]
