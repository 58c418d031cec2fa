"""`autoscaler run` start-up failures on the operating system's side: one line naming what failed, exit 1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.cli import main


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port this test holds open, so the daemon cannot bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def settings(server: Any, tmp_path: Path, **extra: Any) -> Path:
    specs = tmp_path / "specs"
    specs.mkdir(exist_ok=True)
    doc = {
        "kubernetes": {"server": server.url},
        "leaderElection": {"enabled": False},
        "specs": {"customResources": False, "files": [str(specs)]},
        "http": {"listenAddress": "127.0.0.1:0"},
        **extra,
    }
    path = tmp_path / "daemon.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        pytest.param("busy", "cannot listen on 127.0.0.1:{port}: Address already in use", id="listen address in use"),
        pytest.param("file", "flightRecorder.directory {tmp}/taken: File exists", id="recorder directory is a file"),
        pytest.param(
            "under-file", "flightRecorder.directory {tmp}/taken/sub: Not a directory", id="recorder under a file"
        ),
    ],
)
@pytest.mark.usefixtures("restore_logging")  # `autoscaler run` in this process sets up the daemon's logging
def test_a_start_up_os_error_is_one_line_and_exit_1(
    server: Any, tmp_path: Path, busy_port: int, capsys: pytest.CaptureFixture[str], case: str, expected: str
) -> None:
    (tmp_path / "taken").write_text("a file where a directory belongs\n")
    extra: dict[str, Any] = {
        "busy": {"http": {"listenAddress": f"127.0.0.1:{busy_port}"}},
        "file": {"flightRecorder": {"directory": str(tmp_path / "taken")}},
        "under-file": {"flightRecorder": {"directory": str(tmp_path / "taken" / "sub")}},
    }[case]
    path = settings(server, tmp_path, **extra)
    assert main(["run", "--config", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "autoscaler run: " + expected.format(port=busy_port, tmp=tmp_path)
    assert not any("Traceback" in line or "cannot write the output" in line for line in err)


@pytest.mark.parametrize(
    ("signum", "code"),
    [
        pytest.param(signal.SIGINT, 130, id="Ctrl-C while waiting for the API server: 130"),
        pytest.param(signal.SIGTERM, 0, id="SIGTERM while waiting for the API server: 0, as after start"),
    ],
)
def test_a_signal_during_start_up_is_logged_and_exits(tmp_path: Path, signum: int, code: int) -> None:
    """An API server that accepts the connection and never answers; the signal comes while the daemon waits."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        silent.settimeout(60)

        class Url:
            url = f"http://127.0.0.1:{silent.getsockname()[1]}"

        path = settings(Url(), tmp_path)
        root = Path(__file__).resolve().parents[2]
        proc = subprocess.Popen(
            [sys.executable, "-m", "autoscaler", "run", "--config", str(path)], cwd=root, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(root)}, text=True,
        )  # fmt: skip
        try:
            conn, _ = silent.accept()  # the daemon asks /version: it is waiting now
            with conn:
                proc.send_signal(signum)
                returncode = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    stderr = proc.stderr.read() if proc.stderr else ""
    assert returncode == code, stderr
    assert "startup_interrupted" in stderr and "interrupted during start-up" in stderr
    assert "Traceback" not in stderr
