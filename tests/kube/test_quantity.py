"""Requests in milli-units, exactly as Kubernetes' Quantity.MilliValue() computes them."""

from __future__ import annotations

import pytest

from autoscaler.core.formats import QuantityError, milli_value


@pytest.mark.parametrize(
    ("quantity", "milli"),
    [
        pytest.param("1.5m", 2, id="fractional milli rounds up"),
        pytest.param("1Gi", 1073741824000, id="binary suffix"),
        pytest.param("100m", 100, id="millicores"),
        pytest.param("1", 1000, id="plain integer"),
        pytest.param("0.1", 100, id="decimal fraction"),
        pytest.param(".5", 500, id="leading dot"),
        pytest.param("1e3", 1000000, id="decimal exponent"),
        pytest.param("129e-2", 1290, id="negative exponent"),
        pytest.param("1E", 10**21, id="exa, not an exponent"),
        pytest.param("2Ki", 2048000, id="kibi"),
        pytest.param("1n", 1, id="nano rounds up to one milli"),
        pytest.param("1.1u", 1, id="micro rounds up"),
        pytest.param("500M", 500 * 10**9, id="mega"),
        pytest.param("0", 0, id="zero"),
        pytest.param(2, 2000, id="JSON integer"),
        pytest.param(0.25, 250, id="JSON float"),
    ],
)
def test_milli_value(quantity: str | int | float, milli: int) -> None:
    assert milli_value(quantity) == milli


@pytest.mark.parametrize("bad", ["", "abc", "1x", "1Gb", "--1", "1.2.3"])
def test_invalid_quantity_is_an_error(bad: str) -> None:
    with pytest.raises(QuantityError):
        milli_value(bad)
