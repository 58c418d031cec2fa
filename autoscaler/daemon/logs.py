"""The daemon's log output: structlog events and the libraries' stdlib logging, one stream, one format.

`configure_logging` sets it up once, at start: JSON lines (`timestamp` in ISO 8601 UTC, `level`, `logger`,
`event`, then the event's keys) or structlog's console renderer for a person at a terminal. structlog loggers
go through the standard library (each is a stdlib logger named after its module), so the kubernetes client's,
urllib3's and APScheduler's records come out in the same format, at WARNING and above (APScheduler's
scheduler and executors at ERROR). Loggers are not
cached, so `structlog.testing.capture_logs` keeps working in tests. `log_direct` writes one hot event (the
per-target `decision` line) through the same processors without structlog's and logging's per-call machinery,
while the set-up made here is in force; inside `batched_lines` (a tick) those lines go out a batch per write. This
module decides nothing else.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, Literal

import structlog

LogFormat = Literal["auto", "json", "console"]
# Lines `log_direct` holds at most inside `batched_lines` (~0.1 MiB of decision lines): a process killed at
# once loses at most these, and only these wait.
BATCH_LINES = 200
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
# Libraries whose INFO and DEBUG records would drown the daemon's own lines.
QUIET_LIBRARIES = ("kubernetes", "urllib3", "apscheduler", "requests")
# APScheduler's warnings about skipped and late runs repeat on every tick the daemon already counts
# (autoscaler_ticks_skipped_total) and logs itself, once a minute (tick_overrun, tick_missed): errors only.
SCHEDULER_LOGGERS = ("apscheduler.scheduler", "apscheduler.executors")


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]  # generic in the stubs only
    """The handler this module installs on the root logger (replaced, not added, when reconfigured).

    Inside `batched_lines`, `log_direct`'s lines wait in `pending` and go out `BATCH_LINES` at a time, one write
    (and one flush) each: a line per write costs a system call per target, and on a pipe (a container's output)
    a wake-up of its reader too. Any other record writes the waiting lines first, so lines keep their order.
    """

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(stream)
        self.pending: list[str] = []
        self.batching = 0  # nesting depth of `batched_lines`

    def write_pending(self) -> None:
        """Write the lines waiting, as one write; call with the handler's lock held."""
        if self.pending:
            text, self.pending = "".join(self.pending), []
            self.stream.write(text)
            self.flush()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.write_pending()
        except Exception:
            self.handleError(record)
        super().emit(record)


@dataclass(frozen=True, slots=True)
class _Direct:
    """What `log_direct` needs of the JSON set-up: the processors configured (to see that they are still in
    force: `capture_logs` swaps them), the chain a record goes through, in order, and the handler."""

    configured: tuple[structlog.types.Processor, ...]
    chain: tuple[structlog.types.Processor, ...]
    handler: _Handler


_direct: _Direct | None = None


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
    formatting: list[structlog.types.Processor] = [
        structlog.processors.format_exc_info if not console else _keep,
        _leading_keys,
        renderer,
    ]
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *formatting],
        )
    )
    global _direct
    configured = structlog.get_config()["processors"]
    # The record's way through structlog and the formatter, without the level filter (checked first), the
    # formatter's hand-over and its removal of the hand-over's keys.
    chain: tuple[structlog.types.Processor, ...] = (*shared, structlog.processors.StackInfoRenderer(), *formatting)
    _direct = None if console else _Direct(tuple(configured), chain, handler)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(threshold)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(max(threshold, logging.WARNING))
    for name in SCHEDULER_LOGGERS:
        logging.getLogger(name).setLevel(max(threshold, logging.ERROR))


def log_direct(logger: str, method: str, event: str, fields: dict[str, Any]) -> bool:
    """Log `event` with `fields` at `method` ("info", "warning", ...) as `structlog.get_logger(logger)` would,
    the same line through the same processors, written straight to this module's handler; False (nothing
    done) unless the JSON set-up of `configure_logging` is in force and is the record's only way out (no other
    processors, e.g. `capture_logs`'; no other handler or filter on its way), so the caller logs as usual."""
    direct = _direct
    if direct is None or not _same(structlog.get_config()["processors"], direct.configured):
        return False
    stdlib = logging.getLogger(logger)
    level = LEVELS.get(method)
    if level is None or not _only_way_out(stdlib, direct.handler):
        return False
    if not stdlib.isEnabledFor(level) or level < direct.handler.level:
        return True  # filtered, as structlog's filter_by_level or the handler would
    record: Any = {**fields, "event": event}
    for processor in direct.chain:
        record = processor(stdlib, method, record)
    handler = direct.handler
    handler.acquire()
    try:
        if handler.batching:
            handler.pending.append(record + handler.terminator)
            if len(handler.pending) >= BATCH_LINES:
                handler.write_pending()
        else:
            handler.stream.write(record + handler.terminator)
            handler.flush()
    except Exception:
        handler.handleError(logging.makeLogRecord({"msg": event, "levelno": level, "name": logger}))
    finally:
        handler.release()
    return True


@contextmanager
def batched_lines() -> Iterator[None]:
    """Inside it, `log_direct` writes its lines `BATCH_LINES` at a time (`_Handler`); all are out when it ends,
    however it ends. Without the JSON set-up of `configure_logging` it changes nothing."""
    direct = _direct
    if direct is None:
        yield
        return
    handler = direct.handler
    handler.acquire()
    try:
        handler.batching += 1
    finally:
        handler.release()
    try:
        yield
    finally:
        handler.acquire()
        try:
            handler.batching -= 1
            if not handler.batching:
                handler.write_pending()
        except Exception:
            handler.handleError(logging.makeLogRecord({"msg": "batched lines", "levelno": logging.INFO}))
        finally:
            handler.release()


def write_pending() -> None:
    """Write the decision lines `batched_lines` holds now (before the process exits without unwinding it)."""
    direct = _direct
    if direct is None:
        return
    handler = direct.handler
    handler.acquire()
    try:
        handler.write_pending()
    except Exception:
        handler.handleError(logging.makeLogRecord({"msg": "batched lines", "levelno": logging.INFO}))
    finally:
        handler.release()


def _same(processors: Sequence[structlog.types.Processor], configured: tuple[structlog.types.Processor, ...]) -> bool:
    return len(processors) == len(configured) and all(a is b for a, b in zip(processors, configured, strict=True))


def _only_way_out(logger: logging.Logger, handler: _Handler) -> bool:
    """Whether `handler` is the one handler a record of `logger` reaches, with no filter on the way."""
    root = logging.getLogger()
    node: logging.Logger | None = logger
    while node is not None and node is not root:
        if node.handlers or node.filters or not node.propagate or node.disabled:
            return False
        node = node.parent
    handlers = root.handlers
    return len(handlers) == 1 and handlers[0] is handler and not (root.filters or handler.filters or root.disabled)


def _leading_keys(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    """timestamp, level, logger and event first, so a line reads the same way every time."""
    first = {key: event.pop(key) for key in ("timestamp", "level", "logger", "event") if key in event}
    return {**first, **event}


def _keep(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    """The console renderer formats exceptions itself."""
    return event
