"""Kubernetes' text forms of values: quantities ("150m", "1Gi", "1e3"), durations ("1m30s"), times, and
HTTP's Retry-After.

Shared by every layer that reads Kubernetes objects (spec, kube, metrics), exactly as Kubernetes reads them:
`milli_value` is resource.Quantity.MilliValue() (the value times 1000, rounded away from zero);
`approximate_float` is Quantity.AsApproximateFloat64(), which the HPA uses for `tolerance`; `format_milli`
is the canonical DecimalSI text of resource.NewMilliQuantity; `parse_time` / `format_time` are RFC 3339;
`parse_retry_after` reads the Retry-After header for both network layers (Prometheus and Kubernetes).
Standard library only, like the rest of the core, and no clock reads: `now` is a parameter.
"""

from __future__ import annotations

import email.utils
import re
from datetime import UTC, datetime
from decimal import ROUND_UP, Decimal, DecimalException, localcontext
from functools import lru_cache
from typing import Any

_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?P<suffix>[eE][+-]?[0-9]+|[numkMGTPE]i?|Ki)?$"
)
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
# Far past any quantity a milli-value can hold (int64), and small enough that exact arithmetic stays cheap.
_MAX_EXPONENT = 1000
_MAX_DIGITS = 200


class QuantityError(ValueError):
    """Not a Kubernetes quantity."""


def _parts(text: str) -> tuple[Decimal, int, int]:
    """(number, decimal exponent, binary exponent) of a quantity string."""
    if not isinstance(text, str):
        raise QuantityError(f"quantities must be strings or numbers, not {type(text).__name__}")
    match = _QUANTITY.match(text.strip())
    if not match:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (e.g. '250m', '1.5', '2Gi', '1e3')")
    suffix = match["suffix"] or ""
    if len(match["number"]) > _MAX_DIGITS:
        raise QuantityError(f"{text[:40]!r}... is out of range (a number longer than {_MAX_DIGITS} characters)")
    number = Decimal(match["number"])
    if suffix in _BINARY_SUFFIXES:
        return number, 0, _BINARY_SUFFIXES[suffix]
    if suffix in _DECIMAL_SUFFIXES:
        return number, _DECIMAL_SUFFIXES[suffix], 0
    if suffix[:1] in "eE":
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(f"{text!r} is out of range (an exponent beyond ±{_MAX_EXPONENT})")
        return number, exponent, 0
    raise QuantityError(f"{text!r} has an unknown suffix {suffix!r}")


def quantity_text(value: str | int | float) -> str:
    """Quantities may be written as YAML numbers; Kubernetes reads them as their decimal text."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return value


def exact_value(text: str | int | float) -> Decimal:
    number, exp10, exp2 = _parts(quantity_text(text))
    with localcontext() as ctx:
        ctx.prec = 200
        return number * (Decimal(10) ** exp10) * (Decimal(2) ** exp2)


def milli_value(text: str | int | float) -> int:
    """Quantity.MilliValue(): rounds up, away from zero, when the value has finer than milli precision."""
    try:
        with localcontext() as ctx:
            ctx.prec = 200
            milli = exact_value(text) * 1000
            return int(milli.to_integral_value(rounding=ROUND_UP))
    except DecimalException as err:
        raise QuantityError(f"{text!r} is out of range") from err


def approximate_float(text: str | int | float) -> float:
    """Quantity.AsApproximateFloat64(): the unscaled integer times a power of ten."""
    number, exp10, exp2 = _parts(quantity_text(text))
    sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    if exp2:
        return float(exact_value(text))
    total = exponent + exp10
    if total == 0:
        return float(unscaled)
    try:
        return float(unscaled) * (10.0**total)
    except OverflowError:
        return float(exact_value(text))  # past float64: ±inf, or the value where 10.0**total alone overflows


def format_milli(milli: int) -> str:
    """The DecimalSI text of resource.NewMilliQuantity(milli): "1500m", "2", "3k"."""
    if milli % 1000:
        return f"{milli}m"
    value = milli // 1000
    for suffix in ("", "k", "M", "G", "T", "P"):
        if value % 1000 or value == 0 or suffix == "P":
            return f"{value}{suffix}"
        value //= 1000
    return f"{value}E"  # pragma: no cover - loop returns at "P"


_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(value: str | int | float) -> float:
    """A metav1.Duration ("30s", "1m0s", "500ms") or a number of seconds."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        return float(value)
    text = value.strip()
    if text in ("0", "-0", "+0"):
        return 0.0
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    pos, total = 0, 0.0
    for match in _DURATION_PART.finditer(body):
        if match.start() != pos:
            break
        total += float(match[1]) * _UNITS[match[2]]
        pos = match.end()
    if pos != len(body) or not body:
        raise QuantityError(f"{value!r} is not a duration (e.g. '30s', '1m30s', '500ms')")
    return sign * total


def parse_time(value: Any) -> datetime:
    """An RFC 3339 time ("2026-01-02T15:04:05Z", fractions allowed); a time without zone is UTC."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError:
            raise ValueError(f"{value!r} is not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)") from None
    else:
        raise ValueError(f"{value!r} is not an RFC 3339 time string")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    """RFC 3339 in UTC, with fractional seconds only when there are any."""
    return _format_utc(value.astimezone(UTC))


@lru_cache(maxsize=4096)  # the same few instants in thousands of states (a tick's time, a scale event's)
def _format_utc(value: datetime) -> str:
    # Keyed by the instant in UTC: equal keys are one instant (local times equal across a DST fold are not).
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + "Z"


# A server may ask for any wait; none of our callers waits more than a fraction of a sync period, so longer
# answers all mean "not in this tick". Capping keeps the value finite (a 400-digit header is still a number).
MAX_RETRY_AFTER_SECONDS = 86400.0


def parse_retry_after(value: str | None, *, now: datetime) -> float | None:
    """Seconds to wait from an HTTP Retry-After value: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).

    None when absent, empty or neither form (negative, fractional, garbage); a date in the past is 0; any
    wait is capped at `MAX_RETRY_AFTER_SECONDS`. `now` (timezone-aware) dates the HTTP-date form.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("parse_retry_after: now must be timezone-aware")
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():  # delay-seconds = 1*DIGIT (ASCII only: "²" is a digit to Python)
        digits = text.lstrip("0") or "0"
        if len(digits) > len(str(int(MAX_RETRY_AFTER_SECONDS))):
            return MAX_RETRY_AFTER_SECONDS
        return min(float(digits), MAX_RETRY_AFTER_SECONDS)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000" means UTC with no claim about the local zone (RFC 5322 §3.3)
        when = when.replace(tzinfo=UTC)
    return min(max(0.0, (when - now).total_seconds()), MAX_RETRY_AFTER_SECONDS)
