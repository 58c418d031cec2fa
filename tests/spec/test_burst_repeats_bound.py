"""The most `burstRepeats` the spec accepts is the most bursts the core can count in `burstHoldSeconds`.

For each sync period and `burstRiseSeconds`, every pattern of spikes (one pod or four, a reading every sync
period, over a hold of a few periods) goes through `propose`: the largest `burstRepeats` the spec accepts must be
held by some pattern (else the spec accepts a rule that never holds) and one more by none (else it refuses a rule
that works).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from autoscaler.core.predictive import Need, PredictiveSpec, propose
from autoscaler.spec.predictive import PredictiveModel, predictive_problems

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _largest_accepted(sync: int, rise: int, hold: int) -> int:
    """The largest burstRepeats the spec accepts with these settings (0: none)."""
    accepted = 0
    for repeats in range(1, 101):
        given = {"burstRiseSeconds": rise, "burstHoldSeconds": hold, "burstRepeats": repeats}
        spec = SimpleNamespace(
            mode="predictive", predictive=PredictiveModel.model_validate(given), sync_period_seconds=sync
        )
        if not [p for p in predictive_problems(spec, path="spec") if p[0].endswith("burstRepeats")]:
            accepted = repeats
    return accepted


def _held(spec: PredictiveSpec, sync: int, window: tuple[float, ...]) -> bool:
    """Whether the burst rule sets the count on this window of needs (oldest first, the last one now)."""
    ages = range(spec.kept_seconds // sync * sync, 0, -sync)
    by_age = {(len(window) - 1 - k) * sync: need for k, need in enumerate(window)}
    history = [(NOW - timedelta(seconds=age), by_age.get(age, 1.0), by_age.get(age, 1.0)) for age in ages]
    _, _, forecast = propose(spec, history, [Need(window[-1])], hpa_proposal=1, current=1, now=NOW)
    assert not forecast.fallback, forecast.explain()
    return "a burst" in forecast.explain()


def _params() -> list[object]:
    params: list[object] = []
    for sync, hold in ((15, 120), (30, 240), (45, 300), (60, 480)):
        for rise in (15, 45, 60, 100):
            params.append(pytest.param(sync, rise, hold, id=f"sync{sync}-rise{rise}-hold{hold}"))
    # Holds of one and two readings: none seen, then one.
    params += [
        pytest.param(30, 45, 30, id="sync30-rise45-hold30"),
        pytest.param(60, 60, 100, id="sync60-rise60-hold100"),
    ]
    return params


@pytest.mark.parametrize(("sync", "rise", "hold"), _params())
def test_the_largest_burst_repeats_accepted_is_the_most_the_core_can_hold(sync: int, rise: int, hold: int) -> None:
    if rise < sync:
        # No reading is within burstRiseSeconds before another: the core would never see a burst, so the spec
        # refuses burstRiseSeconds itself, whatever burstRepeats (and no pattern holds a cover: checked below).
        given = PredictiveModel.model_validate({"burstRiseSeconds": rise, "burstHoldSeconds": hold})
        spec = SimpleNamespace(mode="predictive", predictive=given, sync_period_seconds=sync)
        fields = [field for field, _ in predictive_problems(spec, path="spec")]
        assert fields == ["spec.predictive.burstRiseSeconds"], fields
        core = PredictiveSpec(burst_rise_seconds=rise, burst_hold_seconds=hold, burst_readings=1, burst_repeats=1)
        windows = itertools.product((1.0, 4.0), repeat=-(-hold // sync))
        assert not any(_held(replace(core, rise_margin=0.0, trend_significance=1e9), sync, w) for w in windows)
        return
    bound = _largest_accepted(sync, rise, hold)
    # One reading covers (burstReadings 1), and no trend or rise margin covers more than a burst's 1.2 x 4 pods.
    base = PredictiveSpec(
        burst_rise_seconds=rise, burst_hold_seconds=hold, burst_readings=1, rise_margin=0.0, trend_significance=1e9
    )
    readings = -(-hold // sync)
    windows = list(itertools.product((1.0, 4.0), repeat=readings))
    if bound:
        assert any(_held(replace(base, burst_repeats=bound), sync, w) for w in windows), f"{bound} never held"
    if bound < 100:
        assert not any(_held(replace(base, burst_repeats=bound + 1), sync, w) for w in windows), (
            f"{bound + 1} held but refused"
        )
