"""Checking a Prometheus answer and turning its numbers into the core's milli-units.

"No data" is never zero: NaN, +Inf and -Inf raise `NoDataError`, and so does an empty answer unless the
binding opted into `emptyAsZero` (the caller decides that). Values are rounded to nano-units first (the
resolution metrics-server reports CPU in; float noise below it is not signal), then up, away from zero, to
milli-units, as Kubernetes' `Quantity.MilliValue()` does.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from autoscaler.metrics.context import Answer, Series
from autoscaler.metrics.errors import NoDataError, PermanentError
from autoscaler.metrics.promql import TIMESTAMP_MARKER, TIMESTAMP_MARKER_VALUE

_CONTEXT = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_EVEN)
_NANO = decimal.Decimal("1e-9")


def to_milli(value: str) -> int:
    """Prometheus's text of a float as milli-units, or `NoDataError` for NaN and infinities."""
    try:
        number = decimal.Decimal(value.strip())
    except decimal.InvalidOperation as err:
        raise PermanentError(f"sample value {value!r} is not a number", error_type="bad_response") from err
    if number.is_nan():
        raise NoDataError("the query returned NaN", reason="nan")
    if number.is_infinite():
        sign = "-" if number < 0 else "+"
        raise NoDataError(f"the query returned {sign}Inf", reason=f"{sign}inf")
    nanos = number.quantize(_NANO, context=_CONTEXT)
    milli = _CONTEXT.multiply(nanos, decimal.Decimal(1000))
    return int(milli.to_integral_value(rounding=decimal.ROUND_UP, context=_CONTEXT))


def check_result_type(answer: Answer, expected: str) -> None:
    """Refuse an answer of another result type than the binding expects."""
    if answer.result_type != expected:
        raise PermanentError(
            f"expected a {expected} result, the query returned a {answer.result_type}",
            error_type="unexpected_result_type",
        )


@dataclass(frozen=True, slots=True)
class SplitAnswer:
    """Value series, and the oldest sample time per group when the query asked for sample times."""

    values: tuple[Series, ...]
    sample_times: dict[tuple[str, ...], float]


def split_answer(answer: Answer, grouping: Sequence[str]) -> SplitAnswer:
    """Separate the marker-labelled timestamp series from the value series (once per answer)."""
    return answer.memo(("split", tuple(grouping)), lambda: _split(answer, grouping))


def by_label(answer: Answer, grouping: Sequence[str], label: str) -> dict[str, list[Series]]:
    """The value series indexed by one label's value (once per answer): each target then looks up only its
    own pods instead of walking its namespace's whole answer."""

    def index() -> dict[str, list[Series]]:
        found: dict[str, list[Series]] = {}
        for series in split_answer(answer, grouping).values:
            value = series.labels.get(label)
            if value is not None:
                found.setdefault(value, []).append(series)
        return found

    return answer.memo(("by_label", tuple(grouping), label), index)


def _split(answer: Answer, grouping: Sequence[str]) -> SplitAnswer:
    values = []
    sample_times: dict[tuple[str, ...], float] = {}
    for series in answer.series:
        if series.labels.get(TIMESTAMP_MARKER) == TIMESTAMP_MARKER_VALUE:
            number = decimal.Decimal(series.value)
            if number.is_finite():
                sample_times[group_key(series, grouping)] = float(number)
        else:
            values.append(series)
    return SplitAnswer(values=tuple(values), sample_times=sample_times)


def group_key(series: Series, grouping: Sequence[str]) -> tuple[str, ...]:
    """The values of the grouping labels of a series."""
    return tuple(series.labels.get(label, "") for label in grouping)


def utc(seconds: float) -> datetime:
    """A Prometheus time (seconds since the epoch) as an aware datetime."""
    return datetime.fromtimestamp(seconds, UTC)


def no_data(message: str) -> NoDataError:
    """An empty-result error."""
    return NoDataError(message, reason="empty")
