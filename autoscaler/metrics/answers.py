"""Checking a Prometheus answer and turning its numbers into the core's milli-units.

"No data" is never zero: NaN, +Inf and -Inf raise `NoDataError`, and so does an empty answer unless the
binding opted into `emptyAsZero` (the caller decides that). Values are rounded to nano-units first (the
resolution metrics-server reports CPU in; float noise below it is not signal), then up, away from zero, to
milli-units, as Kubernetes' `Quantity.MilliValue()` does. A value whose milli-units do not fit an int64 (what
the HPA's arithmetic holds; past it the core's Go-faithful arithmetic wraps) is refused as a bad response.
An instant query answers at the time it was asked: `check_answer_time` refuses a sample stamped otherwise.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from autoscaler.metrics.context import Answer, Series
from autoscaler.metrics.errors import BadResponseError, NoDataError, StaleDataError
from autoscaler.metrics.promql import TIMESTAMP_MARKER, TIMESTAMP_MARKER_VALUE

_CONTEXT = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_EVEN)
_NANO = decimal.Decimal("1e-9")
# int64: what a Kubernetes quantity's milli-value, and so the HPA's arithmetic, holds.
MAX_MILLI = 2**63 - 1
# Prometheus answers with the asked time to the millisecond; allow for the float's last bits.
_STAMP_TOLERANCE_SECONDS = 0.001


def to_milli(value: str) -> int:
    """Prometheus's text of a float as milli-units; `NoDataError` for NaN and infinities, `BadResponseError`
    for text that is no number and for a value whose milli-units do not fit an int64."""
    try:
        number = decimal.Decimal(value.strip())
    except decimal.InvalidOperation as err:
        raise BadResponseError(f"sample value {value[:40]!r} is not a number") from err
    if number.is_nan():
        raise NoDataError("the query returned NaN", reason="nan")
    if number.is_infinite():
        sign = "-" if number < 0 else "+"
        raise NoDataError(f"the query returned {sign}Inf", reason=f"{sign}inf")
    if abs(number) > MAX_MILLI:  # far out of range: do not even round (1e400 would cost 400 digits)
        raise _out_of_range(value)
    nanos = number.quantize(_NANO, context=_CONTEXT)
    milli = int(_CONTEXT.multiply(nanos, decimal.Decimal(1000)).to_integral_value(decimal.ROUND_UP, _CONTEXT))
    if abs(milli) > MAX_MILLI:
        raise _out_of_range(value)
    return milli


def check_milli_total(total: int, *, what: str) -> int:
    """`total` (a sum of milli-values) if it fits an int64, else `BadResponseError` naming `what`."""
    if abs(total) > MAX_MILLI:
        raise BadResponseError(
            f"{what} is {total / 1000:.6g}, past what the HPA's int64 milli-units hold (±{MAX_MILLI / 1000:.6g})"
        )
    return total


def _out_of_range(value: str) -> BadResponseError:
    # Prometheus writes 1e308 with all its 309 digits: show such a value in exponent form.
    shown = value if len(value) <= 24 else f"{float(value):.6g}"
    return BadResponseError(
        f"sample value {shown!r} is out of range: its milli-units do not fit the HPA's int64 "
        f"(|value| <= {MAX_MILLI / 1000:.6g})"
    )


def check_result_type(answer: Answer, expected: str) -> None:
    """Refuse an answer of another result type than the binding expects (read from `resultType`)."""
    if answer.result_type != expected:
        raise BadResponseError(
            f"expected a {expected} result, the query returned a {answer.result_type}",
            error_type="unexpected_result_type",
        )


def check_answer_time(stamp: float, *, asked: datetime, staleness_seconds: float, what: str = "the answer") -> None:
    """Refuse a sample not stamped with the time the instant query asked for: older than the staleness
    budget is `StaleDataError` (a cached, old answer), any other difference is `BadResponseError`."""
    asked_seconds = asked.timestamp()
    if abs(stamp - asked_seconds) <= _STAMP_TOLERANCE_SECONDS:
        return
    age = asked_seconds - stamp
    if age > staleness_seconds:
        raise StaleDataError(
            f"{what} is stamped {age:.0f} s before the time asked, over the {staleness_seconds:g} s staleness budget",
            age_seconds=age,
            budget_seconds=staleness_seconds,
        )
    where = f"{age:.3f} s before" if age > 0 else f"{-age:.3f} s after"
    raise BadResponseError(f"{what} is stamped {where} the time asked; an instant query answers at the time asked")


@dataclass(frozen=True, slots=True)
class SplitAnswer:
    """Value series, and the marker series (the sample times) per group when the query asked for them."""

    values: tuple[Series, ...]
    markers: dict[tuple[str, ...], Series]


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
    markers: dict[tuple[str, ...], Series] = {}
    for series in answer.series:
        if series.labels.get(TIMESTAMP_MARKER) == TIMESTAMP_MARKER_VALUE:
            key = group_key(series, grouping)
            if key in markers:
                raise BadResponseError(f"two sample-time series for the group {key!r}")
            markers[key] = series
        else:
            values.append(series)
    return SplitAnswer(values=tuple(values), markers=markers)


def group_key(series: Series, grouping: Sequence[str]) -> tuple[str, ...]:
    """The values of the grouping labels of a series."""
    return tuple(series.labels.get(label, "") for label in grouping)


def utc(seconds: float) -> datetime:
    """A Prometheus time (seconds since the epoch) as an aware datetime."""
    return datetime.fromtimestamp(seconds, UTC)


def marker_time(marker: Series, *, asked: datetime, staleness_seconds: float) -> float:
    """The sample time a marker series carries (`timestamp()` of the freshness selector), checked: stamped
    with the time asked, and a finite time no later than it (a sample cannot come from the future)."""
    check_answer_time(marker.timestamp, asked=asked, staleness_seconds=staleness_seconds, what="a sample-time series")
    try:
        number = decimal.Decimal(marker.value)
    except decimal.InvalidOperation as err:
        raise BadResponseError(f"a sample time {marker.value[:40]!r} is not a number") from err
    if not number.is_finite():
        raise BadResponseError(f"a sample time is {marker.value}; timestamp() gives a time")
    seconds = float(number)
    if seconds > asked.timestamp() + _STAMP_TOLERANCE_SECONDS:
        raise BadResponseError(f"a sample time is {seconds - asked.timestamp():.3f} s after the time asked")
    return seconds


def no_data(message: str) -> NoDataError:
    """An empty-result error."""
    return NoDataError(message, reason="empty")
