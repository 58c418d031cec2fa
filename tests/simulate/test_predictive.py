"""`mode: predictive`: its fallback, its explanation, and its state surviving a store and restore mid-trace."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from autoscaler.core.calculator import PodGroups
from autoscaler.core.decision import Decision, dry_run, failed_rescale
from autoscaler.core.predictive import Need, PredictiveSpec, propose, serving_pods
from autoscaler.core.state import behavior_state_from_json, behavior_state_to_json
from autoscaler.core.types import BehaviorState, Pod, Settings
from autoscaler.replay import replay_data
from autoscaler.simulate.model import EPOCH, Model, Scenario, scenario_spec, simulate, target_milli
from autoscaler.simulate.modes import mode_spec
from autoscaler.spec.errors import SpecError
from autoscaler.spec.snapshot import BehaviorStateModel
from autoscaler.spec.snapshot_out import DecisionInputs
from autoscaler.spec.validation import load_spec
from tests.simulate.test_replay_same import _demand

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SPEC = PredictiveSpec()


Samples = tuple[tuple[datetime, float, float], ...]


def _history(values: list[float], *, every: int = 15) -> Samples:
    """Needs recorded every `every` seconds up to (not including) NOW, none of them saturated."""
    return tuple((NOW - timedelta(seconds=every * (len(values) - i)), v, v) for i, v in enumerate(values))


@pytest.mark.parametrize(
    ("history", "reason"),
    [
        pytest.param((), "0 s of history, 60 s needed", id="first-decision"),
        pytest.param(_history([5.0, 5.0, 5.0]), "45 s of history, 60 s needed", id="three-samples"),
        pytest.param(_history([5.0] * 3, every=2000), "0 s of history", id="too-old-to-keep"),
        pytest.param(_history([0.0] * 12 + [200.0, 0.0, 0.0]), "too noisy to forecast", id="noisy"),
    ],
)
def test_short_or_noisy_history_falls_back_to_the_hpa(history: Samples, reason: str) -> None:
    proposal, kept, forecast = propose(SPEC, history, [Need(7.0)], hpa_proposal=8, current=5, now=NOW)
    assert proposal == 8
    assert reason in forecast.fallback
    assert forecast.explain().startswith("predictive: fell back to the HPA's 8 (")
    assert kept[-1] == (NOW, 7.0, 7.0)


@pytest.mark.parametrize(
    ("needs", "proposal"),
    [
        pytest.param([9.5, 7.0, 7.0], 10, id="a-need-within-the-tolerance-holds"),
        pytest.param([8.5, 7.0, 7.0], 9, id="the-largest-need-of-the-window-is-kept"),
        pytest.param([7.0, 7.0, 7.0], 7, id="all-below-the-tolerance"),
    ],
)
def test_the_fallback_scales_down_as_the_hpa_would(needs: list[float], proposal: int) -> None:
    # A history as long as the scale-down window but shorter than minHistorySeconds 600 (fallback), 10 pods, the
    # HPA proposes 7: it goes down only once every need of the window is more than its tolerance (0.1) below the
    # count, and not below the window's largest need (the sample 300 s old has left the window).
    spec = PredictiveSpec(min_history_seconds=600)
    history = ((NOW - timedelta(seconds=300), 1.0, 1.0), *_history(needs[:-1]))
    chosen, _, forecast = propose(spec, history, [Need(needs[-1])], hpa_proposal=7, current=10, now=NOW)
    assert "300 s of history, 600 s needed" in forecast.fallback and chosen == proposal


@pytest.mark.parametrize(
    ("history", "proposal", "why"),
    [
        pytest.param((), 10, "fell back to the HPA's 3 (0 s of history, 60 s needed)", id="first-decision"),
        pytest.param(
            _history([2.0] * 8),
            10,
            "(held: 120 s of history, less than the 300 s scale-down window; HPA alone: 3)",
            id="two-minutes-of-needs",
        ),
        pytest.param(
            _history([2.0] * 20),
            2,
            "(the forecast x fill 0.8; HPA alone: 3)",
            id="a-whole-window-of-needs",
        ),
    ],
)
def test_no_scale_down_before_the_history_spans_the_scale_down_window(
    history: Samples, proposal: int, why: str
) -> None:
    # 10 pods, 2 needed: the window's largest need is not known before the history spans it, so the count is held
    # (as the HPA's stabilization holds its first recommendation), then goes down in one step.
    chosen, _, forecast = propose(SPEC, history, [Need(2.0)], hpa_proposal=3, current=10, now=NOW)
    assert chosen == proposal
    assert why in forecast.explain()
    # A scale-up is not held.
    chosen, _, _ = propose(SPEC, history, [Need(20.0)], hpa_proposal=20, current=10, now=NOW)
    assert chosen > 10


def test_a_rising_need_is_carried_a_start_up_ahead() -> None:
    # 4, 5, ..., 12 pods every 15 s: +4 pods a minute; 60 s ahead of the 12 needed now: 16, sized at fill 0.8.
    history = _history([4.0 + i for i in range(8)])
    proposal, _, forecast = propose(SPEC, history, [Need(12.0)], hpa_proposal=13, current=11, now=NOW)
    assert forecast.fallback == ""
    assert forecast.slope_per_minute == pytest.approx(4.0)
    assert forecast.forecast == pytest.approx(16.0)
    assert proposal == 13  # ceil(16 x 0.8)
    assert forecast.explain() == (
        "predictive: need 12.00 pods now, trend +4.00/min, forecast 16.00 in 60 s -> 13 "
        "(the forecast x fill 0.8; HPA alone: 13)"
    )


@pytest.mark.parametrize(
    ("before", "rise", "factor", "proposal"),
    [
        # 5 pods read for 90 s, then 5.6 saturated: 0.6 of the 5.6 rose, factor 1.3 + 0.6 / 5.6.
        pytest.param(5.0, 1.0, 1.3 + 0.6 / 5.6, 7, id="crept-into-saturation-counts-little-more"),
        # 2 pods read, then 5.6 saturated: 3.6 of the 5.6 rose within a start-up, factor 1.3 + 3.6 / 5.6.
        pytest.param(2.0, 1.0, 1.3 + 3.6 / 5.6, 9, id="jumped-into-saturation-counts-up-to-factor-plus-rise"),
        pytest.param(2.0, 0.0, 1.3, 6, id="saturationRise-0-the-factor-alone"),
    ],
)
def test_a_saturated_cpu_reading_counts_more_the_faster_it_rose(
    before: float, rise: float, factor: float, proposal: int
) -> None:
    # 4 pods saturated (a reading of 5.6 pods at the target); riseMargin 0 so that the fill alone sizes the count.
    spec = PredictiveSpec(saturation_rise=rise, rise_margin=0.0)
    history = _history([before] * 6)
    chosen, kept, forecast = propose(spec, history, [Need(5.6, saturated=True)], hpa_proposal=8, current=4, now=NOW)
    assert forecast.saturated and forecast.required == pytest.approx(5.6 * factor)
    assert kept[-1][2] == 5.6  # the need read is kept without the factor
    assert chosen == proposal  # ceil(5.6 x factor x fill 0.8): more than the 5 the reading alone would get
    assert f"CPU saturated: need counted x{factor:.2f}" in forecast.explain()


def test_a_fall_is_held_by_the_largest_need_of_the_window() -> None:
    # Needs of 10 within the last 300 s: no scale-down below 10 x fill 0.8 yet, though 4 are needed now.
    history = _history([4.0] * 14 + [10.0, 10.0, 4.0, 4.0, 4.0, 4.0, 4.0])
    proposal, _, forecast = propose(SPEC, history, [Need(4.0)], hpa_proposal=4, current=14, now=NOW)
    assert forecast.fallback == "" and proposal == 8
    assert "(the largest need of the last 300 s, 10.00, x fill 0.8; HPA alone: 4)" in forecast.explain()
    # Within toleranceDown (20 %) of the current count: held, one write fewer.
    proposal, _, forecast = propose(SPEC, history, [Need(4.0)], hpa_proposal=4, current=10, now=NOW)
    assert proposal == 10
    assert "(held: 8.00 is within -0.2/+0.1 of the current 10; HPA alone: 4)" in forecast.explain()


DELAY = PredictiveSpec(downscale_delay_seconds=600, downscale_delay_bypass=0.65, tolerance_down=0.2)


@pytest.mark.parametrize(
    ("need", "down_ago", "spec", "proposal", "why"),
    [
        pytest.param(
            6.0,
            100,
            DELAY,
            10,
            "held: 4.80 is below the current 10 but the last scale-down was 100 s ago (downscaleDelaySeconds 600; "
            "not held below 0.35 x the count)",
            id="a-scale-down-100-s-ago-delays-the-next",
        ),
        pytest.param(6.0, 600, DELAY, 5, "the forecast x fill 0.8", id="a-scale-down-600-s-ago-does-not"),
        pytest.param(6.0, None, DELAY, 5, "the forecast x fill 0.8", id="no-scale-down-known"),
        pytest.param(6.0, -30, DELAY, 5, "the forecast x fill 0.8", id="a-scale-down-in-the-future-is-not-trusted"),
        pytest.param(
            6.0,
            100,
            replace(DELAY, downscale_delay_seconds=0),
            5,
            "the forecast x fill 0.8",
            id="delay-0-none",
        ),
        # 3 needed: 2.4 covered, more than 65 % below the 10 pods: a fall that deep is written at once.
        pytest.param(3.0, 100, DELAY, 3, "the forecast x fill 0.8", id="a-deep-fall-is-not-delayed"),
        pytest.param(
            3.0,
            100,
            replace(DELAY, downscale_delay_bypass=1.0),
            10,
            "held: 2.40 is below the current 10 but the last scale-down was 100 s ago",
            id="bypass-1-delays-every-scale-down",
        ),
    ],
)
def test_no_scale_down_within_the_delay_after_a_scale_down(
    need: float, down_ago: int | None, spec: PredictiveSpec, proposal: int, why: str
) -> None:
    # The same need for the whole window, 10 pods: what the count covers (need x fill 0.8) is more than
    # toleranceDown below it; the last scale-down (the behaviour state's) decides whether the scale-down waits.
    history = _history([need] * 20)
    down = None if down_ago is None else NOW - timedelta(seconds=down_ago)
    chosen, _, forecast = propose(
        spec, history, [Need(need)], hpa_proposal=math.ceil(need), current=10, now=NOW, last_scale_down=down
    )
    assert forecast.fallback == "" and chosen == proposal
    assert f"({why}" in forecast.explain()
    # A scale-up is never delayed.
    chosen, _, _ = propose(spec, history, [Need(20.0)], hpa_proposal=20, current=10, now=NOW, last_scale_down=down)
    assert chosen > 10


@pytest.mark.parametrize(
    ("delay", "writes"),
    [
        # The fall's first down-step, then none for 600 s but the deep one at 1140 s (6.71 x 0.8 is more than 65 %
        # below 16), then the last one 600 s after that scale-down.
        pytest.param(600, {900: 16, 1140: 6, 1740: 3}, id="downscaleDelaySeconds-600"),
        # Without the delay the window's largest need slides down the fall, and each step down is written.
        pytest.param(
            0, {900: 16, 990: 13, 1035: 11, 1080: 9, 1110: 7, 1140: 6, 1155: 5, 1185: 4, 1200: 3}, id="no-delay"
        ),
    ],
)
def test_a_fall_is_written_in_fewer_steps_after_the_delay(delay: int, writes: dict[int, int]) -> None:
    # 14 units of demand (20 pods at the target, 1 unit a pod) for 10 minutes, falling to 2 over 5 minutes.
    model = Model(capacity=1.0)
    data = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 100,
        "mode": "predictive",
        "predictive": {"downscaleDelaySeconds": delay},
    }
    spec = scenario_spec(
        load_spec(data, scale_to_zero=False, path="spec"), "rps", target_milli=target_milli(1.0, model), model=model
    )
    seen: dict[int, int] = {}

    def observe(inputs: DecisionInputs, decision: Decision) -> None:
        if decision.rescale and decision.desired_replicas is not None:
            seen[int((inputs.now - EPOCH).total_seconds())] = decision.desired_replicas

    demand = [14.0] * 120 + [14.0 - 12.0 * i / 60 for i in range(60)] + [2.0] * 180
    simulate(demand, capacity=1.0, spec_model=spec, scenario="rps", model=model, settings=Settings(), observer=observe)
    assert seen == writes


def test_a_scale_up_does_not_delay_the_fall_after_it() -> None:
    # 4 units of demand (6 pods at the target, 1 unit a pod), a 2-minute spike to 10, then 4 again: the spike's
    # up-steps end at 660 s; the fall's first step waits for the 300 s scale-down window of needs only, not for
    # 600 s after that last write (1260 s), since the delay counts from the last scale-down (315 s, before the
    # spike); the next waits 600 s after it.
    model = Model(capacity=1.0)
    data = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 100,
        "mode": "predictive",
        "predictive": {"downscaleDelaySeconds": 600},
    }
    spec = scenario_spec(
        load_spec(data, scale_to_zero=False, path="spec"), "rps", target_milli=target_milli(1.0, model), model=model
    )
    seen: dict[int, tuple[int | None, datetime | None]] = {}

    def observe(inputs: DecisionInputs, decision: Decision) -> None:
        if decision.rescale:
            seen[int((inputs.now - EPOCH).total_seconds())] = (
                decision.desired_replicas,
                decision.state.last_scale_down,
            )

    demand = [4.0] * 120 + [10.0] * 24 + [4.0] * 240
    simulate(demand, capacity=1.0, spec_model=spec, scenario="rps", model=model, settings=Settings(), observer=observe)
    at = {when: EPOCH + timedelta(seconds=when) for when in (315, 1005, 1605)}
    assert seen == {
        315: (5, at[315]),
        600: (7, at[315]),
        615: (10, at[315]),
        630: (12, at[315]),
        645: (18, at[315]),
        660: (22, at[315]),
        1005: (13, at[1005]),
        1605: (5, at[1605]),
    }


def test_the_hpa_path_keeps_no_last_scale_down() -> None:
    model = Model(capacity=1.0)
    spec = scenario_spec(mode_spec("hpa"), "rps", target_milli=target_milli(1.0, model), model=model)
    decisions: list[Decision] = []
    simulate(
        _demand(720),
        capacity=1.0,
        spec_model=spec,
        scenario="rps",
        model=model,
        settings=Settings(),
        observer=lambda _inputs, decision: decisions.append(decision),
    )
    assert any(d.rescale and (d.desired_replicas or 0) < (d.current_replicas or 0) for d in decisions)  # scaled down
    assert all(d.state.last_scale_down is None for d in decisions)
    assert all("lastScaleDown" not in behavior_state_to_json(d.state) for d in decisions)


def test_a_scale_down_not_written_keeps_the_last_scale_down_before_it() -> None:
    downs: list[tuple[DecisionInputs, Decision]] = []

    def seen(inputs: DecisionInputs, decision: Decision) -> None:
        if decision.rescale and (decision.desired_replicas or 0) < (decision.current_replicas or 0):
            downs.append((inputs, decision))

    _run("rps", observer=seen)
    assert len(downs) >= 2
    inputs, decision = downs[1]  # a state that already holds the first scale-down
    assert decision.state.last_scale_down == inputs.now
    before = inputs.state.last_scale_down
    assert before is not None and before < inputs.now
    failed = failed_rescale(
        decision,
        "conflict",
        reference="Deployment/web",
        state=inputs.state,
        conditions=inputs.conditions,
        previous_desired_replicas=inputs.previous_desired_replicas,
        last_scale_time=inputs.last_scale_time,
        now=inputs.now,
    )
    dry = dry_run(decision, state=inputs.state, conditions=inputs.conditions, last_scale_time=inputs.last_scale_time)
    assert failed.state.last_scale_down == before
    assert dry.state.last_scale_down == before


def _timed(points: list[tuple[int, float]]) -> Samples:
    """Needs at the given seconds before NOW, none of them saturated."""
    return tuple((NOW - timedelta(seconds=ago), need, need) for ago, need in points)


QUIET = [(ago, 1.0) for ago in range(300, 0, -15)]  # one pod needed every 15 s for the last 5 minutes
# A second burst, ten minutes ago: one pod, then four within 15 s, then one again.
BURST_AGAIN = [(660, 1.0), (645, 1.0), (630, 4.0), (615, 1.0), (600, 1.0)]


# A second burst, two minutes after one at 1270 s ago: one pod, then four within 15 s, then one again.
BURST_LATER = [(1180, 1.0), (1165, 1.0), (1150, 4.0), (1135, 1.0)]


def _spikes(first: int, last: int, every: int) -> list[tuple[int, float]]:
    """One pod needed every 15 s from `first` to `last` seconds ago, four on every `every` seconds of it."""
    return [(ago, 4.0 if (first - ago) % every == every - 15 else 1.0) for ago in range(first, last, -15)]


@pytest.mark.parametrize(
    ("history", "proposal", "why"),
    [
        pytest.param(
            _timed([(1000, 1.0), (985, 1.0), (970, 1.0), (955, 6.0), (940, 6.0), (925, 2.0), *BURST_AGAIN, *QUIET]),
            8,
            "a burst x6.0 in 45 s within the last 1200 s, 2 bursts seen: its window's largest need 2 readings reached "
            "(as used, or x1.2 as read), 7.20, at the target",
            id="bursts-that-came-back-are-covered-at-burstFactor-x-their-need",
        ),
        # Its two readings of 6 pods, 15 s apart, both 6 x the lowest need of the 45 s before them, are one burst.
        pytest.param(
            _timed([(1000, 1.0), (985, 1.0), (970, 1.0), (955, 6.0), (940, 6.0), (925, 2.0), *QUIET]),
            1,
            "the forecast x fill 0.8",
            id="a-burst-that-did-not-come-back-is-not-held",
        ),
        pytest.param(
            _timed([(1200, 1.0), (1185, 2.0), (1170, 2.5), (1155, 2.9), (1140, 2.0), *QUIET]),
            1,
            "the forecast x fill 0.8",
            id="a-slower-rise-is-no-burst",
        ),
        pytest.param(
            _timed([(1300, 1.0), (1285, 1.0), (1270, 6.0), (1255, 2.0), *QUIET]),
            1,
            "the forecast x fill 0.8",
            id="a-burst-older-than-the-hold-is-forgotten",
        ),
        # A second burst 2 minutes after the first, which has left the 1200 s hold since: one burst in the window.
        pytest.param(
            _timed([(1300, 1.0), (1285, 1.0), (1270, 6.0), (1255, 6.0), (1240, 2.0), *BURST_LATER, *QUIET]),
            1,
            "the forecast x fill 0.8",
            id="the-first-burst-ageing-out-leaves-one",
        ),
        # A spike every 30 s for ten minutes, twenty of them: a burst is the rises within burstRiseSeconds (45 s)
        # of its first, so ten bursts, not one that lasted ten minutes because each spike came within 45 s of the
        # one before (which a rule meant for bursts that come back would never hold).
        pytest.param(
            _timed([*_spikes(900, 300, 30), *QUIET]),
            5,
            "a burst x4.0 in 45 s within the last 1200 s, 10 bursts seen: its window's largest need 2 readings "
            "reached (as used, or x1.2 as read), 4.80, at the target",
            id="spikes-every-30-s-for-ten-minutes-are-bursts-that-came-back",
        ),
        # Five bursts two minutes apart: the explanation counts the five, not the two that were enough.
        pytest.param(
            _timed([*_spikes(1080, 480, 120), *QUIET]),
            5,
            "a burst x4.0 in 45 s within the last 1200 s, 5 bursts seen: its window's largest need 2 readings "
            "reached (as used, or x1.2 as read), 4.80, at the target",
            id="the-explanation-counts-every-burst-of-the-window",
        ),
    ],
)
def test_a_burst_faster_than_a_start_up_is_held_at_the_target(history: Samples, proposal: int, why: str) -> None:
    chosen, _, forecast = propose(SPEC, history, [Need(1.0)], hpa_proposal=1, current=3, now=NOW)
    assert forecast.fallback == "" and chosen == proposal
    assert f"({why}; HPA alone: 1)" in forecast.explain()


def _saturated(points: list[tuple[int, float, float]]) -> Samples:
    """Needs at the given seconds before NOW, as used and without the saturation factor."""
    return tuple((NOW - timedelta(seconds=ago), need, unboosted) for ago, need, unboosted in points)


def test_a_burst_is_covered_at_burst_factor_times_what_was_read() -> None:
    # A burst 16 minutes ago read 6 pods twice: the count covers 1.3 x 6 = 7.8 (burstFactor 1.3), or 6 with 1
    # (held from the first burst: burstRepeats 1).
    history = _timed([(1000, 1.0), (985, 1.0), (970, 1.0), (955, 6.0), (940, 6.0), (925, 2.0), *QUIET])
    for burst_factor, proposal in ((1.3, 8), (1.0, 6)):
        spec = PredictiveSpec(burst_factor=burst_factor, burst_repeats=1)
        chosen, _, forecast = propose(spec, history, [Need(1.0)], hpa_proposal=1, current=3, now=NOW)
        assert chosen == proposal and "a burst x6.0 in 45 s" in forecast.explain()


@pytest.mark.parametrize(
    ("readings", "proposal", "reached"),
    [
        # The burst read 9 pods once and 5 pods on the next reading: the one reading alone does not set the cover;
        # the level two readings reached, 5 x 1.2 = 6, does.
        pytest.param(2, 6, "largest need 2 readings reached", id="burstReadings-2-covers-what-two-readings-reached"),
        # burstReadings 1 (the rule before it): the largest reading, 9 x 1.2 = 10.8.
        pytest.param(1, 11, "largest need", id="burstReadings-1-covers-the-largest-reading"),
    ],
)
def test_a_burst_is_covered_at_the_level_burst_readings_reached(readings: int, proposal: int, reached: str) -> None:
    history = _timed([(1000, 1.0), (985, 1.0), (970, 1.0), (955, 9.0), (940, 5.0), (925, 2.0), *QUIET])
    spec = PredictiveSpec(burst_readings=readings, burst_repeats=1)
    chosen, _, forecast = propose(spec, history, [Need(1.0)], hpa_proposal=1, current=3, now=NOW)
    assert forecast.fallback == "" and chosen == proposal
    assert f"a burst x9.0 in 45 s within the last 1200 s: its window's {reached} (as used" in forecast.explain()


@pytest.mark.parametrize("field", ["burstReadings", "burstRepeats"])
def test_the_burst_counts_are_validated_as_counts(field: str) -> None:
    base = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 10,
        "mode": "predictive",
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
            }
        ],
    }
    assert load_spec({**base, "predictive": {field: 3}}, scale_to_zero=False, path="spec").predictive
    for bad in (0, 101, 1.5):
        with pytest.raises(SpecError, match=field):
            load_spec({**base, "predictive": {field: bad}}, scale_to_zero=False, path="spec")


# A saturated reading counted twice whatever its rise (the factor of the version before saturationRise): the need
# as used doubles at a saturation onset.
DOUBLED = PredictiveSpec(saturation_factor=2.0, saturation_rise=0.0)


def test_a_saturation_onset_is_no_burst() -> None:
    # Two pods needed, then a saturated reading of 3.2 (x2: 6.4, three times the 2 before it): a burst by the
    # needs as used, but what the metrics read rose 1.6 times only. It is sized by the forecast at fill, not held
    # at the target for burstHoldSeconds.
    history = _timed([(ago, 2.0) for ago in range(300, 0, -15)])
    chosen, kept, forecast = propose(DOUBLED, history, [Need(3.2, saturated=True)], hpa_proposal=5, current=2, now=NOW)
    assert kept[-1] == (NOW, 6.4, 3.2)
    assert forecast.fallback == "" and chosen == 6  # ceil((6.4 + 0.3 x the 1.2 read) x 0.8)
    assert "burst" not in forecast.explain()
    # The same rise read unsaturated (an rps metric) is a burst: covered at 1.2 x 6.4 = 7.68 (once one reading
    # and one burst set the cover: by default a second reading must reach the level and a second burst come first).
    once = replace(DOUBLED, burst_readings=1, burst_repeats=1)
    chosen, _, forecast = propose(once, history, [Need(6.4)], hpa_proposal=7, current=2, now=NOW)
    assert chosen == 8 and "a burst x3.2 in 45 s" in forecast.explain()


@pytest.mark.parametrize(
    ("rise_margin", "proposal", "why"),
    [
        pytest.param(
            0.3, 10, "the need now + 0.3 x the fastest rise of the last 300 s, 5.00 in 60 s, x fill 0.8", id="0.3"
        ),
        pytest.param(0.0, 8, "the forecast x fill 0.8", id="none"),
    ],
)
def test_a_fast_rise_of_the_window_is_covered_in_part(rise_margin: float, proposal: int, why: str) -> None:
    # 10 pods needed for five minutes but for one dip to 5, 60 s ago: a rise of 5 within a start-up. With
    # riseMargin 0.3 the count covers (10 + 0.3 x 5) x fill 0.8 = 9.2 -> 10 pods, not 10 x 0.8 -> 8.
    history = _timed([(ago, 5.0 if ago == 60 else 10.0) for ago in range(300, 0, -15)])
    spec = PredictiveSpec(rise_margin=rise_margin)
    chosen, _, forecast = propose(spec, history, [Need(10.0)], hpa_proposal=10, current=7, now=NOW)
    assert forecast.fallback == "" and forecast.slope_per_minute == 0.0 and chosen == proposal
    assert f"({why}; HPA alone: 10)" in forecast.explain()


def test_a_saturation_onset_is_no_trend() -> None:
    # 4.5 pods read for four minutes, the last one saturated (9 as used): the trend of what the metrics read is
    # flat, so the need now (9) is not carried further ahead; the line of the needs as used would add ~+4.
    history = _saturated(
        [(ago, 4.5, 4.5) for ago in range(240, 60, -15)] + [(ago, 9.0, 4.5) for ago in (60, 45, 30, 15)]
    )
    chosen, _, forecast = propose(DOUBLED, history, [Need(4.5, saturated=True)], hpa_proposal=6, current=5, now=NOW)
    assert forecast.fallback == "" and forecast.slope_per_minute == 0.0
    assert forecast.forecast == pytest.approx(9.0) and chosen == 8  # ceil(9 x 0.8)


def test_a_saturated_need_is_held_as_used_by_the_scale_down_window() -> None:
    # A saturated reading two minutes ago (5 read, 10 as used), 4 needed since: the window keeps the 10.
    history = _saturated(
        [(ago, 4.0, 4.0) for ago in range(300, 120, -15)]
        + [(120, 10.0, 5.0)]
        + [(ago, 4.0, 4.0) for ago in range(105, 0, -15)]
    )
    chosen, _, forecast = propose(SPEC, history, [Need(4.0)], hpa_proposal=4, current=12, now=NOW)
    assert forecast.fallback == "" and chosen == 8  # ceil(10 x 0.8)
    assert "the largest need of the last 300 s, 10.00, x fill 0.8" in forecast.explain()


def _run(scenario: Scenario, *, carry: object = None, observer: object = None) -> list[Decision]:
    model = Model(capacity=1.0)
    spec = scenario_spec(mode_spec("predictive"), scenario, target_milli=target_milli(1.0, model), model=model)
    decisions: list[Decision] = []

    def seen(inputs: DecisionInputs, decision: Decision) -> None:
        decisions.append(decision)
        if callable(observer):
            observer(inputs, decision)

    simulate(
        _demand(3 * 720),
        capacity=1.0,
        spec_model=spec,
        scenario=scenario,
        model=model,
        settings=Settings(),
        observer=seen,
        carry=carry,  # type: ignore[arg-type]
    )
    return decisions


def _through_json(state: BehaviorState) -> BehaviorState:
    return behavior_state_from_json(json.loads(json.dumps(behavior_state_to_json(state))))


@pytest.mark.parametrize("scenario", ["cpu", "rps"])
def test_the_state_survives_a_store_and_restore_with_the_same_decisions(scenario: Scenario) -> None:
    plain = _run(scenario)
    # The state through its JSON form (what the daemon stores) before every decision, and, apart, a run whose
    # state is stored and restored once, mid-trace.
    stored = _run(scenario, carry=_through_json)
    count = {"n": 0}

    def once(state: BehaviorState) -> BehaviorState:
        count["n"] += 1
        return _through_json(state) if count["n"] == len(plain) // 2 else state

    restored_once = _run(scenario, carry=once)
    assert any(d.forecast is not None and not d.forecast.fallback for d in plain)
    assert any(d.rescale for d in plain)
    key = [(d.desired_replicas, d.rescale, d.summary) for d in plain]
    assert [(d.desired_replicas, d.rescale, d.summary) for d in stored] == key
    assert [(d.desired_replicas, d.rescale, d.summary) for d in restored_once] == key
    assert plain[len(plain) // 2].state.forecast  # the history was there to lose


def test_a_forgotten_history_falls_back_then_forecasts_again() -> None:
    plain = _run("rps")
    middle = len(plain) // 2
    count = {"n": 0}

    def forget(state: BehaviorState) -> BehaviorState:
        count["n"] += 1
        return (
            BehaviorState(state.recommendations, state.scale_up_events, state.scale_down_events)
            if count["n"] == middle
            else state
        )

    forgot = _run("rps", carry=forget)
    assert forgot[middle].forecast is not None and "of history" in forgot[middle].forecast.fallback
    assert forgot[middle + 8].forecast is not None and forgot[middle + 8].forecast.fallback == ""


@pytest.mark.parametrize("scenario", ["cpu", "rps"])
def test_predictive_decisions_replay_the_same_from_snapshots(scenario: Scenario) -> None:
    checked = {"n": 0}

    def check(inputs: DecisionInputs, decision: Decision) -> None:
        checked["n"] += 1
        if checked["n"] % 5 and not decision.rescale:
            return
        replayed = replay_data(json.loads(json.dumps(inputs.json())))
        assert (replayed["desiredReplicas"], replayed["summary"]) == (decision.desired_replicas, decision.summary)

    _run(scenario, observer=check)
    assert checked["n"] > 100


def test_fill_noise_sizes_a_noisy_need_closer_to_the_target() -> None:
    # Needs swinging 8 / 12 around 10: the largest of the window is 12; fill 0.8 alone sizes 9.6 -> 10 pods,
    # fillNoise 0.5 adds half the trend's relative residual (0.2) to the fill: 12 x 0.9 = 10.8 -> 11 pods.
    history = _history([8.0, 12.0] * 8)
    plain, _, _ = propose(SPEC, history, [Need(8.0)], hpa_proposal=9, current=5, now=NOW)
    noisy_spec = PredictiveSpec(fill_noise=0.5)
    chosen, _, forecast = propose(noisy_spec, history, [Need(8.0)], hpa_proposal=9, current=5, now=NOW)
    assert forecast.fallback == "" and forecast.noise == pytest.approx(0.2, abs=0.01)
    assert (plain, chosen) == (10, 11)
    assert "x fill 0.90 (0.8 + 0.5 x noise)" in forecast.explain()


@pytest.mark.parametrize(
    ("stored", "sample"),
    [
        pytest.param(
            {"timestamp": "2026-01-01T00:00:00Z", "required": 4.5},
            (NOW, 4.5, 4.5),
            id="an-earlier-versions-sample-is-its-own-unboosted-need",
        ),
        pytest.param(
            {"timestamp": "2026-01-01T00:00:00Z", "required": 8.0, "unboosted": 4.0},
            (NOW, 8.0, 4.0),
            id="a-saturated-sample-keeps-both",
        ),
    ],
)
def test_a_stored_forecast_sample_restores(stored: dict[str, object], sample: tuple[datetime, float, float]) -> None:
    state = behavior_state_from_json({"recommendations": [], "forecast": [stored]})
    assert state.forecast == (sample,)
    assert behavior_state_to_json(state)["forecast"] == [stored]  # and is written back as it was read


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        pytest.param({"required": 4.0, "unboosted": -1}, "forecast[0].unboosted: -1 is not a non-negative", id="neg"),
        pytest.param({"required": 4.0, "unboosted": "2"}, "forecast[0].unboosted: '2' is not a", id="a-string"),
        pytest.param({"required": 4.0, "unboosted": 5.0}, "forecast[0].unboosted: 5.0 is above", id="above-required"),
        pytest.param([4.0], "forecast[0]: [4.0] is not a forecast sample", id="not-a-mapping"),
    ],
)
def test_a_bad_forecast_sample_is_refused_naming_its_field(stored: object, message: str) -> None:
    item = {"timestamp": "2026-01-01T00:00:00Z", **stored} if isinstance(stored, dict) else stored
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        behavior_state_from_json({"recommendations": [], "forecast": [item]})


def test_a_snapshots_saturated_sample_reads_back_through_the_schema() -> None:
    state = BehaviorState(recommendations=(), forecast=((NOW, 8.0, 4.0), (NOW + timedelta(seconds=15), 3.0, 3.0)))
    document = json.loads(json.dumps(behavior_state_to_json(state)))
    assert document["forecast"][1] == {"timestamp": "2026-01-01T00:00:15Z", "required": 3.0}
    assert BehaviorStateModel.model_validate(document).to_core() == state
    document["forecast"][0]["unboosted"] = -1.0
    with pytest.raises(ValidationError, match=r"forecast\.0\.unboosted"):
        BehaviorStateModel.model_validate(document)


@pytest.mark.parametrize(
    ("stored", "last_scale_down"),
    [
        pytest.param({"recommendations": []}, None, id="an-earlier-versions-state-knows-none"),
        pytest.param({"recommendations": [], "lastScaleDown": "2026-01-01T00:00:00Z"}, NOW, id="kept"),
    ],
)
def test_the_last_scale_down_restores(stored: dict[str, object], last_scale_down: datetime | None) -> None:
    state = behavior_state_from_json(stored)
    assert state.last_scale_down == last_scale_down
    assert behavior_state_to_json(state) == {"scaleUpEvents": [], "scaleDownEvents": [], **stored}
    assert BehaviorStateModel.model_validate(stored).to_core() == state  # a snapshot's state reads the same


def test_a_bad_last_scale_down_is_refused_naming_its_field() -> None:
    with pytest.raises(ValueError, match=r"lastScaleDown: 'monday' is not an RFC 3339 time"):
        behavior_state_from_json({"recommendations": [], "lastScaleDown": "monday"})
    with pytest.raises(ValidationError, match="lastScaleDown"):
        BehaviorStateModel.model_validate({"recommendations": [], "lastScaleDown": "monday"})


def _pod(name: str, ready_ago: float) -> Pod:
    """A Running pod whose Ready condition turned True `ready_ago` seconds before NOW."""
    return Pod(name, "Running", ready="True", ready_transition=NOW - timedelta(seconds=ready_ago))


@pytest.mark.parametrize(
    ("ready_ago", "window", "serving"),
    [
        # 4 pods counted for the whole 60 s window, 4 more Ready 30 s ago: 60 / (30 / 4 + 30 / 8) = 5.33 pods.
        pytest.param(30.0, 60, 60 / (30 / 4 + 30 / 8), id="half-the-window"),
        pytest.param(0.0, 60, 4.0, id="ready-just-now-served-nothing-yet"),
        pytest.param(60.0, 60, 8.0, id="a-whole-window"),
        pytest.param(30.0, 0, 4.0, id="servingWindowSeconds-0-the-hpas-count"),
    ],
)
def test_pods_left_out_of_a_cpu_reading_count_for_the_share_of_the_window_they_served(
    ready_ago: float, window: int, serving: float
) -> None:
    pods = [_pod(f"old-{i}", 3600) for i in range(4)] + [_pod(f"new-{i}", ready_ago) for i in range(4)]
    groups = PodGroups(
        ready=tuple(f"old-{i}" for i in range(4)), unready=tuple(f"new-{i}" for i in range(4)), missing=(), ignored=()
    )
    spec = PredictiveSpec(serving_window_seconds=window)
    assert serving_pods(spec, 4, groups, pods, NOW) == pytest.approx(serving)


@pytest.mark.parametrize(
    ("serving_window", "lowest", "scaled_at"),
    [
        # The 6 pods counted, 1 Ready 30 s and 5 Ready 15 s: the need read is 9.29 pods (the saturated scrapes
        # still in the window hide the rest of the 14.29), and the count goes to 14 at 780 s.
        pytest.param(60, 9.29, 780, id="the-pods-that-served-counted"),
        # The HPA's count alone reads 7.46 pods (usage over 12 ready pods x the 6 counted): 14 pods 30 s later.
        pytest.param(0, 7.46, 810, id="servingWindowSeconds-0-the-hpas-count"),
    ],
)
def test_a_cpu_need_does_not_drop_when_new_pods_become_ready(
    serving_window: int, lowest: float, scaled_at: int
) -> None:
    # 4 units of demand for 10 minutes, then 10 (14.29 pods at the 70 % target, 1 unit a pod): 6 pods go to 7, then
    # (saturated) to 12, Ready at 690 s. The HPA leaves those out of its CPU count for a metric window after they
    # became Ready, while they already share the load: the usage ratio x its count drops.
    model = Model(capacity=1.0)
    data = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 100,
        "mode": "predictive",
        # The scale-downs of the earlier defaults (toleranceDown 0.3, no delay), which this trajectory was read with.
        "predictive": {"servingWindowSeconds": serving_window, "toleranceDown": 0.3, "downscaleDelaySeconds": 0},
    }
    base = load_spec(data, scale_to_zero=False, path="spec")
    spec = scenario_spec(base, "cpu", target_milli=target_milli(1.0, model), model=model)
    needs: dict[int, float] = {}
    writes: dict[int, int] = {}

    def seen(inputs: DecisionInputs, decision: Decision) -> None:
        at = int((inputs.now - EPOCH).total_seconds())
        assert decision.forecast is not None
        needs[at] = decision.forecast.required
        if decision.rescale and decision.desired_replicas is not None:
            writes[at] = decision.desired_replicas

    simulate(
        [4.0] * 120 + [10.0] * 120,
        capacity=1.0,
        spec_model=spec,
        scenario="cpu",
        model=model,
        settings=Settings(),
        observer=seen,
    )
    assert (writes[630], writes[645]) == (7, 12)
    assert min(needs[at] for at in range(705, 750, 15)) == pytest.approx(lowest, abs=0.01)
    assert [at for at, count in writes.items() if count == 14] == [scaled_at]


def test_as_many_bursts_as_the_spec_allows_are_seen() -> None:
    """At the defaults the hold sees at most 20 bursts (the spec refuses more: tests/spec): a spike every 60 s over
    the whole 1200 s window is 20 bursts, which burstRepeats 20 holds and 21 could not."""
    history = _timed(_spikes(1185, 0, 60))
    chosen, _, forecast = propose(
        replace(SPEC, burst_repeats=20), history, [Need(4.0)], hpa_proposal=4, current=1, now=NOW
    )
    assert chosen == 5 and "20 bursts seen" in forecast.explain(), forecast.explain()  # 1.2 x 4, at the target
    _, _, forecast = propose(replace(SPEC, burst_repeats=21), history, [Need(4.0)], hpa_proposal=4, current=1, now=NOW)
    assert "burst" not in forecast.explain()
