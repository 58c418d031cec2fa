"""Annotated pydantic field types shared by the spec and snapshot models: quantities and times.

Validating them inside the models makes pydantic report every bad value with its full field path.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from autoscaler.core.formats import QuantityError, duration_seconds, milli_value, parse_time


def _quantity(value: str | int | float) -> str | int | float:
    try:
        milli_value(value)
    except QuantityError as err:
        raise ValueError(str(err)) from None
    return value


def _time(value: str) -> str:
    parse_time(value)
    return value


def _duration(value: str | int | float) -> str | int | float:
    try:
        duration_seconds(value)
    except QuantityError as err:
        raise ValueError(str(err)) from None
    return value


Quantity = Annotated[
    str | int | float,
    AfterValidator(_quantity),
    Field(description="A Kubernetes quantity: '250m', '1.5', '2Gi', '1e3'."),
]
Time = Annotated[str, AfterValidator(_time), Field(description="An RFC 3339 time, e.g. 2026-01-02T15:04:05Z.")]
Duration = Annotated[
    str | int | float, AfterValidator(_duration), Field(description="A Go duration ('30s') or seconds.")
]
