"""Quantities and durations convert exactly as Kubernetes' resource.Quantity and metav1.Duration do."""

from __future__ import annotations

import pytest

from autoscaler.core.formats import (
    QuantityError,
    approximate_float,
    duration_seconds,
    format_milli,
    milli_value,
)


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        ("150m", 150),
        ("1", 1000),
        ("1.5", 1500),
        ("0.5m", 1),  # MilliValue rounds up
        ("1.5m", 2),
        ("-1.5m", -2),  # ... away from zero
        ("1Gi", 1073741824000),
        ("1Ki", 1024000),
        ("2k", 2000000),
        ("1e3", 1000000),
        ("1E-3", 1),
        ("100u", 1),
        ("3n", 1),
        (20, 20000),
        (0.25, 250),
        ("+4", 4000),
        (".5", 500),
    ],
)
def test_milli_value(text: str | int | float, milli: int) -> None:
    assert milli_value(text) == milli


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "5 cores", "1Q", "m", "--1", "1 k", "0x10"])
def test_not_a_quantity(text: str) -> None:
    with pytest.raises(QuantityError, match="is not a Kubernetes quantity"):
        milli_value(text)


@pytest.mark.parametrize(
    ("text", "value"), [("0.1", 0.1), ("100m", 0.1), ("50m", 0.05), ("0.05", 0.05), ("1", 1.0), ("0", 0.0)]
)
def test_approximate_float_as_the_hpa_reads_tolerance(text: str, value: float) -> None:
    assert approximate_float(text) == value


@pytest.mark.parametrize(
    ("milli", "text"),
    [(1500, "1500m"), (2000, "2"), (0, "0"), (1, "1m"), (2000000, "2k"), (1234000, "1234"), (-500, "-500m")],
)
def test_format_milli_is_canonical(milli: int, text: str) -> None:
    assert format_milli(milli) == text


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("1m0s", 60.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), (15, 15.0), ("0", 0.0)],
)
def test_durations(text: str | int, seconds: float) -> None:
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["30", "thirty seconds", "1m30", "s", ""])
def test_not_a_duration(text: str) -> None:
    with pytest.raises(QuantityError, match="is not a duration"):
        duration_seconds(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1e999999999", id="an exponent that would overflow decimal arithmetic"),
        pytest.param("1e-999999999", id="an exponent that would underflow it"),
        pytest.param("9" * 5000, id="a number past Python's integer-string limit"),
        pytest.param("1." + "0" * 300 + "1", id="a fraction longer than any real quantity"),
    ],
)
def test_a_quantity_out_of_any_range_is_a_quantity_error(text: str) -> None:
    """Never decimal.Overflow or ValueError from the arithmetic: the spec layer turns QuantityError into a field
    problem, so `check` and `replay` name the field instead of printing a traceback."""
    with pytest.raises(QuantityError, match="out of range"):
        milli_value(text)
    with pytest.raises(QuantityError, match="out of range"):
        approximate_float(text)


def test_approximate_float_past_float64_is_infinite() -> None:
    assert approximate_float("1e400") == float("inf")
    assert approximate_float("-1e400") == float("-inf")
