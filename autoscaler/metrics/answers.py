"""Checking a Prometheus answer and turning its numbers into the core's milli-units.

"No data" is never zero: NaN, +Inf and -Inf raise `NoDataError`, and so does an empty answer unless the
binding opted into `emptyAsZero` (the caller decides that). Values are rounded to nano-units first (the
resolution metrics-server reports CPU in; float noise below it is not signal), then up, away from zero, to
milli-units, as Kubernetes' `Quantity.MilliValue()` does. A value whose milli-units do not fit an int64 (what
the HPA's arithmetic holds; past it the core's Go-faithful arithmetic wraps) is refused as a bad response.
An instant query answers at the time it was asked: `check_answer_time` refuses a sample stamped otherwise.
"""

from __future__ import annotations

import contextlib
import decimal
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from autoscaler.metrics.context import Answer, Series, SeriesTable
from autoscaler.metrics.errors import BadResponseError, NoDataError, StaleDataError
from autoscaler.metrics.promql import TIMESTAMP_MARKER, TIMESTAMP_MARKER_VALUE

_CONTEXT = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_EVEN)
_NANO = decimal.Decimal("1e-9")
# int64: what a Kubernetes quantity's milli-value, and so the HPA's arithmetic, holds.
MAX_MILLI = 2**63 - 1
# Prometheus answers with the asked time to the millisecond; allow for the float's last bits.
STAMP_TOLERANCE_SECONDS = 0.001


# A finite decimal number, as Prometheus writes one (Go's 'f' or 'e' format): read with integers, exactly.
_DECIMAL = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,4}))?")
# Plain times, one per line: digits with at most one point among them (what `fast_marker_seconds` reads).
_PLAIN_TIMES = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:\n(?:[0-9]+\.?[0-9]*|\.[0-9]+))*")
# Digits before the point up to which a value's milli-units surely fit an int64 (below 10**15, its
# milli-units are below 10**18 < 2**63 - 1); larger values go through `Decimal`, which checks the bound.
_MAX_INTEGER_DIGITS = 15


def to_milli(value: str) -> int:
    """Prometheus's text of a float as milli-units; `NoDataError` for NaN and infinities, `BadResponseError`
    for text that is no number and for a value whose milli-units do not fit an int64."""
    # The common case, digits with or without a fraction (what Prometheus writes for most values), with string
    # methods: a third of the time of the regular expression's path, which reads the rest (and agrees).
    whole, point, fraction = value.partition(".")
    negative = whole[:1] == "-"
    if negative:
        whole = whole[1:]
    if whole.isdigit() and len(whole) <= _MAX_INTEGER_DIGITS and (fraction.isdigit() or not point) and value.isascii():
        if len(fraction) <= 9:
            nanos = int(whole + fraction.ljust(9, "0"))
        else:
            nanos = int(whole + fraction[:9])
            rest = fraction[9:]
            # Half to even at nano-units: above half rounds up, exactly half rounds to the even neighbour.
            if rest[0] > "5" or (rest[0] == "5" and (rest[1:].strip("0") or nanos % 2)):
                nanos += 1
        up = -(-nanos // 1_000_000)  # up, away from zero (the sign comes back below)
        return -up if negative else up
    milli = _exact_milli(value)
    return milli if milli is not None else _decimal_milli(value)


def _exact_milli(value: str) -> int | None:
    """`to_milli` of a plain finite decimal with integers only (no `Decimal`), or None for anything else
    (NaN, infinities, text that is no number, a value near or past the int64 bound): `_decimal_milli` reads
    those. Rounds as it does: half to even at nano-units, then up, away from zero, to milli-units."""
    found = _DECIMAL.fullmatch(value)
    if found is None:
        return None
    sign, whole, fraction, exponent = found.groups()
    fraction = fraction or ""
    digits = (whole + fraction).lstrip("0")
    if not whole and not fraction:
        return None
    if not digits:
        return 0
    shift = (int(exponent) if exponent else 0) - len(fraction)  # the value is int(digits) * 10**shift
    if len(digits) + shift > _MAX_INTEGER_DIGITS:
        return None
    scaled = shift + 9  # nano-units = int(digits) * 10**scaled
    if scaled >= 0:
        nanos: int = int(digits) * 10**scaled
    else:
        if len(digits) + scaled < -1:  # below half a nano-unit: rounds to zero
            return 0
        nanos, rest = divmod(int(digits), 10**-scaled)
        half = 5 * 10 ** (-scaled - 1)
        if rest > half or (rest == half and nanos % 2):
            nanos += 1
    milli = -(-nanos // 1_000_000)  # up, away from zero (the sign comes back below)
    return -milli if sign == "-" else milli


def _decimal_milli(value: str) -> int:
    """`to_milli` through `Decimal`: every text Python's `Decimal` reads, and every error."""
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
    if abs(stamp - asked_seconds) <= STAMP_TOLERANCE_SECONDS:
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


@dataclass(frozen=True, slots=True)
class PodIndex:
    """One answer's value series by pod (row numbers into its table), its marker series by group, and each
    value row's marker row: built once per answer and grouping, shared by every target of the namespace; no
    value is parsed here."""

    table: SeriesTable
    grouping: tuple[str, ...]
    rows: dict[str, list[int]]
    markers: dict[tuple[str, ...], int]
    # Value row -> the row of the marker of its group (only rows whose group has one).
    row_markers: dict[int, int]
    # Label values the readings keep (container names), one string object each per answer.
    strings: dict[str, str] = field(default_factory=dict)

    def label(self, row: int, name: str) -> str | None:
        """Series `row`'s value of label `name`, or None when it has no such label."""
        return self.table.labels[row].get(name)


def each_matches(many: re.Pattern[str], texts: Sequence[str]) -> bool:
    """Whether every text is whole one line of `many` (a pattern of texts one per line), in one match over them
    all; a text holding the separator would pass as two, so the lines are counted too. False for no texts."""
    joined = "\n".join(texts)
    return joined.count("\n") == len(texts) - 1 and many.fullmatch(joined) is not None


def pod_index(answer: Answer, grouping: Sequence[str], pod_label: str) -> PodIndex:
    """The answer's value series indexed by the `pod_label` value, its markers by group, and each value
    series' marker (once per answer): each target then looks up only its own pods instead of walking its
    namespace's answer. The labels are read a column at a time (one comprehension per label)."""

    def build() -> PodIndex:
        table = answer.table
        labels = table.labels
        index = PodIndex(table, tuple(grouping), {}, {}, {})
        rows, markers = index.rows, index.markers
        # Each row's group key ("" for a label it lacks), whether it is a marker, and its pod (None: none).
        keys: list[tuple[str, ...]] = []
        if len(grouping) >= 2:  # every series with every grouping label (the common case): one C-level map
            with contextlib.suppress(KeyError):
                keys = list(map(operator.itemgetter(*grouping), labels))
        if len(keys) != len(labels):
            columns = [[one.get(name, "") for one in labels] for name in grouping]
            keys = list(zip(*columns, strict=True)) if columns else [()] * len(labels)
        flags = [one.get(TIMESTAMP_MARKER) == TIMESTAMP_MARKER_VALUE for one in labels]
        pods = [one.get(pod_label) for one in labels]
        values: list[int] = []
        for row, flag in enumerate(flags):
            if flag:
                key = keys[row]
                if key in markers:
                    raise BadResponseError(f"two sample-time series for the group {key!r}")
                markers[key] = row
                continue
            pod = pods[row]
            if pod is not None:
                rows.setdefault(pod, []).append(row)
                values.append(row)
        if markers:
            row_markers, find = index.row_markers, markers.get
            for row in values:
                marker = find(keys[row])
                if marker is not None:
                    row_markers[row] = marker
        return index

    return answer.memo(("pod_index", tuple(grouping), pod_label), build)


def sample_times(
    answer: Answer, index: PodIndex, *, has_timestamps: bool, low: float, high: float
) -> list[float] | None:
    """Every row's sample time, by row, when the whole answer is the common case: every series stamped within
    [low, high] (the time asked, with its tolerance) and, with `has_timestamps`, every marker a plain time no
    later than `high`, so each value row's time is its marker's (or its own stamp). Checked and computed a
    column at a time, once per answer and time asked; None for anything else: each target then checks its own
    rows one by one, and the exact checks give their messages. Gives what the one-by-one checks give."""

    def compute() -> list[float] | None:
        stamps = index.table.stamps
        if stamps and (min(stamps) < low or max(stamps) > high):
            return None
        times = list(stamps)
        if not has_timestamps or not index.row_markers:
            return times
        rows = list(index.markers.values())
        texts = [index.table.values[row] for row in rows]
        if not each_matches(_PLAIN_TIMES, texts):
            return None
        seconds = list(map(float, texts))
        if max(seconds) > high:
            return None
        of_marker = dict(zip(rows, seconds, strict=True))
        for row, marker in index.row_markers.items():
            times[row] = of_marker[marker]
        return times

    return answer.memo(("sample_times", index.grouping, has_timestamps, low, high), compute)


def label_values(answer: Answer, name: str) -> set[str | None]:
    """The distinct values of label `name` over the answer's series (None: a series without it), once."""
    return answer.memo(("label_values", name), lambda: {one.get(name) for one in answer.table.labels})


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
    return marker_seconds(marker.value, marker.timestamp, asked=asked, staleness_seconds=staleness_seconds)


def marker_seconds(value: str, stamp: float, *, asked: datetime, staleness_seconds: float) -> float:
    """`marker_time` of a marker's value text and stamp."""
    check_answer_time(stamp, asked=asked, staleness_seconds=staleness_seconds, what="a sample-time series")
    plain = _DECIMAL.fullmatch(value)
    if plain is not None and (plain[2] or plain[3]):
        seconds = float(value)  # correctly rounded, as float(Decimal(value)) is
    else:
        try:
            number = decimal.Decimal(value)
        except decimal.InvalidOperation as err:
            raise BadResponseError(f"a sample time {value[:40]!r} is not a number") from err
        if not number.is_finite():
            raise BadResponseError(f"a sample time is {value}; timestamp() gives a time")
        seconds = float(number)
    if seconds > asked.timestamp() + STAMP_TOLERANCE_SECONDS:
        raise BadResponseError(f"a sample time is {seconds - asked.timestamp():.3f} s after the time asked")
    return seconds


def fast_marker_seconds(value: str, stamp: float, *, low: float, high: float) -> float | None:
    """`marker_seconds` of the common case (stamped within [low, high], the time asked with its tolerance, and
    a plain decimal time no later than `high`); None for anything else, which `marker_seconds` reads."""
    if not low <= stamp <= high:
        return None
    # Digits with at most one point among them, what Prometheus writes for a time, are checked with string
    # methods (a fraction of the regular expression's cost); the expression reads the other forms.
    if not (value.replace(".", "", 1).isdigit() and value.isascii()):
        plain = _DECIMAL.fullmatch(value)
        if plain is None or not (plain[2] or plain[3]):
            return None
    seconds = float(value)
    return seconds if seconds <= high else None


def no_data(message: str) -> NoDataError:
    """An empty-result error."""
    return NoDataError(message, reason="empty")
