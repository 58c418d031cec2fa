"""Load traces: a CSV `timestamp_seconds,value` and its `.meta.json` sidecar, read strictly.

A problem names the file and the line (or the sidecar's field). Values stay in the trace's unit; `Trace.rate`
applies the sidecar's `to_per_second_factor` (null for utilisation traces, whose values are demand in
arbitrary units).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class TraceError(Exception):
    """A trace that cannot be used; `source` is the file, `line` the 1-based line (0: the file as a whole)."""

    def __init__(self, message: str, *, source: str, line: int = 0) -> None:
        self.message = message
        self.source = source
        self.line = line
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt by keyword: the default pickling calls the class with the formatted text alone, which fails,
        # and bench/quality.py's worker processes send their errors back pickled.
        return (_rebuild_trace_error, (self.message, self.source, self.line))


def _rebuild_trace_error(message: str, source: str, line: int) -> TraceError:
    return TraceError(message, source=source, line=line)


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace's points (seconds since its first point, values in its unit) and its rate factor."""

    name: str
    times: tuple[float, ...]
    values: tuple[float, ...]
    per_second_factor: float | None

    def rates(self) -> tuple[float, ...]:
        """The values as demand per second (the values themselves when the trace has no factor)."""
        factor = self.per_second_factor
        return self.values if factor is None else tuple(v * factor for v in self.values)


def parse_csv(text: str, *, source: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The points of a trace CSV; raises TraceError naming the line of the first problem."""
    lines = text.removeprefix("\ufeff").splitlines()  # a byte-order mark (spreadsheet exports) is not the header
    if not lines or [c.strip() for c in lines[0].split(",")] != ["timestamp_seconds", "value"]:
        raise TraceError("the header must be 'timestamp_seconds,value'", source=source, line=1)
    times: list[float] = []
    values: list[float] = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) != 2:
            raise TraceError(f"expected 2 comma-separated fields, found {len(cells)}", source=source, line=number)
        try:
            when, value = float(cells[0]), float(cells[1])
        except ValueError:
            raise TraceError(f"not a pair of numbers: {line.strip()[:60]!r}", source=source, line=number) from None
        if not (math.isfinite(when) and math.isfinite(value)):
            raise TraceError("timestamp and value must be finite numbers", source=source, line=number)
        if value < 0:
            raise TraceError(f"value {cells[1].strip()} is negative: demand is 0 or more", source=source, line=number)
        if times and when <= times[-1]:
            raise TraceError(
                f"timestamp {cells[0].strip()} does not increase (the previous is {times[-1]:g})",
                source=source,
                line=number,
            )
        times.append(when)
        values.append(value)
    if len(times) < 2:
        raise TraceError("a trace needs at least two points", source=source)
    start = times[0]
    return tuple(t - start for t in times), tuple(values)


def factor_from_meta(data: Any, *, source: str) -> float | None:
    """The sidecar's `to_per_second_factor`: a positive number, or null for a utilisation trace."""
    if not isinstance(data, dict) or "to_per_second_factor" not in data:
        raise TraceError("to_per_second_factor: required field is missing (a number, or null)", source=source)
    factor = data["to_per_second_factor"]
    if factor is None:
        return None
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not math.isfinite(factor) or factor <= 0:
        raise TraceError(f"to_per_second_factor: must be a positive number or null, not {factor!r}", source=source)
    return float(factor)


def meta_path(csv_path: str) -> Path:
    """The sidecar of a trace CSV: `name.csv` -> `name.meta.json`."""
    path = Path(csv_path)
    return path.with_name(path.name.removesuffix(".csv") + ".meta.json")


def load_trace(path: str, *, per_second_factor: float | str | None = "meta") -> Trace:
    """Read a trace and its factor ("meta": from the sidecar, which must then exist; else the value given)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TraceError(f"cannot read the trace: {err}", source=path) from err
    times, values = parse_csv(text, source=path)
    factor: float | None
    if per_second_factor == "meta":
        meta = meta_path(path)
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TraceError(
                f"no sidecar {meta.name}: give --per-second-factor (a number, or 'none' for utilisation)", source=path
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise TraceError(f"cannot read the sidecar: {err}", source=str(meta)) from err
        factor = factor_from_meta(data, source=str(meta))
    else:
        assert not isinstance(per_second_factor, str)
        factor = per_second_factor
    name = Path(path).name.removesuffix(".csv")
    return Trace(name=name, times=times, values=values, per_second_factor=factor)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def sample(times: Sequence[float], values: Sequence[float], *, step: float, end: float) -> list[float]:
    """The trace linearly interpolated at 0, step, 2*step, ... (< end); constant after its last point."""
    out: list[float] = []
    count = math.ceil(end / step)
    j = 0
    last = len(times) - 1
    for k in range(count):
        t = k * step
        while j < last - 1 and times[j + 1] <= t:
            j += 1
        t0, t1 = times[j], times[j + 1]
        if t >= t1:
            out.append(values[j + 1])
        else:
            v0, v1 = values[j], values[j + 1]
            out.append(v0 + (v1 - v0) * (t - t0) / (t1 - t0))
    return out
