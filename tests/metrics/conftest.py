"""Fixtures: one real Prometheus per session (remote-write receiver on), a logging/fault proxy per test,
and readers built from settings that point at either. Everything listens on 127.0.0.1 and is stopped after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from autoscaler.metrics import MetricsReader, MetricsSettings
from autoscaler.metrics.registry import SourceRegistry
from tests.metrics import remote_write, server
from tests.metrics.proxy import Proxy


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[server.PrometheusServer]:
    """A running Prometheus; its absence or failure to start FAILS the tests (never a skip)."""
    binary = server.find_binary()
    if binary is None:
        pytest.fail(
            "no prometheus binary: run scripts/install-prometheus.sh (make deps) or put prometheus on the PATH",
            pytrace=False,
        )
    try:
        running = server.start(binary, tmp_path_factory.mktemp("prometheus"))
    except (RuntimeError, OSError) as err:
        pytest.fail(f"prometheus failed to start: {err}", pytrace=False)
    yield running
    running.stop()


@pytest.fixture(scope="session")
def base_time() -> datetime:
    """The evaluation time of the tests: a whole minute, half an hour ago (samples are written around it)."""
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    return now - timedelta(minutes=30)


Push = Callable[..., None]


@pytest.fixture
def push(prometheus: server.PrometheusServer) -> Push:
    """push({labels}, [(datetime or seconds, value), ...], ...): write series into the server."""

    def _push(*pairs: Any) -> None:
        series = []
        for labels, samples in zip(pairs[::2], pairs[1::2], strict=True):
            points = [(t.timestamp() if isinstance(t, datetime) else t, float(v)) for t, v in samples]
            series.append(remote_write.TimeSeries(labels, points))
        remote_write.push(prometheus.url, series)

    return _push


@pytest.fixture
def proxy(prometheus: server.PrometheusServer) -> Iterator[Proxy]:
    """A logging, fault-injecting proxy in front of the session's Prometheus."""
    running = Proxy(prometheus.url).start()
    yield running
    running.stop()


@pytest.fixture
def sleeps() -> list[float]:
    """What the readers' injected sleep was asked to wait (nothing actually waits)."""
    return []


@pytest.fixture
def make_reader(sleeps: list[float]) -> Iterator[Callable[..., MetricsReader]]:
    """make_reader(url, **server_options, templates=..., **settings): a reader on one server named `main`."""
    readers: list[MetricsReader] = []

    def _make(url: str, *, settings: dict[str, Any] | None = None, **server: Any) -> MetricsReader:
        document = {"servers": {"main": {"url": url, **server}}, **(settings or {})}
        reader = MetricsReader(
            MetricsSettings.model_validate(document), registry=SourceRegistry.builtin(), sleep=sleeps.append
        )
        readers.append(reader)
        return reader

    yield _make
    for reader in readers:
        reader.close()


@pytest.fixture
def secret_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """secret_file(name, content): a file holding a credential."""

    def _write(name: str, content: str) -> Path:
        path = tmp_path / name
        path.write_text(content)
        return path

    return _write
