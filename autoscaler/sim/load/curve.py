"""Load curves: demand as a function of trace time (seconds), from a constant, steps, a Python function or a
trace CSV (`timestamp_seconds,value`, linearly interpolated), and the mapping from wall time to trace time.

A curve's value is a demand in load units per (wall-clock) second; `speed` only compresses the curve's
shape in time, it never multiplies rates. Standard library only; no clock reads (time is a parameter).
"""

from __future__ import annotations

import bisect
import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

Curve = Callable[[float], float]

TIME_COLUMN, VALUE_COLUMN = "timestamp_seconds", "value"


class CurveError(ValueError):
    """A curve that cannot be built; the message names the file, row or value."""


def constant(value: float) -> Curve:
    """The same demand at every instant."""
    _finite(value, "constant")
    if value < 0:
        raise CurveError(f"constant: {value} is negative; a demand is >= 0")
    return lambda _t: value


def steps(points: Sequence[tuple[float, float]]) -> Curve:
    """A step function: each (start, value) holds from its start to the next; before the first, the first."""
    if not points:
        raise CurveError("steps: no points")
    ordered = sorted(points)
    for at, value in ordered:
        _finite(at, "steps: time")
        _finite(value, "steps: value")
        if value < 0:
            raise CurveError(f"steps: value {value} at {at} s is negative; a demand is >= 0")
    starts = [at for at, _ in ordered]
    values = [value for _, value in ordered]

    def curve(t: float) -> float:
        return values[max(0, bisect.bisect_right(starts, t) - 1)]

    return curve


def parse_steps(text: str) -> Curve:
    """`steps()` from text: `0:10,60:40,120:5` (trace seconds : value)."""
    points = []
    for part in text.split(","):
        at, sep, value = part.partition(":")
        try:
            if not sep:
                raise ValueError
            points.append((float(at), float(value)))
        except ValueError as err:
            raise CurveError(f"steps: {part.strip()!r} is not SECONDS:VALUE (e.g. '0:10,60:40')") from err
    return steps(points)


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace's samples, linearly interpolated; the last value holds after the end."""

    times: tuple[float, ...]
    values: tuple[float, ...]

    @property
    def peak(self) -> float:
        return max(self.values)

    @property
    def duration_seconds(self) -> float:
        return self.times[-1] - self.times[0]

    def __call__(self, t: float) -> float:
        index = bisect.bisect_right(self.times, t)
        if index == 0:
            return self.values[0]
        if index == len(self.times):
            return self.values[-1]
        t0, t1 = self.times[index - 1], self.times[index]
        v0, v1 = self.values[index - 1], self.values[index]
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0)

    def scaled(self, *, peak: float) -> Trace:
        """The same shape with its maximum at `peak` (a trace of zeros stays zeros)."""
        _finite(peak, "peak")
        if peak < 0:
            raise CurveError(f"peak {peak} is negative")
        factor = peak / self.peak if self.peak > 0 else 0.0
        return Trace(self.times, tuple(v * factor for v in self.values))


def read_trace(path: Path) -> Trace:
    """A trace CSV with a header naming `timestamp_seconds` and `value` (other columns are ignored)."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as err:
        raise CurveError(f"{path}: cannot read: {err}") from err
    if not rows:
        raise CurveError(f"{path}: empty; expected a header `{TIME_COLUMN},{VALUE_COLUMN}`")
    header = [cell.strip() for cell in rows[0]]
    missing = [name for name in (TIME_COLUMN, VALUE_COLUMN) if name not in header]
    if missing:
        raise CurveError(f"{path}: the header {','.join(header)!r} has no column {', '.join(missing)}")
    at, val = header.index(TIME_COLUMN), header.index(VALUE_COLUMN)
    times: list[float] = []
    values: list[float] = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            t, v = float(row[at]), float(row[val])
        except (IndexError, ValueError) as err:
            raise CurveError(f"{path}: line {number}: {','.join(row)!r} is not numbers in both columns") from err
        if not (math.isfinite(t) and math.isfinite(v)) or v < 0:
            raise CurveError(f"{path}: line {number}: {t}, {v}: times and values must be finite, values >= 0")
        if times and t <= times[-1]:
            raise CurveError(f"{path}: line {number}: time {t} is not after {times[-1]}")
        times.append(t)
        values.append(v)
    if not times:
        raise CurveError(f"{path}: no samples after the header")
    return Trace(tuple(times), tuple(values))


@dataclass(frozen=True, slots=True)
class Timeline:
    """Wall time to trace time: `offset + speed * (wall - start)`."""

    start: float
    speed: float = 1.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        _finite(self.speed, "speed")
        _finite(self.offset, "offset")
        if self.speed <= 0:
            raise CurveError(f"speed {self.speed} must be > 0 (trace seconds per real second)")

    def trace_time(self, wall: float) -> float:
        return self.offset + self.speed * (wall - self.start)


def _finite(value: float, what: str) -> None:
    if not math.isfinite(value):
        raise CurveError(f"{what}: {value} is not a finite number")
