"""The demo's load: the trace excerpt, time-compressed to the run's duration, as web load and queue arrivals.

The web service gets the excerpt scaled so its busiest minute is `WEB_PEAK` requests per second. The worker's
queue gets the web load's excess over `JOBS_ABOVE` requests per second as jobs per second (a flash crowd's
overflow, offloaded to a queue; nothing on a quiet day), so it starts idle, fills during the crowd and
drains after it. The demo clock starts when every process is ready: before that, and for a lead-in of
`LEAD` of the duration, the load is the excerpt's first value; the excerpt then plays over `CYCLE` of the
duration and its last value holds for the rest (the scale-down).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from autoscaler.sim.load import Trace, read_trace

WEB_PEAK = 400.0  # requests/s in the excerpt's busiest minute
JOBS_ABOVE = 180.0  # requests/s above which the web load's excess becomes jobs for the worker
WEB_CPU_PER_REQUEST = 0.01  # cores one request per second uses (10 ms of CPU per request)
WORKER_CAPACITY = 25.0  # jobs per second one ready worker processes
LEAD = 0.12  # share of the duration before the excerpt starts
CYCLE = 0.6  # share of the duration the excerpt plays over
DEFAULT_CYCLE_BASE = 120.0  # the duration the timing is computed for when the demo runs until Ctrl-C


@dataclass(frozen=True, slots=True)
class Timing:
    """Demo seconds to trace seconds: `speed * (t - lead)` over the excerpt's span."""

    lead_seconds: float
    speed: float  # trace seconds per demo second

    @classmethod
    def for_duration(cls, duration: float, trace: Trace) -> Timing:
        base = duration if duration > 0 else DEFAULT_CYCLE_BASE
        return cls(lead_seconds=LEAD * base, speed=trace.duration_seconds / (CYCLE * base))

    def trace_seconds(self, demo_seconds: float) -> float:
        return self.speed * (demo_seconds - self.lead_seconds)


class DemoClock:
    """Seconds since the demo started (`start()`), 0 before; thread-safe, read by the load model's curves."""

    def __init__(self) -> None:
        self._started: float | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            self._started = time.monotonic()

    def seconds(self) -> float:
        with self._lock:
            return 0.0 if self._started is None else time.monotonic() - self._started


class Scenario:
    """The two curves the load model replays (functions of the generator's trace time, ignored: the demo clock
    decides), and the same values for the table and the chart."""

    def __init__(self, trace: Trace, *, duration: float, clock: DemoClock) -> None:
        self.trace = trace.scaled(peak=WEB_PEAK)
        self.timing = Timing.for_duration(duration, trace)
        self.clock = clock

    @classmethod
    def from_file(cls, path: Path, *, duration: float, clock: DemoClock) -> Scenario:
        return cls(read_trace(path), duration=duration, clock=clock)

    def web_load(self, _trace_time: float = 0.0) -> float:
        """Requests per second on the web service now."""
        return self.web_load_at(self.clock.seconds())

    def jobs(self, _trace_time: float = 0.0) -> float:
        """Jobs per second arriving in the worker's queue now."""
        return self.jobs_at(self.clock.seconds())

    def web_load_at(self, demo_seconds: float) -> float:
        return self.trace(self.trace.times[0] + self.timing.trace_seconds(demo_seconds))

    def jobs_at(self, demo_seconds: float) -> float:
        return max(0.0, self.web_load_at(demo_seconds) - JOBS_ABOVE)
