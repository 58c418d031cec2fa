"""The daemon's log output: structlog events and the libraries' stdlib logging, one stream, one format.

`configure_logging` sets it up once, at start: JSON lines (`timestamp` in ISO 8601 UTC, `level`, `logger`,
`event`, then the event's keys) or structlog's console renderer for a person at a terminal. structlog loggers
go through the standard library (each is a stdlib logger named after its module), so the kubernetes client's,
urllib3's and APScheduler's records come out in the same format, at WARNING and above (APScheduler's
scheduler and executors at ERROR). Loggers are not
cached, so `structlog.testing.capture_logs` keeps working in tests. This module decides nothing else.
"""

from __future__ import annotations

import logging
import sys
from typing import IO, Literal

import structlog

LogFormat = Literal["auto", "json", "console"]
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
# Libraries whose INFO and DEBUG records would drown the daemon's own lines.
QUIET_LIBRARIES = ("kubernetes", "urllib3", "apscheduler", "requests")
# APScheduler's warnings about skipped and late runs repeat on every tick the daemon already counts
# (autoscaler_ticks_skipped_total) and logs itself, once a minute (tick_overrun, tick_missed): errors only.
SCHEDULER_LOGGERS = ("apscheduler.scheduler", "apscheduler.executors")


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]  # generic in the stubs only
    """The handler this module installs on the root logger (replaced, not added, when reconfigured)."""


def configure_logging(format: LogFormat, level: str, stream: IO[str] | None = None) -> None:
    """Send structlog events and stdlib records to `stream` (default: standard error) as `format` says."""
    out = sys.stderr if stream is None else stream
    threshold = LEVELS.get(level.lower())
    if threshold is None:
        raise ValueError(f"unknown log level {level!r}; known: {', '.join(LEVELS)}")
    console = format == "console" or (format == "auto" and out.isatty())
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
    ]
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer(colors=False)
        if console
        else structlog.processors.JSONRenderer(default=str, sort_keys=False)
    )
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    handler = _Handler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info if not console else _keep,
                _leading_keys,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(threshold)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(max(threshold, logging.WARNING))
    for name in SCHEDULER_LOGGERS:
        logging.getLogger(name).setLevel(max(threshold, logging.ERROR))


def _leading_keys(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    """timestamp, level, logger and event first, so a line reads the same way every time."""
    first = {key: event.pop(key) for key in ("timestamp", "level", "logger", "event") if key in event}
    return {**first, **event}


def _keep(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    """The console renderer formats exceptions itself."""
    return event
