"""configure_logging: JSON lines with timestamp, level, logger and event; the console renderer; the libraries'
stdlib records in the same stream at WARNING and above."""

from __future__ import annotations

import io
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import structlog

from autoscaler.daemon.logs import (
    BATCH_LINES,
    QUIET_LIBRARIES,
    _Handler,
    batched_lines,
    configure_logging,
    log_direct,
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


pytestmark = pytest.mark.usefixtures("restore_logging")  # each test configures logging


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_lines_carry_timestamp_level_logger_event_first() -> None:
    out = io.StringIO()
    configure_logging("json", "info", out)
    structlog.get_logger("autoscaler.daemon.app").info("tick_finished", duration_seconds=0.5, targets=3)
    [line] = _lines(out)
    assert list(line)[:4] == ["timestamp", "level", "logger", "event"]
    assert line["level"] == "info" and line["logger"] == "autoscaler.daemon.app" and line["event"] == "tick_finished"
    assert line["duration_seconds"] == 0.5 and line["targets"] == 3
    when = datetime.fromisoformat(line["timestamp"])
    assert when.utcoffset() == timedelta(0)
    assert abs(datetime.now(UTC) - when) < timedelta(minutes=5)


@pytest.mark.parametrize(
    ("level", "logged"),
    [
        pytest.param("debug", ["debug", "info", "warning", "error"], id="debug logs everything"),
        pytest.param("info", ["info", "warning", "error"], id="info drops debug"),
        pytest.param("WARNING", ["warning", "error"], id="warning, upper case"),
        pytest.param("error", ["error"], id="error only"),
    ],
)
def test_the_level_filters_structlog_events(level: str, logged: list[str]) -> None:
    out = io.StringIO()
    configure_logging("json", level, out)
    log = structlog.get_logger("autoscaler.test")
    log.debug("a")
    log.info("b")
    log.warning("c")
    log.error("d")
    assert [line["level"] for line in _lines(out)] == logged


@pytest.mark.parametrize("library", QUIET_LIBRARIES)
def test_library_records_arrive_in_the_same_json_from_warning_on(library: str) -> None:
    out = io.StringIO()
    configure_logging("json", "debug", out)
    logger = logging.getLogger(f"{library}.inner")
    logger.info("connection pool is full")
    logger.warning("retrying %s", "GET /api")
    [line] = _lines(out)
    assert line["event"] == "retrying GET /api"
    assert line["level"] == "warning" and line["logger"] == f"{library}.inner"
    assert "timestamp" in line


@pytest.mark.parametrize(
    "logger",
    [
        pytest.param("apscheduler.scheduler", id="the scheduler (a run skipped: max instances)"),
        pytest.param("apscheduler.executors.default", id="an executor (a run missed)"),
    ],
)
def test_the_schedulers_skip_warnings_are_left_to_the_daemon(logger: str) -> None:
    out = io.StringIO()
    configure_logging("json", "debug", out)
    scheduler = logging.getLogger(logger)
    scheduler.warning('Execution of job "%s" skipped: maximum number of running instances reached (%d)', "tick", 1)
    scheduler.error("Error running job %s", "tick")
    assert [(line["level"], line["event"]) for line in _lines(out)] == [("error", "Error running job tick")]


def test_an_exception_is_one_json_line_with_its_traceback() -> None:
    out = io.StringIO()
    configure_logging("json", "info", out)
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError:
        structlog.get_logger("autoscaler.test").exception("tick_failed")
    [line] = _lines(out)
    assert line["event"] == "tick_failed" and line["level"] == "error"
    assert "ZeroDivisionError: division by zero" in line["exception"]


def test_context_variables_are_bound_into_each_line() -> None:
    out = io.StringIO()
    configure_logging("json", "info", out)
    with structlog.contextvars.bound_contextvars(target="shop/web"):
        structlog.get_logger("autoscaler.test").info("decision", desired=4)
    [line] = _lines(out)
    assert line["target"] == "shop/web" and line["desired"] == 4


@pytest.mark.parametrize(
    ("fmt", "stream", "json_out"),
    [
        pytest.param("json", _Terminal(), True, id="json on a terminal is json"),
        pytest.param("auto", io.StringIO(), True, id="auto on a pipe is json"),
        pytest.param("auto", _Terminal(), False, id="auto on a terminal is the console"),
        pytest.param("console", io.StringIO(), False, id="console on a pipe is the console"),
    ],
)
def test_the_format(fmt: Any, stream: io.StringIO, json_out: bool) -> None:
    configure_logging(fmt, "info", stream)
    structlog.get_logger("autoscaler.test").info("scale_decided", desired=4)
    text = stream.getvalue()
    if json_out:
        assert json.loads(text)["desired"] == 4
    else:
        assert not text.startswith("{")
        assert "scale_decided" in text and "desired=4" in text and "autoscaler.test" in text


def test_reconfiguring_replaces_the_handler() -> None:
    first, second = io.StringIO(), io.StringIO()
    configure_logging("json", "info", first)
    configure_logging("json", "info", second)
    logging.getLogger("urllib3").warning("once")
    assert first.getvalue() == ""
    assert len(_lines(second)) == 1


def test_capture_logs_still_works_after_configuring() -> None:
    configure_logging("json", "info", io.StringIO())
    log = structlog.get_logger("autoscaler.test")
    with structlog.testing.capture_logs() as captured:
        log.info("decision", desired=2)
    assert captured == [{"event": "decision", "desired": 2, "log_level": "info"}]


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        configure_logging("json", "loud", io.StringIO())


_FIELDS: dict[str, Any] = {
    "target": "shop/web",
    "current": 3,
    "desired": None,
    "rescale": True,
    "summary": "hold → 3",
    "metrics": ["cpu=90%/60%→5"],
    "seconds": 0.0042,
    "when": datetime(2026, 1, 1, tzinfo=UTC),  # not JSON: rendered with str(), as the renderer's default
}


def _configure_alone(fmt: str, level: str, out: io.StringIO) -> None:
    """`configure_logging`, with this module's handler the root's only one (pytest adds its own)."""
    configure_logging(fmt, level, out)  # type: ignore[arg-type]
    root = logging.getLogger()
    root.handlers[:] = [handler for handler in root.handlers if isinstance(handler, _Handler)]


def _without_timestamp(text: str) -> list[str]:
    return [line.split(", ", 1)[1] for line in text.splitlines()]


@pytest.mark.parametrize("method", ["info", "warning"])
def test_the_direct_line_is_the_structlog_line(method: str) -> None:
    """`log_direct` writes what structlog writes for the same event: same keys, order, values and context."""
    out = io.StringIO()
    _configure_alone("json", "info", out)
    log = structlog.get_logger("autoscaler.daemon.observe")
    with structlog.contextvars.bound_contextvars(tick="2026-01-01T00:00:00+00:00", target="context's"):
        getattr(log, method)("decision", **_FIELDS)
        assert log_direct("autoscaler.daemon.observe", method, "decision", dict(_FIELDS))
    through_structlog, direct = _without_timestamp(out.getvalue())
    assert direct == through_structlog
    assert list(json.loads(out.getvalue().splitlines()[1]))[:5] == ["timestamp", "level", "logger", "event", "target"]


def test_the_direct_line_is_filtered_by_level() -> None:
    out = io.StringIO()
    _configure_alone("json", "warning", out)
    assert log_direct("autoscaler.daemon.observe", "info", "decision", dict(_FIELDS))
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    "setting",
    [
        pytest.param("console", id="the console renderer"),
        pytest.param("capture", id="structlog's capture_logs"),
        pytest.param("handler", id="another handler on the way"),
        pytest.param("unconfigured", id="structlog's defaults"),
    ],
)
def test_the_direct_line_declines_when_the_set_up_is_not_this_modules(setting: str) -> None:
    """Anything but the JSON set-up alone: nothing written, the caller logs through structlog."""
    out = _Terminal() if setting == "console" else io.StringIO()
    _configure_alone("console" if setting == "console" else "json", "info", out)
    other = logging.StreamHandler(io.StringIO())
    if setting == "handler":
        logging.getLogger("autoscaler.daemon").addHandler(other)
    if setting == "unconfigured":
        structlog.reset_defaults()
    try:
        if setting == "capture":
            with structlog.testing.capture_logs():
                declined = not log_direct("autoscaler.daemon.observe", "info", "decision", {"desired": 2})
        else:
            declined = not log_direct("autoscaler.daemon.observe", "info", "decision", {"desired": 2})
    finally:
        logging.getLogger("autoscaler.daemon").removeHandler(other)
    assert declined
    assert out.getvalue() == ""


class _Writes(io.StringIO):
    """A stream that counts its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def test_batched_direct_lines_go_out_a_batch_per_write_in_order_and_all_by_the_end() -> None:
    """Inside `batched_lines` the decision lines wait and go out BATCH_LINES per write; a record through structlog
    writes the waiting ones first (order kept); the rest are out when the batch ends, even on an error."""
    out = _Writes()
    _configure_alone("json", "info", out)
    log = structlog.get_logger("autoscaler.daemon.app")
    count = BATCH_LINES + 3
    with pytest.raises(RuntimeError, match="the tick failed"), batched_lines():
        for index in range(count):
            assert log_direct("autoscaler.daemon.observe", "info", "decision", {**_FIELDS, "desired": index})
        assert out.writes == 1  # one full batch; 3 lines wait
        log.warning("scale_write_failed", target="shop/web")
        assert out.writes == 3  # the 3 waiting lines, then the warning
        log_direct("autoscaler.daemon.observe", "info", "decision", {**_FIELDS, "desired": count})
        assert out.writes == 3
        raise RuntimeError("the tick failed")
    assert out.writes == 4
    lines = _lines(out)
    assert [line.get("desired") for line in lines] == [*range(count), None, count]
    assert lines[count]["event"] == "scale_write_failed"
    log_direct("autoscaler.daemon.observe", "info", "decision", dict(_FIELDS))  # outside: a line per write again
    assert out.writes == 5 and len(_lines(out)) == count + 3


def test_batched_lines_change_nothing_without_the_json_set_up() -> None:
    structlog.reset_defaults()
    with batched_lines():
        pass
