"""Go's integer and float semantics, where the HPA's arithmetic depends on them.

Python's `//` floors and `/` raises on zero; Go's integer division truncates toward zero, float division
by zero gives ±Inf or NaN, and an out-of-range float-to-integer conversion gives the "integer
indefinite" value on amd64 (the platform kube-controller-manager ships for). Keeping these rules in one
place lets the calculator read like replica_calculator.go.
"""

from __future__ import annotations

import math

MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)


def trunc_div(a: int, b: int) -> int:
    """Go's `a / b` on integers: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def fdiv(a: float, b: float) -> float:
    """Go's float64 division, where dividing by zero gives ±Inf or NaN instead of raising."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * (math.copysign(1.0, b))
    return a / b


def wrap_int64(value: int) -> int:
    """Two's-complement wrap to int64, as Go's int64 addition overflows."""
    return (value - MIN_INT64) % 2**64 + MIN_INT64


def to_int64(value: float) -> int:
    """Go's int64(float64) on amd64: truncation, and MinInt64 for NaN and out-of-range values."""
    if math.isnan(value) or math.isinf(value):
        return MIN_INT64
    truncated = int(value)
    if truncated > MAX_INT64 or truncated < MIN_INT64:
        return MIN_INT64
    return truncated


def to_int32(value: float) -> int:
    """Go's int32(float64) on amd64 (CVTTSD2SL): truncation, and MinInt32 for NaN and out-of-range values."""
    if math.isnan(value) or math.isinf(value):
        return MIN_INT32
    truncated = int(value)
    if truncated > MAX_INT32 or truncated < MIN_INT32:
        return MIN_INT32
    return truncated


def ceil_int32(value: float) -> int:
    """`int32(math.Ceil(value))`."""
    if math.isnan(value) or math.isinf(value):
        return to_int32(value)
    return to_int32(math.ceil(value))


def saturated_int32(value: float) -> int:
    """`int32(value)` for a count, clamped to the int32 range where Go's conversion would wrap (NaN: 0)."""
    if math.isnan(value):
        return 0
    return max(MIN_INT32, min(MAX_INT32, int(value)))


def saturated_ceil_int32(value: float) -> int:
    """A replica count: `int32(math.Ceil(value))`, but at most MaxInt32 where Go's conversion would wrap.

    Upstream caps some replica counts at MaxInt32 (getUsageRatioReplicaCount, GetExternalPerPodMetricReplicas)
    and converts others unchecked, where a ratio past the int32 range becomes MinInt32, a proposal that the
    floor at 0 turns into a scale to the minimum. Every count the core proposes saturates instead
    (docs/compatibility.md).
    """
    if not math.isnan(value) and value > MAX_INT32:
        return MAX_INT32
    return ceil_int32(value)  # below the range Go gives MinInt32, which the proposal's floor at 0 absorbs
