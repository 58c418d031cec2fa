"""The body of a `/api/v1/query` answer, read strictly into an `Answer`.

Prometheus's instant-query answer is `{"status": "success", "data": {"resultType": ..., "result": ...}}`
where a vector is a list of `{"metric": {label: value}, "value": [time, "number"]}`, and a scalar or a
string is one `[time, "text"]`. Anything else (an HTML page, a body cut short, JSON nested past what the
parser can follow, `null` where a label set or a value belongs, a number where a string belongs) is a
`BadResponseError` whose message names the first thing that is wrong, by its path in the document. The
`resultType` decides how `result` is read, never its shape. No I/O here; nothing of the body is quoted but
what `quote` (the caller's credential scrubber) lets through.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Callable, Mapping
from itertools import chain
from typing import Any

from autoscaler.metrics.context import Answer, Series, SeriesTable
from autoscaler.metrics.errors import BadResponseError, PermanentError

# Go's strconv.FormatFloat(v, 'f'|'e', -1, 64) output, as Prometheus writes sample values, plus its names
# of the special values. Python's float() also takes "1_000", "infinity" and "nan": Prometheus writes none.
_VALUE_TEXT = r"(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|[+-]?Inf)"
_SAMPLE_VALUE = re.compile(f"^{_VALUE_TEXT}$")
# Many sample values, one per line.
_SAMPLE_VALUES = re.compile(f"{_VALUE_TEXT}(?:\n{_VALUE_TEXT})*")
RESULT_TYPES = ("vector", "scalar", "matrix", "string")
_SNIPPET = 80
# The snippet is cut from this much of the body, scrubbed first, so a credential that begins in the snippet
# is whole when the scrubber sees it.
_SCRUB_WINDOW = 64 * 1024


def read_answer(body: bytes, *, quote: Callable[[str], str] = str) -> Answer:
    """The answer in a 200 body, or `BadResponseError` naming what is wrong (`quote` scrubs quoted text)."""
    return _Reader(quote).answer(body)


class _Reader:
    """One body's reading; `quote` scrubs every piece of the body put into a message, before it is cut."""

    def __init__(self, quote: Callable[[str], str]) -> None:
        self._quote = quote

    def text(self, value: str, limit: int) -> str:
        """Server text for a message: scrubbed first, then cut (a cut credential would escape the scrub)."""
        scrubbed = self._quote(value)
        return repr(scrubbed if len(scrubbed) <= limit else scrubbed[:limit] + "...")

    def show(self, value: Any) -> str:
        """A short description of a JSON value: its kind, and a number's or a short string's text."""
        if value is None:
            return "null"
        if isinstance(value, bool):
            return f"the boolean {str(value).lower()}"
        if isinstance(value, int | float):
            return f"the number {value!r}"
        if isinstance(value, str):
            return f"the string {self.text(value, 20)}"
        return f"a JSON {_kind(value)}"

    def answer(self, body: bytes) -> Answer:
        document = self.load(body)
        if not isinstance(document, dict):
            raise BadResponseError(f"the answer is a JSON {_kind(document)}, not an object")
        status = document.get("status")
        if status == "error":
            # Prometheus sends errors with a 4xx/5xx status; a 200 carrying one comes from something between.
            error_type = document.get("errorType")
            detail = self.text(f"{error_type}: {document.get('error')}", 300)
            raise PermanentError(
                f"HTTP 200 with status 'error': {detail}",
                error_type=error_type if isinstance(error_type, str) and error_type.isidentifier() else "bad_response",
            )
        if status != "success":
            raise BadResponseError(f"the answer's status is {self.show(status)}, not 'success'")
        data = document.get("data")
        if not isinstance(data, dict):
            raise BadResponseError(f"the answer's data is {self.show(data)}, not an object")
        result_type = data.get("resultType")
        if not isinstance(result_type, str):
            raise BadResponseError(f"data.resultType is {self.show(result_type)}, not a string")
        if result_type not in RESULT_TYPES:
            raise BadResponseError(f"data.resultType {self.text(result_type, 40)} is none of {', '.join(RESULT_TYPES)}")
        if "result" not in data:
            raise BadResponseError(f"data.result is missing from a {result_type} answer")
        result = data["result"]
        if result_type == "vector":
            return Answer("vector", table=self.vector(result))
        if result_type == "scalar":
            time, value = self.sample(result, "data.result", text=False)
            return Answer(result_type="scalar", series=(Series({}, value, time),))
        if result_type == "string":
            time, value = self.sample(result, "data.result", text=True)
            return Answer(result_type="string", series=(Series({}, value, time),))
        if not isinstance(result, list):
            raise BadResponseError(f"data.result of a matrix answer is {self.show(result)}, not a list")
        return Answer(result_type="matrix", series=())  # no source reads a matrix: its type is refused

    def load(self, body: bytes) -> Any:
        if not body.strip():
            raise BadResponseError("the answer's body is empty")
        try:
            return json.loads(body)
        except RecursionError:
            # CPython's JSON parser recurses once per nesting level: "[" * 100000 exhausts the stack.
            raise BadResponseError("the answer's JSON nests deeper than the parser can follow") from None
        except UnicodeDecodeError as err:
            # `from None` here and below: these errors hold the whole body (`.object`, `.doc`), which may echo
            # a credential; the message says what matters.
            raise BadResponseError(f"the answer is not text ({err.reason} at byte {err.start})") from None
        except json.JSONDecodeError as err:
            # The parser stops at the end of a body cut short, or inside the string the cut left open.
            ends_early = err.pos >= len(err.doc.rstrip()) or err.msg.startswith("Unterminated string")
            cut = "; the body ends early (cut short?)" if ends_early else ""
            start = self.text(body[:_SCRUB_WINDOW].decode("utf-8", "replace"), _SNIPPET)
            raise BadResponseError(
                f"the answer is not JSON ({err.msg}: character {err.pos} of {len(err.doc)}){cut}; it starts {start}"
            ) from None
        except ValueError as err:  # e.g. an integer literal longer than Python converts
            raise BadResponseError(f"the answer's JSON cannot be read ({type(err).__name__})") from None

    def vector(self, result: Any) -> SeriesTable:
        """The series of a vector, checked, into columns (each series' label set kept as the decoder made it).
        The common case is checked a column at a time (`_columns`); anything unusual is read series by series,
        and the first thing wrong is named by `series`."""
        if not isinstance(result, list):
            raise BadResponseError(f"data.result of a vector answer is {self.show(result)}, not a list")
        table = _columns(result)
        if table is not None:
            return table
        labels: list[Mapping[str, str]] = []
        values: list[str] = []
        stamps = array("d")
        for index, item in enumerate(result):
            metric, time, value = self.series(item, f"data.result[{index}]")
            labels.append(metric)
            values.append(value)
            stamps.append(time)
        return SeriesTable(labels, values, stamps)

    def series(self, item: Any, path: str) -> tuple[dict[str, str], float, str]:
        """One series object, checked: its label set, time and value text."""
        if not isinstance(item, dict):
            raise BadResponseError(f"{path} is {self.show(item)}, not a series object")
        labels = item.get("metric")
        if not isinstance(labels, dict):
            missing = "missing" if "metric" not in item else self.show(labels)
            raise BadResponseError(f"{path}.metric is {missing}, not a label set")
        for name, value in labels.items():
            if not isinstance(value, str):
                raise BadResponseError(f"{path}.metric[{self.text(name, 40)}] is {self.show(value)}, not a string")
        if "value" not in item:
            what = "a native histogram" if "histogram" in item else "no value"
            raise BadResponseError(f"{path} holds {what}, not a float sample")
        time, value = self.sample(item["value"], f"{path}.value", text=False)
        return labels, time, value

    def sample(self, pair: Any, path: str, *, text: bool) -> tuple[float, str]:
        """`[time, "value"]`: a finite number of seconds and a string (a sample value's text unless `text`)."""
        if not isinstance(pair, list) or len(pair) != 2:
            raise BadResponseError(f"{path} is {self.show(pair)}, not a [time, value] pair")
        time, value = pair
        if isinstance(time, bool) or not isinstance(time, int | float) or not _finite_seconds(time):
            raise BadResponseError(f"{path}[0] (the sample time) is {self.show(time)}, not a number of seconds")
        if not isinstance(value, str):
            raise BadResponseError(f"{path}[1] (the sample value) is {self.show(value)}, not a string")
        if not text and not _SAMPLE_VALUE.match(value):
            raise BadResponseError(f"{path}[1] (the sample value) {self.text(value, 40)} is not a number")
        return float(time), value


def _columns(result: list[Any]) -> SeriesTable | None:
    """A vector's table when every series is `{"metric": {name: "value", ...}, "value": [time, "number"]}` with
    a finite time and a sample value's text, checked a column at a time by built-ins (one Python step per series
    was most of the cost of reading an answer); None for anything else, which `_Reader.vector` reads series by
    series for its message. Accepts exactly what that reading accepts."""
    if not result:
        return SeriesTable([], [], array("d"))
    try:
        # Each step raises TypeError, KeyError or OverflowError at the first thing it cannot take: a series that
        # is no object or lacks "metric" or "value", a label set that is no object, a label that is no string,
        # a pair that is no list (a string's characters are caught by the types below), an integer time past
        # float64's range. Extra keys beside "metric" and "value" are ignored, as the series reader does.
        labels = [item["metric"] for item in result]
        pairs = [item["value"] for item in result]
        "".join(chain.from_iterable(map(dict.values, labels)))  # TypeError unless every label value is a string
        if set(map(len, pairs)) != {2}:
            return None
        times = [pair[0] for pair in pairs]
        values = [pair[1] for pair in pairs]
        if not set(map(type, times)) <= {float, int} or set(map(type, values)) != {str}:
            return None
        stamps = array("d", times)
    except (TypeError, KeyError, OverflowError):
        return None
    if not all(map(math.isfinite, stamps)):
        return None
    # One match over all the values: a value holding the separator would pass as two, so count them too.
    joined = "\n".join(values)
    if joined.count("\n") != len(values) - 1 or _SAMPLE_VALUES.fullmatch(joined) is None:
        return None
    return SeriesTable(labels, values, stamps)


def _finite_seconds(value: int | float) -> bool:
    """A sample time a float can hold: an integer past float64's range (10**400) is not one."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
