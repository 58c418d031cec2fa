"""The kube layer's emulator fixtures (server, setup, kube) and the metric layer's real Prometheus, shared; and
`restore_logging` for tests that set up the daemon's logging in this process."""

import logging
from collections.abc import Iterator

import pytest
import structlog

from autoscaler.daemon.logs import QUIET_LIBRARIES, SCHEDULER_LOGGERS
from tests.kube.conftest import kube, server, setup
from tests.metrics.conftest import base_time, prometheus, push

__all__ = ["base_time", "kube", "prometheus", "push", "restore_logging", "server", "setup"]


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The test configures logging (`configure_logging`, or `autoscaler run` in this process); the rest of the
    session gets structlog's and logging's state back: a handler left on the root logger would write to the
    test's captured stream after it is closed, from any later test's thread."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    quiet = {name: logging.getLogger(name).level for name in (*QUIET_LIBRARIES, *SCHEDULER_LOGGERS)}
    yield
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, old in quiet.items():
        logging.getLogger(name).setLevel(old)
