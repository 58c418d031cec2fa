"""Numbers from Prometheus into milli-units, and the API's JSON body read strictly (wire.py), as plain values."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.metrics import BadResponseError, NoDataError, PermanentError, StaleDataError
from autoscaler.metrics.answers import MAX_MILLI, check_answer_time, to_milli
from autoscaler.metrics.wire import read_answer


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        pytest.param("0.25", 250, id="exact"),
        pytest.param("0.25000000000000006", 250, id="float noise below a nano-unit is dropped"),
        pytest.param("1.0001", 1001, id="rounded up like MilliValue"),
        pytest.param("0.0000000004", 0, id="below half a nano-unit is zero"),
        pytest.param("-0.0015", -2, id="negative values round away from zero"),
        pytest.param("1e+06", 1_000_000_000, id="exponent notation"),
        pytest.param("9223372036854775.807", MAX_MILLI, id="the largest int64 of milli-units"),
        pytest.param("-9223372036854775.807", -MAX_MILLI, id="the most negative accepted"),
        pytest.param("0", 0, id="zero"),
    ],
)
def test_to_milli(text: str, milli: int) -> None:
    assert to_milli(text) == milli


@pytest.mark.parametrize(("text", "reason"), [("NaN", "nan"), ("+Inf", "+inf"), ("-Inf", "-inf")])
def test_not_numbers_are_no_data(text: str, reason: str) -> None:
    with pytest.raises(NoDataError) as caught:
        to_milli(text)
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param("twelve", "is not a number", id="garbage"),
        pytest.param("9223372036854775.808", "out of range", id="one milli-unit past int64"),
        pytest.param("9223372036854775.8071", "out of range", id="rounded up past int64"),
        pytest.param("-9223372036854775.809", "out of range", id="past int64 below zero"),
        pytest.param("1e308", "out of range", id="the largest float"),
        pytest.param("123456789012345678901", "out of range", id="twenty-one digits"),
    ],
)
def test_bad_values_are_bad_responses(text: str, words: str) -> None:
    with pytest.raises(BadResponseError) as caught:
        to_milli(text)
    assert caught.value.error_type == "bad_response" and words in caught.value.message
    assert text[:20] in caught.value.message  # the message names the value


T = 1_700_000_000.0
ASKED = datetime.fromtimestamp(T, UTC)


@pytest.mark.parametrize(
    ("stamp", "error"),
    [
        pytest.param(T, None, id="the time asked"),
        pytest.param(T + 0.0004, None, id="the time asked, to the millisecond"),
        pytest.param(T - 5, BadResponseError, id="a little before the time asked"),
        pytest.param(T + 5, BadResponseError, id="after the time asked"),
        pytest.param(T - 91, StaleDataError, id="older than the staleness budget"),
    ],
)
def test_answer_time(stamp: float, error: type[Exception] | None) -> None:
    if error is None:
        check_answer_time(stamp, asked=ASKED, staleness_seconds=90)
        return
    with pytest.raises(error):
        check_answer_time(stamp, asked=ASKED, staleness_seconds=90)


def _body(result_type: Any, result: Any) -> bytes:
    return json.dumps({"status": "success", "data": {"resultType": result_type, "result": result}}).encode()


def _vector(item: Any) -> bytes:
    return _body("vector", [{"metric": {"a": "b"}, "value": [T, "1"]}, item])


@pytest.mark.parametrize(
    ("body", "result_type", "values"),
    [
        pytest.param(_body("vector", [{"metric": {"a": "b"}, "value": [T, "1"]}]), "vector", ["1"], id="vector"),
        pytest.param(_body("vector", []), "vector", [], id="empty vector"),
        pytest.param(_body("scalar", [T, "3"]), "scalar", ["3"], id="scalar"),
        pytest.param(_body("string", [T, "hello"]), "string", ["hello"], id="a string is a string, not a scalar"),
        pytest.param(_body("matrix", [{"metric": {}, "values": [[T, "1"]]}]), "matrix", [], id="matrix"),
        pytest.param(_body("vector", [{"metric": {}, "value": [int(T), "NaN"]}]), "vector", ["NaN"], id="NaN"),
    ],
)
def test_answers_read_by_their_result_type(body: bytes, result_type: str, values: list[str]) -> None:
    answer = read_answer(body)
    assert answer.result_type == result_type and [s.value for s in answer.series] == values


DEEP = b'{"status": "success", "data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        pytest.param(b"<!DOCTYPE html><html><body>Sign in</body></html>", "not JSON", id="an HTML page"),
        pytest.param(_body("vector", [])[:-9], "ends early", id="a body cut short"),
        pytest.param(b"", "empty", id="an empty body"),
        pytest.param(b"\xff\xfe\xfa", "not text", id="not text"),
        pytest.param(DEEP, "nests deeper", id="nested past the parser's recursion"),
        pytest.param(b"[1, 2]", "not an object", id="an array"),
        pytest.param(b'{"status": "sucess", "data": {}}', "status is the string 'sucess'", id="an unknown status"),
        pytest.param(b'{"status": "success", "data": null}', "data is null", id="null data"),
        pytest.param(_body(None, []), "data.resultType is null", id="null resultType"),
        pytest.param(_body("histogram", []), "'histogram' is none of", id="an unknown resultType"),
        pytest.param(b'{"status": "success", "data": {"resultType": "vector"}}', "result is missing", id="no result"),
        pytest.param(_body("vector", {"a": 1}), "not a list", id="a vector that is an object"),
        pytest.param(_body("vector", [[T, "1"]]), "data.result[0] is a JSON array", id="a scalar's shape as vector"),
        pytest.param(_body("scalar", [{"metric": {}, "value": [T, "1"]}]), "pair", id="a vector's shape as scalar"),
        pytest.param(_vector({"metric": {}}), "data.result[1] holds no value", id="a sample without a value"),
        pytest.param(_vector({"metric": {}, "value": None}), "value is null", id="a null value"),
        pytest.param(_vector({"metric": {}, "value": [T, None]}), "value[1] (the sample value) is null", id="null"),
        pytest.param(_vector({"metric": {}, "value": [T, 1.5]}), "the number 1.5, not a string", id="a number"),
        pytest.param(_vector({"metric": {}, "value": [T, "1_000"]}), "'1_000' is not a number", id="not Go's"),
        pytest.param(_vector({"metric": {}, "value": [T]}), "not a [time, value] pair", id="a one-element pair"),
        pytest.param(_vector({"metric": {}, "value": ["T", "1"]}), "sample time) is the string", id="time string"),
        pytest.param(_vector({"metric": {}, "value": [True, "1"]}), "the boolean true", id="time boolean"),
        pytest.param(_vector({"metric": None, "value": [T, "1"]}), "metric is null", id="null labels"),
        pytest.param(_vector({"value": [T, "1"]}), "metric is missing", id="no labels"),
        pytest.param(_vector({"metric": {"pod": None}, "value": [T, "1"]}), "['pod'] is null", id="a null label"),
        pytest.param(_vector({"metric": {"pod": 3}, "value": [T, "1"]}), "['pod'] is the number 3", id="label int"),
        pytest.param(_vector({"metric": {}, "histogram": [T, {}]}), "native histogram", id="a native histogram"),
        pytest.param(_vector("x"), "data.result[1] is the string 'x'", id="a series that is a string"),
    ],
)
def test_malformed_answers_are_bad_responses(body: bytes, words: str) -> None:
    """Each malformed shape is a bad_response whose message names what was wrong, by its path."""
    with pytest.raises(BadResponseError) as caught:
        read_answer(body)
    assert caught.value.error_type == "bad_response"
    assert words in caught.value.message
    assert caught.value.__cause__ is None  # the decoders' errors hold the whole body: not chained


def test_an_error_in_a_200_keeps_its_error_type() -> None:
    body = json.dumps({"status": "error", "errorType": "execution", "error": "query timed out"}).encode()
    with pytest.raises(PermanentError) as caught:
        read_answer(body)
    assert caught.value.error_type == "execution" and "query timed out" in caught.value.message


def test_quoted_text_is_scrubbed_before_it_is_cut() -> None:
    """A credential across the edge of the quoted snippet is scrubbed whole, not cut in half and let through."""
    secret = "s3cr3t-token-value"
    body = b"<html>" + b"x" * 62 + b" Bearer " + secret.encode() + b"</html>"  # the snippet ends inside it
    with pytest.raises(BadResponseError) as caught:
        read_answer(body, quote=lambda text: text.replace(secret, "***"))
    assert "Bearer **" in caught.value.message and "s3cr" not in caught.value.message


_ASKED = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "stamp_offset"),
    [
        pytest.param("1772366340", 0.0, id="a plain time before the time asked"),
        pytest.param("1772366340.123", 0.0005, id="within the stamp tolerance"),
        pytest.param("1.77236634e9", 0.0, id="exponent form"),
        pytest.param(str(_ASKED.timestamp() + 5), 0.0, id="a sample from the future"),
        pytest.param("1772366340", 2.0, id="stamped after the time asked"),
        pytest.param("1772366340", -900.0, id="stamped long before: stale"),
        pytest.param("NaN", 0.0, id="NaN"),
        pytest.param("+Inf", 0.0, id="infinity"),
        pytest.param("abc", 0.0, id="not a number"),
        pytest.param("", 0.0, id="empty"),
    ],
)
def test_the_fast_marker_reading_is_the_exact_one_or_none(value: str, stamp_offset: float) -> None:
    """The per-pod loop's fast path gives the exact reader's time, or None (and the exact reader decides,
    with its message): never a different time, never a time where the exact reader refuses."""
    from autoscaler.metrics.answers import STAMP_TOLERANCE_SECONDS, fast_marker_seconds, marker_seconds

    asked = _ASKED.timestamp()
    stamp = asked + stamp_offset
    fast = fast_marker_seconds(value, stamp, low=asked - STAMP_TOLERANCE_SECONDS, high=asked + STAMP_TOLERANCE_SECONDS)
    try:
        exact: float | None = marker_seconds(value, stamp, asked=_ASKED, staleness_seconds=300)
    except (BadResponseError, StaleDataError):
        exact = None
    assert fast is None or fast == exact
    assert (fast is not None) == (exact is not None and value[:1].isdigit())
