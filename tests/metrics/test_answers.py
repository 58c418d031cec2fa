"""Numbers from Prometheus into milli-units, and the shape of answers."""

from __future__ import annotations

import pytest

from autoscaler.metrics import NoDataError, PermanentError
from autoscaler.metrics.answers import to_milli
from autoscaler.metrics.client import answer_from_result


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        pytest.param("0.25", 250, id="exact"),
        pytest.param("0.25000000000000006", 250, id="float noise below a nano-unit is dropped"),
        pytest.param("1.0001", 1001, id="rounded up like MilliValue"),
        pytest.param("0.0000000004", 0, id="below half a nano-unit is zero"),
        pytest.param("-0.0015", -2, id="negative values round away from zero"),
        pytest.param("1e+06", 1_000_000_000, id="exponent notation"),
        pytest.param("123456789012345678901", 123456789012345678901000, id="beyond int64 stays exact"),
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


def test_garbage_is_a_bad_response() -> None:
    with pytest.raises(PermanentError):
        to_milli("twelve")


def test_answer_shapes() -> None:
    assert answer_from_result([1700000000.5, "3"]).result_type == "scalar"
    vector = answer_from_result([{"metric": {"a": "b"}, "value": [1700000000, "1"]}])
    assert vector.result_type == "vector" and vector.series[0].labels == {"a": "b"}
    assert answer_from_result([]).result_type == "vector"
    assert answer_from_result([{"metric": {}, "values": [[1, "1"]]}]).result_type == "matrix"
    with pytest.raises(PermanentError):
        answer_from_result({"unexpected": True})
