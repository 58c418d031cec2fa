"""`mode: predictive`: a forecast of the pods the metrics will need once a new pod is ready, with its reasons.

Pure and stdlib only; `now` and the history are parameters, the history comes back as plain data for the
behaviour state (serialised by core/state.py). The decision core calls `propose` with, per metric, how many pods
at the target the current reading needs (the HPA's usage ratio x its ready pods) and whether a CPU utilization
reading is saturated; the answer replaces the metrics' proposal, and the HPA's stabilization, rate limits and
min/max apply to it as to the HPA's own. The model and its tuning: docs/performance.md, "mode: predictive".

The forecast, each sync period:
- `required`: the largest need of the metrics (of a CPU Utilization reading: its usage ratio x the pods that served
  the load over the metric window, a pod the HPA leaves out because it became Ready within
  `serving_window_seconds` counted for the share of that window it served, where the HPA's count has the need
  drop right after new pods are ready); a saturated CPU reading (at or above `saturation_percent` of the
  request) hides how much more is wanted, so it counts `saturation_factor` times, plus `saturation_rise` x the
  share of the need (without the factor) that rose within `burst_rise_seconds` (Knative's panic mode, in spirit:
  scale by more than the reading shows while saturated; a reading that crept into saturation hides little, one
  that jumped into it may hide a rise as large again);
- the history keeps `(time, required, unboosted)` (`unboosted`: the need without the saturation factor) for the
  longest of the windows below; with less than `min_history_seconds` of it, or when the least-squares line
  through the last `trend_seconds` of the unboosted needs fits worse than `max_noise` (its RMS residual over the
  mean), the HPA's proposal is taken (fallback);
- rising: the line's slope (of the unboosted needs: a saturation onset is not a trend) carried
  `horizon_seconds` ahead (what the 60 s window hides + the start-up delay + one sync period), added to the
  need now, only when its rise beats `trend_significance` RMS residuals; falling: the need now (a pod is
  removed at once: nothing to anticipate);
- steady: the count covers the larger of the forecast and the largest need of the last
  `scale_down_window_seconds` (a scale-down stabilization of needs, not of forecasts), sized at `fill` of it: a
  forecast that does not lag can run pods closer to their capacity than the target (0.8: a 70 % target runs
  at up to 87.5 %), plus `fill_noise` x the trend's relative RMS residual (a noisier need, less filled);
- rises: a rise as fast as the fastest of the scale-down window (the largest rise of the unboosted need within
  `horizon_seconds`) may come again before a new pod is ready, so the count also covers the need now plus
  `rise_margin` of that rise, at the same fill;
- bursts: an unboosted need at least `burst_ratio` times the lowest of the `burst_rise_seconds` before it (at
  least one pod) rose faster than a new pod can start (a saturation onset alone is not one); such bursts come
  back, so while `burst_repeats` of them (each more than `burst_rise_seconds` after the first reading of the one
  before: one alone may be a spike that does not come back) are in the last `burst_hold_seconds` the count
  covers, at the target, the largest need that `burst_readings` readings of that window reached (each as used,
  saturation factor included, or `burst_factor` x what was read, whichever is larger: a 60 s mean understates
  the peak of a burst shorter than it; one reading alone, which may have caught a burst's peak in its few
  scrapes, does not set the cover of the whole hold);
  Knative's panic mode: no scale-down while panicking;
- the count moves only when what it covers is more than `tolerance_up` above or `tolerance_down` below it
  (fewer, larger writes: up in one step to the forecast plus `headroom`, down in one step to what it covers),
  and never down while the history is shorter than `scale_down_window_seconds` (the window's largest need is
  not known yet: the count it started with is held, as the HPA's stabilization holds its first recommendation);
- no scale-down within `downscale_delay_seconds` of the last scale-down (kept in the behaviour state; the HPA's
  downscale delay before Kubernetes 1.12, counted from a scale-down only: after an up-step the scale-down window
  already holds the rise's need for its length) unless what the count covers is more than
  `downscale_delay_bypass` below it: a fall is written in one step once the delay has passed, not in one step
  per slide of the window.
  The fallback is the HPA's proposal, held on a scale-down as the HPA's tolerance and stabilization would
  (while a need of the window is within the tolerance below the count) and never below the window's largest
  need.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the core's types import this module's PredictiveSpec: no import cycle at run time
    from autoscaler.core.calculator import PodGroups
    from autoscaler.core.metric import MetricResult
    from autoscaler.core.types import BehaviorState, Pod

# One point of the history: when, the pods at the target the metrics needed then (a saturated CPU reading's need
# counted `saturation_factor` times), and the same without that factor (equal when nothing was saturated).
Sample = tuple[datetime, float, float]


@dataclass(frozen=True, slots=True)
class PredictiveSpec:
    """The parameters of `mode: predictive` (spec.predictive; docs/spec.md)."""

    horizon_seconds: int = 60
    trend_seconds: int = 240
    history_seconds: int = 300
    min_history_seconds: int = 60
    max_noise: float = 3.0
    saturation_percent: int = 95
    saturation_factor: float = 1.3
    saturation_rise: float = 1.0
    headroom: float = 0.0
    tolerance_up: float = 0.1
    tolerance_down: float = 0.2
    trend_significance: float = 3.0
    smooth: bool = False
    scale_down_window_seconds: int = 300
    fill: float = 0.8
    burst_ratio: float = 3.0
    burst_rise_seconds: int = 45
    burst_hold_seconds: int = 1200
    burst_factor: float = 1.2
    burst_readings: int = 2
    burst_repeats: int = 2
    fill_noise: float = 0.0
    rise_margin: float = 0.3
    serving_window_seconds: int = 60
    downscale_delay_seconds: int = 600
    downscale_delay_bypass: float = 0.65

    @property
    def kept_seconds(self) -> int:
        """How far back the history is kept: the longest of the windows that read it."""
        return max(self.history_seconds, self.scale_down_window_seconds, self.trend_seconds, self.burst_hold_seconds)


@dataclass(frozen=True, slots=True)
class Need:
    """One metric's need now: pods at the target (fractional) and whether its CPU reading is saturated."""

    required: float
    saturated: bool = False


@dataclass(frozen=True, slots=True)
class Forecast:
    """What the mode saw, forecast and chose, for the decision's explanation."""

    required: float
    forecast: float
    slope_per_minute: float
    horizon_seconds: int
    noise: float
    history_seconds: float
    saturated: bool
    hpa_proposal: int
    proposal: int
    fallback: str = ""  # why the HPA's proposal was taken; "" when the forecast decided
    why: str = ""  # what set the count when the forecast decided
    saturation_factor: float = 1.0  # how many times a saturated reading's need counted

    def explain(self) -> str:
        """One line: the forecast, its horizon and why the count."""
        if self.fallback:
            return f"predictive: fell back to the HPA's {self.hpa_proposal} ({self.fallback})"
        sat = f", CPU saturated: need counted x{self.saturation_factor:.2f}" if self.saturated else ""
        return (
            f"predictive: need {self.required:.2f} pods now{sat}, trend {self.slope_per_minute:+.2f}/min, "
            f"forecast {self.forecast:.2f} in {self.horizon_seconds} s -> {self.proposal} "
            f"({self.why}; HPA alone: {self.hpa_proposal})"
        )


def _fit(points: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    """Least squares through (x, y): slope, value at the last x, RMS residual."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx > 0 else 0.0
    intercept = my - slope * mx
    rms = math.sqrt(sum((y - (intercept + slope * x)) ** 2 for x, y in points) / n)
    return slope, intercept + slope * points[-1][0], rms


def propose(
    spec: PredictiveSpec,
    history: Sequence[Sample],
    needs: Sequence[Need],
    *,
    hpa_proposal: int,
    current: int,
    now: datetime,
    hpa_tolerance: float = 0.1,
    last_scale_down: datetime | None = None,
) -> tuple[int, tuple[Sample, ...], Forecast]:
    """The mode's proposal, the history to keep, and the explanation (`hpa_tolerance`: the HPA's, downwards).

    `last_scale_down` is the target's last scale-down write (the behaviour state's; None: none known).
    """
    saturated = any(n.saturated for n in needs)
    plain = max((n.required for n in needs), default=0.0)
    keep = spec.kept_seconds
    kept = tuple(s for s in history if 0 < (now - s[0]).total_seconds() < keep)
    factor = _saturation_factor(spec, kept, plain, now) if saturated else 1.0
    required = max((n.required * (factor if n.saturated else 1.0) for n in needs), default=0.0)
    kept += ((now, required, plain),)
    span = (now - kept[0][0]).total_seconds()

    def answer(
        proposal: int, forecast: float, slope: float, noise: float, fallback: str, why: str = ""
    ) -> tuple[int, tuple[Sample, ...], Forecast]:
        return (
            proposal,
            kept,
            Forecast(
                required=required,
                forecast=forecast,
                slope_per_minute=slope * 60,
                horizon_seconds=spec.horizon_seconds,
                noise=noise,
                history_seconds=span,
                saturated=saturated,
                hpa_proposal=hpa_proposal,
                proposal=proposal,
                fallback=fallback,
                why=why,
                saturation_factor=factor,
            ),
        )

    held = max((s[1] for s in kept if (now - s[0]).total_seconds() < spec.scale_down_window_seconds), default=0.0)
    # The HPA's proposal, held on a scale-down as its tolerance and stabilization would: the count stays while
    # any need of the window was within the tolerance below it, and never goes below the window's largest need.
    # A history shorter than the scale-down window does not know the window's largest need: no scale-down yet.
    young = span < spec.scale_down_window_seconds
    fallback = hpa_proposal
    if hpa_proposal < current:
        fallback = (
            current if young or held > (1 - hpa_tolerance) * current else max(hpa_proposal, math.ceil(held - 1e-9))
        )
    if not needs:
        return answer(fallback, required, 0.0, 0.0, "no metric to forecast from")
    if span < spec.min_history_seconds:
        return answer(fallback, required, 0.0, 0.0, f"{span:.0f} s of history, {spec.min_history_seconds} s needed")
    # The trend of what the metrics read: a saturation onset's factor is a guess at the size, not a rise.
    recent = [((s[0] - now).total_seconds(), s[2]) for s in kept if (now - s[0]).total_seconds() <= spec.trend_seconds]
    slope, level, rms = _fit(recent)
    mean = sum(y for _, y in recent) / len(recent)
    noise = rms / mean if mean > 0 else 0.0
    fit_span = recent[-1][0] - recent[0][0]
    if abs(slope) * fit_span < spec.trend_significance * rms:
        slope = 0.0  # a trend the noise could make: not carried ahead
    if noise > spec.max_noise:
        reason = f"too noisy to forecast: residual {noise:.2f} of the mean > {spec.max_noise}"
        return answer(fallback, required, slope, noise, reason)
    base = max(level, 0.0) + required - plain if spec.smooth else required
    forecast = base + max(slope, 0.0) * spec.horizon_seconds
    # Steady: the forecast and the largest need of the scale-down window (what the HPA's stabilization holds,
    # but of needs, not of forecasts: a trend that ended holds no pods), sized at `fill` of it.
    # A noisier need is sized closer to the target: `fill_noise` x the trend's relative residual is added.
    fill = min(1.0, spec.fill + spec.fill_noise * noise)
    sized = (
        f"fill {spec.fill:g}"
        if not spec.fill_noise
        else f"fill {fill:.2f} ({spec.fill:g} + {spec.fill_noise:g} x noise)"
    )
    cover = max(forecast, held) * fill
    # A rise as fast as the fastest of the scale-down window may come again before a new pod is ready: the need
    # now plus `rise_margin` of that rise, at the same fill.
    rise = _fastest_rise(spec, kept, now)
    margin = (required + spec.rise_margin * rise) * fill
    if forecast >= held:
        why = f"the forecast x {sized}"
    else:
        why = f"the largest need of the last {spec.scale_down_window_seconds} s, {held:.2f}, x {sized}"
    if margin > cover:
        cover = margin
        why = (
            f"the need now + {spec.rise_margin:g} x the fastest rise of the last {spec.scale_down_window_seconds} s, "
            f"{rise:.2f} in {spec.horizon_seconds} s, x {sized}"
        )
    burst = _burst(spec, kept, now)
    if burst is not None and burst[1] > cover:
        cover = burst[1]
        reached = "largest need" if spec.burst_readings <= 1 else f"largest need {spec.burst_readings} readings reached"
        seen = f", {burst[2]} bursts seen" if spec.burst_repeats > 1 else ""
        why = (
            f"a burst x{burst[0]:.1f} in {spec.burst_rise_seconds} s within the last {spec.burst_hold_seconds} s"
            f"{seen}: its window's {reached} (as used, or x{spec.burst_factor:g} as read), {burst[1]:.2f}, "
            "at the target"
        )
    wanted = current
    falls = cover < (1 - spec.tolerance_down) * current
    delay = _delayed(spec, cover, current, last_scale_down, now) if falls else None
    if current <= 0 or cover > (1 + spec.tolerance_up) * current:
        wanted = math.ceil(cover * (1 + spec.headroom) - 1e-9)
    elif young and cover < current:
        why = f"held: {span:.0f} s of history, less than the {spec.scale_down_window_seconds} s scale-down window"
    elif falls and delay is not None:
        why = (
            f"held: {cover:.2f} is below the current {current} but the last scale-down was {delay:.0f} s ago "
            f"(downscaleDelaySeconds {spec.downscale_delay_seconds}; not held below "
            f"{1 - spec.downscale_delay_bypass:g} x the count)"
        )
    elif falls:
        wanted = math.ceil(cover - 1e-9)
    else:
        why = f"held: {cover:.2f} is within -{spec.tolerance_down:g}/+{spec.tolerance_up:g} of the current {current}"
    return answer(wanted, forecast, slope, noise, "", why)


def _delayed(
    spec: PredictiveSpec, cover: float, current: int, last_scale_down: datetime | None, now: datetime
) -> float | None:
    """Seconds since the last scale-down when a scale-down must wait for `downscale_delay_seconds`; else None.
    A scale-down later than `now` (another replica's clock, a state edited by hand) is not trusted: no delay."""
    if last_scale_down is None or last_scale_down > now or not spec.downscale_delay_seconds:
        return None
    since = (now - last_scale_down).total_seconds()
    if since >= spec.downscale_delay_seconds or cover < (1 - spec.downscale_delay_bypass) * current:
        return None
    return since


def _saturation_factor(spec: PredictiveSpec, kept: Sequence[Sample], plain: float, now: datetime) -> float:
    """How many times a saturated need counts: the factor, plus `saturation_rise` x the share of it that just rose."""
    if not spec.saturation_rise or plain <= 0:
        return spec.saturation_factor
    # The lowest need read within a start-up before now (none read: the whole need rose, as at a first reading).
    low = min((s[2] for s in kept if (now - s[0]).total_seconds() <= spec.burst_rise_seconds), default=0.0)
    return spec.saturation_factor + spec.saturation_rise * min(1.0, max(0.0, plain - low) / plain)


def _fastest_rise(spec: PredictiveSpec, kept: Sequence[Sample], now: datetime) -> float:
    """The largest rise of the unboosted need within `horizon_seconds`, ending in the scale-down window."""
    if not spec.rise_margin:
        return 0.0
    fastest = 0.0
    for i, (when, _, need) in enumerate(kept):
        if (now - when).total_seconds() >= spec.scale_down_window_seconds:
            continue
        j = i - 1
        while j >= 0 and (when - kept[j][0]).total_seconds() <= spec.horizon_seconds:
            fastest = max(fastest, need - kept[j][2])
            j -= 1
    return fastest


def _burst(spec: PredictiveSpec, kept: Sequence[Sample], now: datetime) -> tuple[float, float, int] | None:
    """The first burst of the hold window (its rise), its cover (the largest need, as used or `burst_factor` x as
    read, that `burst_readings` of the window's readings reached) and the bursts seen; None with fewer than
    `burst_repeats`."""
    if not spec.burst_hold_seconds:
        return None
    window = [s for s in kept if (now - s[0]).total_seconds() < spec.burst_hold_seconds]
    # A burst is a rise of what the metrics read (the needs without the saturation factor: a saturation onset is
    # not a burst by itself); its cover is the window's largest need as used, the factor included, or
    # `burst_factor` x the need read, whichever is larger: a 60 s mean understates the peak of a shorter burst.
    # The level covered is the one `burst_readings` readings reached: a single reading that caught a burst's peak
    # in its few scrapes is no evidence that bursts that large come back, and would set the cover of the whole hold.
    # Nor is a single burst: the cover is held once `burst_repeats` bursts were seen, a reading that rose within
    # `burst_rise_seconds` of its burst's first reading being the same burst (measured from the first: spikes every
    # 30 s for ten minutes are bursts that came back, not one long burst).
    first = 0.0
    seen = 0
    start: datetime | None = None
    for i, (when, _, need) in enumerate(window):
        low = math.inf
        j = i - 1
        while j >= 0 and (when - window[j][0]).total_seconds() <= spec.burst_rise_seconds:
            low = min(low, window[j][2])
            j -= 1
        if low == math.inf or need < spec.burst_ratio * max(low, 1.0):
            continue
        if start is None or (when - start).total_seconds() > spec.burst_rise_seconds:
            seen += 1
            first = first or need / max(low, 1.0)
            start = when
    # Every burst of the window counted (the explanation says how many), not only the first `burst_repeats`.
    if seen < spec.burst_repeats:
        return None
    covers = sorted((max(s[1], spec.burst_factor * s[2]) for s in window), reverse=True)
    return first, covers[min(len(covers), max(1, spec.burst_readings)) - 1], seen


def serving_pods(
    spec: PredictiveSpec, counted: int, groups: PodGroups | None, pods: Sequence[Pod], now: datetime
) -> float:
    """The pods that shared a CPU reading's load: the counted ones, and each Ready one left out, since it was Ready."""
    window = spec.serving_window_seconds
    left_out = set(groups.unready) if groups is not None and window else set()
    ages = [
        (now - p.ready_transition).total_seconds()
        for p in pods
        if p.name in left_out and p.is_ready and p.ready_transition is not None
    ]
    # Each pod serves from the point of the window where it became Ready; a reading over the window is the load
    # divided by the pods serving at each instant, so the pods that shared it are 1 / the mean of 1 / their count.
    starts = sorted(min(window, max(0.0, window - age)) for age in ages)
    if not starts:
        return float(counted)
    edges = [0.0, *starts, float(window)]
    inverse = sum((edges[k + 1] - edges[k]) / (counted + k) for k in range(len(edges) - 1) if counted + k > 0)
    return window / inverse if inverse > 0 else float(counted)


def need_of(
    result: MetricResult, spec: PredictiveSpec, pods: Sequence[Pod] = (), now: datetime | None = None
) -> Need | None:
    """A computed metric's need: its usage ratio x the pods that served it (the HPA's own proposal, unrounded)."""
    calc = result.calculation
    if calc is None:
        return None
    if calc.usage_ratio is not None and calc.ready_pod_count:
        serving = float(calc.ready_pod_count)
        if now is not None and result.spec.target.type == "Utilization":
            serving = serving_pods(spec, calc.ready_pod_count, calc.pods, pods, now)
        required = calc.usage_ratio * serving
    else:
        required = float(calc.replicas)
    saturated = result.spec.target.type == "Utilization" and calc.usage >= spec.saturation_percent
    return Need(required, saturated)


def forecast_hook(
    spec: PredictiveSpec,
    results: Sequence[MetricResult],
    state: BehaviorState,
    hpa_proposal: int,
    current: int,
    now: datetime,
    *,
    pods: Sequence[Pod] = (),
) -> tuple[int, BehaviorState, Forecast]:
    """`decide`'s hook: the mode's proposal in place of the metrics', and the state with its history."""
    needs = [n for n in (need_of(r, spec, pods, now) for r in results) if n is not None]
    tolerance = min((r.tolerances.scale_down for r in results), default=0.1)
    proposal, history, forecast = propose(
        spec,
        state.forecast,
        needs,
        hpa_proposal=hpa_proposal,
        current=current,
        now=now,
        hpa_tolerance=tolerance,
        last_scale_down=state.last_scale_down,
    )
    return proposal, replace(state, forecast=history), forecast


def note_scale_write(state: BehaviorState, *, previous: int, new: int, now: datetime) -> BehaviorState:
    """The state after a scale write: a scale-down's time kept (the downscale delay counts from it)."""
    return replace(state, last_scale_down=now) if new < previous else state
