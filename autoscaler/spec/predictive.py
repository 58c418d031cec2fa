"""`spec.predictive`: the parameters of `mode: predictive` (autoscaler/core/predictive.py, docs/spec.md)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autoscaler.core.predictive import PredictiveSpec
from autoscaler.spec.errors import Problem, join
from autoscaler.spec.shadow import DEFAULT_MODE

_DEFAULTS = PredictiveSpec()
# The sync period the rule assumes for a spec without syncPeriodSeconds: the daemon's default (the HPA's 15 s).
DEFAULT_SYNC_SECONDS = 15


class PredictiveModel(BaseModel):
    """The forecast's parameters; each omitted one takes the default shown in docs/spec.md."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)

    horizon_seconds: int = Field(
        _DEFAULTS.horizon_seconds,
        alias="horizonSeconds",
        ge=0,
        le=3600,
        description="How far ahead the trend is carried: the metric window's lag + pod start-up + one sync period.",
    )
    trend_seconds: int = Field(
        _DEFAULTS.trend_seconds, alias="trendSeconds", ge=15, le=3600, description="The trend's least-squares window."
    )
    history_seconds: int = Field(
        _DEFAULTS.history_seconds, alias="historySeconds", ge=15, le=3600, description="The history kept in the state."
    )
    min_history_seconds: int = Field(
        _DEFAULTS.min_history_seconds,
        alias="minHistorySeconds",
        ge=0,
        le=3600,
        description="Less history than this: the HPA's answer.",
    )
    max_noise: float = Field(
        _DEFAULTS.max_noise,
        alias="maxNoise",
        ge=0,
        allow_inf_nan=False,
        description="The trend's RMS residual over its mean above which the HPA's answer is taken.",
    )
    saturation_percent: int = Field(
        _DEFAULTS.saturation_percent,
        alias="saturationPercent",
        ge=1,
        le=1000,
        description="A Utilization reading at or above this percent of the request is saturated.",
    )
    saturation_factor: float = Field(
        _DEFAULTS.saturation_factor,
        alias="saturationFactor",
        ge=1,
        le=10,
        allow_inf_nan=False,
        description="A saturated reading's need counts this many times, plus saturationRise x the share that rose.",
    )
    saturation_rise: float = Field(
        _DEFAULTS.saturation_rise,
        alias="saturationRise",
        ge=0,
        le=10,
        allow_inf_nan=False,
        description="Added to saturationFactor per share of the need that rose within burstRiseSeconds; 0: none.",
    )
    headroom: float = Field(
        _DEFAULTS.headroom, ge=0, le=10, allow_inf_nan=False, description="Extra share of pods above the forecast."
    )
    tolerance_up: float = Field(
        _DEFAULTS.tolerance_up,
        alias="toleranceUp",
        ge=0,
        le=10,
        allow_inf_nan=False,
        description="Hold while what the count covers is at most this share above it.",
    )
    tolerance_down: float = Field(
        _DEFAULTS.tolerance_down,
        alias="toleranceDown",
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="Hold while what the count covers is at most this share below it.",
    )

    trend_significance: float = Field(
        _DEFAULTS.trend_significance,
        alias="trendSignificance",
        ge=0,
        allow_inf_nan=False,
        description="A trend is carried ahead only when its rise over the window is this many RMS residuals.",
    )
    smooth: bool = Field(_DEFAULTS.smooth, description="Start from the trend line's value now, not the last need.")

    scale_down_window_seconds: int = Field(
        _DEFAULTS.scale_down_window_seconds,
        alias="scaleDownWindowSeconds",
        ge=0,
        le=3600,
        description="The largest need of this window is kept (the mode's own scale-down stabilization).",
    )

    fill: float = Field(
        _DEFAULTS.fill,
        ge=0.1,
        le=1,
        allow_inf_nan=False,
        description="The share of the steady need (forecast, scale-down window) the count is sized for.",
    )
    fill_noise: float = Field(
        _DEFAULTS.fill_noise,
        alias="fillNoise",
        ge=0,
        le=10,
        allow_inf_nan=False,
        description="Added to fill per unit of the trend's RMS residual over its mean (at most 1 in all).",
    )
    rise_margin: float = Field(
        _DEFAULTS.rise_margin,
        alias="riseMargin",
        ge=0,
        le=10,
        allow_inf_nan=False,
        description="Share of the window's fastest rise (within horizonSeconds) added to the need now; 0: none.",
    )
    serving_window_seconds: int = Field(
        _DEFAULTS.serving_window_seconds,
        alias="servingWindowSeconds",
        ge=0,
        le=3600,
        description=(
            "A CPU reading's need counts a pod left out for its CPU initialization, Ready within this window "
            "(the metric's), for the share of it served; 0: the HPA's count."
        ),
    )
    downscale_delay_seconds: int = Field(
        _DEFAULTS.downscale_delay_seconds,
        alias="downscaleDelaySeconds",
        ge=0,
        le=3600,
        description="No scale-down within this many seconds of the last scale-down (lastScaleDown); 0: none.",
    )
    downscale_delay_bypass: float = Field(
        _DEFAULTS.downscale_delay_bypass,
        alias="downscaleDelayBypass",
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="A scale-down to more than this share below the count is not delayed; 1: always delayed.",
    )
    burst_ratio: float = Field(
        _DEFAULTS.burst_ratio,
        alias="burstRatio",
        ge=1,
        le=1000,
        allow_inf_nan=False,
        description="A need this many times the lowest of the burstRiseSeconds before it (at least 1 pod) is a burst.",
    )
    burst_rise_seconds: int = Field(
        _DEFAULTS.burst_rise_seconds,
        alias="burstRiseSeconds",
        ge=15,
        le=3600,
        description="The rise a burst is measured over: about a pod's start-up.",
    )
    burst_hold_seconds: int = Field(
        _DEFAULTS.burst_hold_seconds,
        alias="burstHoldSeconds",
        ge=0,
        le=3600,
        description="Once burstRepeats bursts are in this window, its largest need is covered at the target (0: off).",
    )
    burst_factor: float = Field(
        _DEFAULTS.burst_factor,
        alias="burstFactor",
        ge=1,
        le=10,
        allow_inf_nan=False,
        description="A burst's cover is at least this many times the largest need read in its window.",
    )
    burst_readings: int = Field(
        _DEFAULTS.burst_readings,
        alias="burstReadings",
        ge=1,
        le=100,
        description="A burst's cover is the largest need this many readings of its window reached (1: the largest).",
    )
    burst_repeats: int = Field(
        _DEFAULTS.burst_repeats,
        alias="burstRepeats",
        ge=1,
        le=100,
        description="A burst's cover is held once this many bursts were seen in its window (1: from the first).",
    )

    def to_core(self) -> PredictiveSpec:
        return PredictiveSpec(
            horizon_seconds=self.horizon_seconds,
            trend_seconds=self.trend_seconds,
            history_seconds=self.history_seconds,
            min_history_seconds=self.min_history_seconds,
            max_noise=self.max_noise,
            saturation_percent=self.saturation_percent,
            saturation_factor=self.saturation_factor,
            saturation_rise=self.saturation_rise,
            headroom=self.headroom,
            tolerance_up=self.tolerance_up,
            tolerance_down=self.tolerance_down,
            trend_significance=self.trend_significance,
            smooth=self.smooth,
            scale_down_window_seconds=self.scale_down_window_seconds,
            fill=self.fill,
            fill_noise=self.fill_noise,
            rise_margin=self.rise_margin,
            serving_window_seconds=self.serving_window_seconds,
            downscale_delay_seconds=self.downscale_delay_seconds,
            downscale_delay_bypass=self.downscale_delay_bypass,
            burst_ratio=self.burst_ratio,
            burst_rise_seconds=self.burst_rise_seconds,
            burst_hold_seconds=self.burst_hold_seconds,
            burst_factor=self.burst_factor,
            burst_readings=self.burst_readings,
            burst_repeats=self.burst_repeats,
        )


def predictive_problems(spec: Any, *, path: str) -> list[Problem]:
    """The rules across fields: `predictive` is read only with `mode: predictive`, and its `minHistorySeconds` can be
    reached: the mode keeps the samples younger than its longest window, one a sync period, so the history it has
    spans the largest multiple of the period below that window; a longer minimum would never leave the fallback."""
    predictive, mode = getattr(spec, "predictive", None), getattr(spec, "mode", DEFAULT_MODE)
    if isinstance(predictive, PredictiveModel) and isinstance(mode, str) and mode != "predictive":
        return [(join(path, "predictive"), f"is read only with mode: predictive, not mode: {mode}")]
    if mode != "predictive":
        return []
    given = predictive if isinstance(predictive, PredictiveModel) else PredictiveModel()
    kept = given.to_core().kept_seconds
    sync = getattr(spec, "sync_period_seconds", None)
    period = sync if isinstance(sync, int) and sync > 0 else DEFAULT_SYNC_SECONDS
    reachable = (math.ceil(kept / period) - 1) * period
    problems: list[Problem] = []
    if given.min_history_seconds > reachable:
        default = _default_note(given, "min_history_seconds")
        problems.append(
            (
                join(path, "predictive.minHistorySeconds"),
                f"{given.min_history_seconds}{default} is more than the history the mode can have, {reachable} s (it "
                f"keeps the samples of the last {kept} s, the longest of historySeconds, trendSeconds, "
                f"scaleDownWindowSeconds and burstHoldSeconds, one every {period} s sync period): it would always "
                "fall back to the HPA's answer",
            )
        )
    if given.burst_rise_seconds < period and (given.burst_hold_seconds or given.saturation_rise):
        # No reading is that close to the one before: no burst would be seen, and every saturated reading would
        # count as one that rose from nothing (saturationRise in full).
        default = _default_note(given, "burst_rise_seconds")
        problems.append(
            (
                join(path, "predictive.burstRiseSeconds"),
                f"{given.burst_rise_seconds}{default} is shorter than the {period} s sync period: no reading is that "
                "close to the one before, so no burst would be seen and every saturated reading would count as a "
                f"rise from nothing; give at least {period}, or burstHoldSeconds: 0 and saturationRise: 0",
            )
        )
        return problems
    bursts = _most_bursts(given, period)
    if given.burst_hold_seconds and given.burst_repeats > bursts:
        problems.append(
            (
                join(path, "predictive.burstRepeats"),
                f"{given.burst_repeats} is more than the bursts burstHoldSeconds can hold, {bursts} (one every "
                f"{period} s sync period, each more than burstRiseSeconds, {given.burst_rise_seconds} s, after the "
                "one before): no burst would ever be covered",
            )
        )
    return problems


def _default_note(given: PredictiveModel, field: str) -> str:
    """' (the default)' after a value the spec did not set, so the message says why a field not written is named."""
    return "" if field in given.model_fields_set else " (the default)"


def _most_bursts(given: PredictiveModel, period: int) -> int:
    """The most bursts `burstHoldSeconds` can see: a reading every period, the first of the window only a low for the
    next (a burst rises from a reading before it), each burst's first reading more than `burstRiseSeconds` after
    the one before."""
    readings = math.ceil(given.burst_hold_seconds / period)  # the ages 0, period, ... below the hold
    if readings < 2:
        return 0
    gap = (given.burst_rise_seconds // period + 1) * period
    return 1 + (readings - 2) * period // gap
