"""The body of a `/api/v1/query` answer, read strictly into an `Answer`.

Prometheus's instant-query answer is `{"status": "success", "data": {"resultType": ..., "result": ...}}`
where a vector is a list of `{"metric": {label: value}, "value": [time, "number"]}`, and a scalar or a
string is one `[time, "text"]`. Anything else (an HTML page, a body cut short, JSON nested past what the
parser can follow, `null` where a label set or a value belongs, a number where a string belongs) is a
`BadResponseError` whose message names the first thing that is wrong, by its path in the document. The
`resultType` decides how `result` is read, never its shape. No I/O here; nothing of the body is quoted but
what `quote` (the caller's credential scrubber) lets through.

The common answer, a vector whose every series is well formed, is decoded and checked in one pass by msgspec
into typed structs (a third of the CPU of `json.loads` and a check a column at a time); a body that pass
declines (anything else, however slightly off) is read again by `json` and checked piece by piece, which
names what is wrong. Both readings give the same table for every body the second accepts, and the first
declines every body the second refuses but one (an integer too long for Python in a key neither reads).
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Callable, Mapping
from operator import attrgetter, itemgetter
from typing import Any, Literal

import msgspec

from autoscaler.metrics.answers import each_matches
from autoscaler.metrics.context import Answer, Series, SeriesTable
from autoscaler.metrics.errors import BadResponseError, PermanentError

# Go's strconv.FormatFloat(v, 'f'|'e', -1, 64) output, as Prometheus writes sample values, plus its names
# of the special values. Python's float() also takes "1_000", "infinity" and "nan": Prometheus writes none.
_VALUE_TEXT = r"(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|[+-]?Inf)"
_SAMPLE_VALUE = re.compile(_VALUE_TEXT)  # with fullmatch: "$" would let a final newline through
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
        table = _fast_vector(body)
        if table is not None:
            return Answer("vector", table=table)
        return self.document(self.load(body))

    def document(self, document: Any) -> Answer:
        """The answer in a decoded body, checked piece by piece."""
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
        """The series of a vector, checked series by series (the first thing wrong is named by `series`), into
        columns (each series' label set kept as the decoder made it)."""
        if not isinstance(result, list):
            raise BadResponseError(f"data.result of a vector answer is {self.show(result)}, not a list")
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
        if not text and not _SAMPLE_VALUE.fullmatch(value):
            raise BadResponseError(f"{path}[1] (the sample value) {self.text(value, 40)} is not a number")
        return float(time), value


class _FastSeries(msgspec.Struct, gc=False):
    """A series as the fast reading takes it: a label set of strings and a `[time, "text"]` pair (extra keys
    are ignored, as the series reader ignores them)."""

    metric: dict[str, str]
    value: tuple[float, str]


class _FastData(msgspec.Struct, gc=False):
    result_type: Literal["vector"] = msgspec.field(name="resultType")
    result: list[_FastSeries]


class _FastAnswer(msgspec.Struct, gc=False):
    status: Literal["success"]
    data: _FastData


_FAST_ANSWER = msgspec.json.Decoder(_FastAnswer)
_LABELS, _PAIRS, _TIMES, _TEXTS = attrgetter("metric"), attrgetter("value"), itemgetter(0), itemgetter(1)


def _fast_vector(body: bytes) -> SeriesTable | None:
    """The table of a successful vector answer whose every series is well formed, decoded and checked in one
    pass; None for any other body, which `_Reader` then reads piece by piece (and names what is wrong). What
    the decoder takes beyond the series reader's checks is checked here: finite times (it refuses a number out
    of float64's range) and every value a sample value's text. Bodies it refuses that the series reader takes
    (a byte-order mark, UTF-16, a lone surrogate in a label) take the slow reading, which gives the same. One
    body it takes that the series reader refuses: an integer of more than 4,300 digits in a key neither reads
    (Python's limit on converting one; `json` converts every number, the decoder skips what it does not read)."""
    if not body.isascii():
        # The decoder checks the UTF-8 of what it reads, not of the keys it skips: the whole body is checked as
        # `json.loads` checks it (lone surrogates are the decoder's to refuse).
        try:
            body.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None
    try:
        result = _FAST_ANSWER.decode(body).data.result
    except (msgspec.MsgspecError, ValueError, RecursionError):  # RecursionError: a skipped key nested very deep
        return None
    pairs = list(map(_PAIRS, result))
    stamps = array("d", map(_TIMES, pairs))
    values = list(map(_TEXTS, pairs))
    if not all(map(math.isfinite, stamps)):
        return None
    if values and not each_matches(_SAMPLE_VALUES, values):
        return None
    return SeriesTable(list(map(_LABELS, result)), values, stamps)


def _finite_seconds(value: int | float) -> bool:
    """A sample time a float can hold: an integer past float64's range (10**400) is not one."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
