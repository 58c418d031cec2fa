"""Properties of the behavior engine (`autoscaler.core.behavior`) that hold for every input.

- Stabilization never moves against the proposal: the stabilized count lies between the current count
  and the proposal, inclusive.
- No rate policy is exceeded within any of its periods: over a run of decisions on a fake clock, every
  scale-up stays within the bound the selected policy allows from the count at the start of each
  policy's period, and every scale-down likewise.
- After the clamp, the desired count lies within [minReplicas, maxReplicas] when the current count does.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.behavior import (
    normalize_legacy,
    normalize_with_behaviors,
    stabilize_with_behaviors,
    store_scale_event,
)
from autoscaler.core.types import (
    Behavior,
    BehaviorState,
    Recommendation,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
    Settings,
)

NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)

replica_counts = st.integers(min_value=0, max_value=500)
windows = st.integers(min_value=0, max_value=600)
history = st.lists(
    st.builds(Recommendation, replica_counts, st.integers(0, 900).map(lambda age: NOW - timedelta(seconds=age))),
    max_size=8,
).map(tuple)


def _rules(draw: st.DrawFn, periods: list[int]) -> ScalingRules:
    """One direction: a policy per period, each Pods or Percent, selected by Max or Min."""
    policies = tuple(
        ScalingPolicy(draw(st.sampled_from(ScalingPolicyType)), draw(st.integers(1, 200)), period) for period in periods
    )
    return ScalingRules(policies, draw(st.sampled_from([SelectPolicy.MAX, SelectPolicy.MIN])), draw(windows))


@st.composite
def behaviors(draw: st.DrawFn) -> Behavior:
    """Random rules per direction, each with its own periods.

    The HPA forgets a direction's events once they are older than that direction's longest period, even
    when the other direction's periods are longer; a forgotten event only ever makes the other
    direction's limit stricter, so the property holds all the same.
    """
    periods = st.lists(st.integers(1, 120), min_size=1, max_size=3)
    return Behavior(_rules(draw, draw(periods)), _rules(draw, draw(periods)))


@given(current=replica_counts, proposal=replica_counts, recommendations=history, up=windows, down=windows)
def test_stabilization_never_moves_against_the_proposal(
    current: int, proposal: int, recommendations: tuple[Recommendation, ...], up: int, down: int
) -> None:
    behavior = Behavior(
        ScalingRules((), stabilization_window_seconds=up), ScalingRules((), stabilization_window_seconds=down)
    )
    result, _ = stabilize_with_behaviors(
        current_replicas=current,
        proposal=proposal,
        behavior=behavior,
        recommendations=recommendations,
        settings=Settings(),
        now=NOW,
    )
    assert min(current, proposal) <= result.stabilized <= max(current, proposal)


def _bound(policy: ScalingPolicy, start: int, *, up: bool) -> int:
    """What one policy allows from the count at the start of its period (Go's float64 arithmetic)."""
    if policy.type == ScalingPolicyType.PODS:
        return start + policy.value if up else start - policy.value
    if up:
        return math.ceil(float(start) * (1 + float(policy.value) / 100))
    return int(float(start) * (1 - float(policy.value) / 100))


@settings(deadline=None)
@given(
    behavior=behaviors(),
    bounds=st.tuples(st.integers(0, 20), st.integers(0, 200)).map(lambda b: (b[0], b[0] + max(b[1], 1))),
    start_fraction=st.floats(0, 1),
    steps=st.lists(st.tuples(st.integers(0, 400), st.integers(1, 90)), min_size=1, max_size=30),
)
def test_no_rate_policy_is_exceeded_within_any_of_its_periods(
    behavior: Behavior, bounds: tuple[int, int], start_fraction: float, steps: list[tuple[int, int]]
) -> None:
    min_replicas, max_replicas = bounds
    current = min_replicas + int((max_replicas - min_replicas) * start_fraction)
    # The replica count over time: (time it took effect, count), oldest first.
    timeline = [(NOW - timedelta(days=1), current)]
    state = BehaviorState(recommendations=())
    now = NOW

    def count_at(moment: datetime) -> int:
        return [count for when, count in timeline if when <= moment][-1]

    for proposal, seconds in steps:
        now += timedelta(seconds=seconds)
        result = normalize_with_behaviors(
            current_replicas=current,
            proposal=proposal,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            behavior=behavior,
            state=state,
            recommendations=state.recommendations or (),
            settings=Settings(),
            now=now,
        )
        desired = result.desired
        if desired != current:
            up = desired > current
            rules = behavior.scale_up if up else behavior.scale_down
            allowed = [_bound(p, count_at(now - timedelta(seconds=p.period_seconds)), up=up) for p in rules.policies]
            # Max selects the policy allowing the largest change, Min the smallest.
            if up:
                limit = max(allowed) if rules.select_policy == SelectPolicy.MAX else min(allowed)
                assert desired <= limit
            else:
                limit = min(allowed) if rules.select_policy == SelectPolicy.MAX else max(allowed)
                assert desired >= limit
        state = BehaviorState(result.recommendations, state.scale_up_events, state.scale_down_events)
        if desired != current:
            state = store_scale_event(behavior, state, previous=current, new=desired, now=now)
            current = desired
            timeline.append((now, current))


@given(
    behavior=st.one_of(st.none(), behaviors()),
    bounds=st.tuples(st.integers(0, 50), st.integers(0, 200)).map(lambda b: (b[0], b[0] + max(b[1], 1))),
    start_fraction=st.floats(0, 1),
    proposal=replica_counts,
    recommendations=history,
)
def test_the_clamp_keeps_desired_within_min_and_max(
    behavior: Behavior | None,
    bounds: tuple[int, int],
    start_fraction: float,
    proposal: int,
    recommendations: tuple[Recommendation, ...],
) -> None:
    """Both paths: with behavior (rate policies, then min/max) and without (the legacy scale-up limit)."""
    min_replicas, max_replicas = bounds
    current = min_replicas + int((max_replicas - min_replicas) * start_fraction)
    common = {
        "current_replicas": current,
        "proposal": proposal,
        "min_replicas": min_replicas,
        "max_replicas": max_replicas,
        "recommendations": recommendations,
        "settings": Settings(),
        "now": NOW,
    }
    if behavior is None:
        result = normalize_legacy(**common)
    else:
        result = normalize_with_behaviors(behavior=behavior, state=BehaviorState(), **common)
    assert min_replicas <= result.desired <= max_replicas
