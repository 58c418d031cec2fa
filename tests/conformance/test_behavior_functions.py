"""The behavior engine's function tables from upstream horizontal_test.go (Kubernetes 1.36).

Upstream calls normalize / stabilize / calculate* directly on a HorizontalController whose maps hold
the recommendations and scale events, and reads the clock with time.Now(). Here the same inputs go to
the pure functions of `autoscaler.core.behavior`, with `now` passed explicitly and every timestamp given
as seconds before it.

- TestNormalizeDesiredReplicas -> `normalize_legacy` (its stabilization: stabilizeRecommendation)
- TestConvertDesiredReplicasWithRules -> `normalize_legacy` with no history (convertDesiredReplicasWithRules)
- TestCalculateScaleUpLimitWithScalingRules / TestCalculateScaleDownLimitWithBehaviors -> `scale_up_limit` /
  `scale_down_limit`
- TestScalingWithRules -> `limit_with_behaviors` (convertDesiredReplicasWithBehaviorRate)
- TestStoreScaleEvents -> `replicas_change_per_period` and `store_scale_event`
- TestNormalizeDesiredReplicasWithBehavior -> `stabilize_with_behaviors`
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.behavior import (
    limit_with_behaviors,
    normalize_legacy,
    replicas_change_per_period,
    scale_down_limit,
    scale_up_limit,
    stabilize_with_behaviors,
    store_scale_event,
)
from autoscaler.core.types import (
    Behavior,
    BehaviorState,
    Recommendation,
    ScaleEvent,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
    Settings,
)

NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
PODS, PERCENT = ScalingPolicyType.PODS, ScalingPolicyType.PERCENT

# GenerateHPAScaleUpRules / GenerateHPAScaleDownRules with nothing set (pkg/apis/autoscaling/v2/defaults.go).
DEFAULT_SCALE_UP = ScalingRules(
    policies=(ScalingPolicy(PODS, 4, 15), ScalingPolicy(PERCENT, 100, 15)),
    select_policy=SelectPolicy.MAX,
    stabilization_window_seconds=0,
)
DEFAULT_SCALE_DOWN = ScalingRules(policies=(ScalingPolicy(PERCENT, 100, 15),), select_policy=SelectPolicy.MAX)


def at(seconds_ago: float) -> datetime:
    return NOW - timedelta(seconds=seconds_ago)


def rules(
    pods: int = 0, pods_period: int = 0, percent: int = 0, percent_period: int = 0, window: int = 0
) -> ScalingRules:
    """generateScalingRules: Max selection; a zero value leaves its policy out."""
    policies = []
    if pods:
        policies.append(ScalingPolicy(PODS, pods, pods_period))
    if percent:
        policies.append(ScalingPolicy(PERCENT, percent, percent_period))
    return ScalingRules(tuple(policies), SelectPolicy.MAX, window)


def uniform_events(changes: Sequence[int], period_seconds: int) -> tuple[ScaleEvent, ...]:
    """generateEventsUniformDistribution: events at the middles of equal segments of the last period.

    Go converts each offset to a Duration (whole units) before multiplying by a second, so offsets are
    whole seconds.
    """
    segment = period_seconds / len(changes)
    return tuple(
        ScaleEvent(change, at(int(period_seconds - segment * (i + 1) + segment / 2)))
        for i, change in enumerate(changes)
    )


def recommendations(items: Sequence[tuple[int, float]]) -> tuple[Recommendation, ...]:
    return tuple(Recommendation(replicas, at(age)) for replicas, age in items)


# ---------------------------------------------------------------------------------------------------
# TestNormalizeDesiredReplicas (stabilizeRecommendation, the path without behavior)
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "proposal", "stabilized", "log_length"),
    [
        pytest.param([], 5, 5, 1, id="TestNormalizeDesiredReplicas: empty log"),
        pytest.param([(4, 120), (5, 60)], 3, 5, 3, id="TestNormalizeDesiredReplicas: stabilize"),
        pytest.param([(1, 120), (2, 60)], 3, 3, 3, id="TestNormalizeDesiredReplicas: no stabilize"),
        pytest.param(
            [(10, 600), (9, 540)], 3, 3, 2, id="TestNormalizeDesiredReplicas: no stabilize - old recommendations"
        ),
        pytest.param(
            [(10, 600), (4, 60), (5, 120), (9, 540)],
            3,
            5,
            4,
            id="TestNormalizeDesiredReplicas: stabilize - old recommendations",
        ),
    ],
)
def test_normalize_desired_replicas(
    history: list[tuple[int, float]], proposal: int, stabilized: int, log_length: int
) -> None:
    """The highest recommendation of the last 5 minutes wins; one stale entry is reused for the new one."""
    result = normalize_legacy(
        current_replicas=proposal,
        proposal=proposal,
        min_replicas=0,
        max_replicas=1000,
        recommendations=recommendations(history),
        settings=Settings(downscale_stabilization_window_seconds=300),
        now=NOW,
    )
    assert result.stabilization.stabilized == stabilized
    assert len(result.recommendations) == log_length


# ---------------------------------------------------------------------------------------------------
# TestConvertDesiredReplicasWithRules (the path without behavior)
# ---------------------------------------------------------------------------------------------------


_CONVERT = "TestConvertDesiredReplicasWithRules: "


@pytest.mark.parametrize(
    ("current", "desired", "min_replicas", "max_replicas", "converted", "reason"),
    [
        pytest.param(5, 7, 3, 8, 7, "DesiredWithinRange", id=_CONVERT + "prenormalized desired replicas within range"),
        pytest.param(3, 1, 2, 8, 2, "TooFewReplicas", id=_CONVERT + "prenormalized desired replicas < minReplicas"),
        pytest.param(
            1, 0, 0, 10, 0, "DesiredWithinRange", id=_CONVERT + "prenormalized desired zeroed replicas within range"
        ),
        pytest.param(
            20, 1000, 1, 10, 10, "TooManyReplicas",
            id=_CONVERT + "maxReplicas is the limit because maxReplicas < scaleUpLimit",
        ),
        pytest.param(
            3, 1000, 1, 2000, 24, "ScaleUpLimit",
            id=_CONVERT + "scaleUpLimit is the limit because scaleUpLimit < maxReplicas",
        ),
    ],
)  # fmt: skip
def test_convert_desired_replicas_with_rules(
    current: int, desired: int, min_replicas: int, max_replicas: int, converted: int, reason: str
) -> None:
    """Upstream's test binary sets scaleUpLimitFactor to 8, so calculateScaleUpLimit(3) is 24."""
    result = normalize_legacy(
        current_replicas=current,
        proposal=desired,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        recommendations=(),
        settings=Settings(scale_up_limit_factor=8.0),
        now=NOW,
    )
    assert (result.limits.desired, result.limits.reason) == (converted, reason)


# ---------------------------------------------------------------------------------------------------
# TestCalculateScaleUpLimitWithScalingRules / TestCalculateScaleDownLimitWithBehaviors
# ---------------------------------------------------------------------------------------------------

_MIN_OF_TWO = ScalingRules(
    policies=(ScalingPolicy(PODS, 2, 60), ScalingPolicy(PERCENT, 50, 60)),
    select_policy=SelectPolicy.MIN,
    stabilization_window_seconds=300,
)


def test_calculate_scale_up_limit_with_scaling_rules() -> None:
    """TestCalculateScaleUpLimitWithScalingRules: Min of 1+2 pods and ceil(1 * 150%) is 2."""
    limit, _ = scale_up_limit(1, BehaviorState(), _MIN_OF_TWO, NOW)
    assert limit == 2


def test_calculate_scale_down_limit_with_behaviors() -> None:
    """TestCalculateScaleDownLimitWithBehaviors: the smaller change of 5-2 pods and trunc(5 * 50%) is 3."""
    limit, _ = scale_down_limit(5, BehaviorState(), _MIN_OF_TWO, NOW)
    assert limit == 3


# ---------------------------------------------------------------------------------------------------
# TestScalingWithRules (convertDesiredReplicasWithBehaviorRate)
# ---------------------------------------------------------------------------------------------------


def scaling(
    name: str,
    *,
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    expected: int,
    reason: str,
    up: ScalingRules | None = None,
    down: ScalingRules | None = None,
    up_events: tuple[ScaleEvent, ...] = (),
    down_events: tuple[ScaleEvent, ...] = (),
) -> Any:
    behavior = Behavior(up or DEFAULT_SCALE_UP, down or DEFAULT_SCALE_DOWN)
    state = BehaviorState((), up_events, down_events)
    args = (current, desired, min_replicas, max_replicas, behavior, state)
    return pytest.param(args, expected, reason, id=f"TestScalingWithRules: {name}")


E_159 = uniform_events([1, 5, 9], 120)
E_8_12_9_11 = uniform_events([8, 12, 9, 11], 120)
E_10_10_10 = uniform_events([10, 10, 10], 120)

# fmt: off
SCALING_WITH_RULES = [
    scaling("prenormalized desired replicas within range",
            current=5, desired=7, min_replicas=3, max_replicas=8, expected=7, reason="DesiredWithinRange"),
    scaling("prenormalized desired replicas < minReplicas",
            current=3, desired=1, min_replicas=2, max_replicas=8, expected=2, reason="TooFewReplicas"),
    scaling("prenormalized desired replicas within range when minReplicas is 0",
            current=1, desired=0, min_replicas=0, max_replicas=10, expected=0, reason="DesiredWithinRange"),
    scaling("maxReplicas is the limit because maxReplicas < scaleUpLimit",
            current=20, desired=1000, min_replicas=1, max_replicas=10, expected=10, reason="TooManyReplicas"),
    scaling("desired replica count is more than the maximum replica count",
            current=100, desired=1000, min_replicas=100, max_replicas=150, expected=150, reason="TooManyReplicas"),
    scaling("scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies",
            current=3, desired=1000, min_replicas=1, max_replicas=2000, expected=4, reason="ScaleUpLimit",
            up=rules(0, 0, 1, 60, 0)),
    # Upstream marks this row testThis and returns before running it; its expectation holds all the same.
    scaling("scaleDownLimit is the limit because scaleDownLimit > minReplicas with user defined policies",
            current=1000, desired=3, min_replicas=3, max_replicas=2000, expected=980, reason="ScaleDownLimit",
            down=rules(20, 60, 0, 0, 0)),
    scaling("scaleUp with default behavior",
            current=10, desired=50, min_replicas=1, max_replicas=1000, expected=20, reason="ScaleUpLimit"),
    scaling("scaleUp with pods policy larger than percent policy",
            current=10, desired=500, min_replicas=1, max_replicas=1000, expected=110, reason="ScaleUpLimit",
            up=rules(100, 60, 100, 60, 0)),
    scaling("scaleUp with percent policy larger than pods policy",
            current=10, desired=500, min_replicas=1, max_replicas=1000, expected=20, reason="ScaleUpLimit",
            up=rules(2, 60, 100, 60, 0)),
    scaling("scaleUp with spec MaxReplicas limitation with large pod policy",
            current=10, desired=50, min_replicas=1, max_replicas=1000, expected=50, reason="DesiredWithinRange",
            up=rules(100, 60, 0, 0, 0)),
    scaling("scaleUp with spec MaxReplicas limitation with large percent policy",
            current=10, desired=50, min_replicas=1, max_replicas=1000, expected=50, reason="DesiredWithinRange",
            up=rules(10000, 60, 0, 0, 0)),
    scaling("scaleUp with pod policy limitation",
            current=10, desired=50, min_replicas=1, max_replicas=1000, expected=40, reason="ScaleUpLimit",
            up=rules(30, 60, 0, 0, 0)),
    scaling("scaleUp with percent policy limitation",
            current=10, desired=50, min_replicas=1, max_replicas=1000, expected=30, reason="ScaleUpLimit",
            up=rules(0, 0, 200, 60, 0)),
    scaling("scaleDown with percent policy larger than pod policy",
            current=100, desired=2, min_replicas=1, max_replicas=1000, expected=80, reason="ScaleDownLimit",
            down=rules(20, 60, 1, 60, 300)),
    scaling("scaleDown with pod policy larger than percent policy",
            current=100, desired=2, min_replicas=1, max_replicas=1000, expected=98, reason="ScaleDownLimit",
            down=rules(2, 60, 1, 60, 300)),
    scaling("scaleDown with spec MinReplicas=nil limitation with large pod policy",
            current=10, desired=0, min_replicas=1, max_replicas=1000, expected=1, reason="TooFewReplicas",
            down=rules(100, 60, 0, 0, 300)),
    scaling("scaleDown with spec MinReplicas limitation with large pod policy",
            current=10, desired=0, min_replicas=1, max_replicas=1000, expected=1, reason="TooFewReplicas",
            down=rules(100, 60, 0, 0, 300)),
    scaling("scaleDown with spec MinReplicas limitation with large percent policy",
            current=10, desired=2, min_replicas=5, max_replicas=1000, expected=5, reason="TooFewReplicas",
            down=rules(0, 0, 100, 60, 300)),
    scaling("scaleDown with pod policy limitation",
            current=10, desired=2, min_replicas=1, max_replicas=1000, expected=5, reason="ScaleDownLimit",
            down=rules(5, 60, 0, 0, 300)),
    scaling("scaleDown with percent policy limitation",
            current=10, desired=5, min_replicas=1, max_replicas=1000, expected=5, reason="DesiredWithinRange",
            down=rules(0, 0, 50, 60, 300)),
    scaling("scaleUp with spec MaxReplicas limitation with large pod policy and events",
            current=100, desired=500, min_replicas=1, max_replicas=200, expected=200, reason="TooManyReplicas",
            up=rules(300, 60, 0, 0, 0), up_events=E_159),
    scaling("scaleUp with spec MaxReplicas limitation with large percent policy and events",
            current=100, desired=500, min_replicas=1, max_replicas=200, expected=200, reason="TooManyReplicas",
            up=rules(0, 0, 10000, 60, 0), up_events=E_159),
    scaling("scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events",
            current=100, desired=500, min_replicas=1, max_replicas=1000, expected=100, reason="ScaleUpLimit",
            up=rules(5, 120, 0, 0, 0), up_events=E_159),
    scaling("scaleUp with pod policy and previous scale up events",
            current=100, desired=500, min_replicas=1, max_replicas=1000, expected=235, reason="ScaleUpLimit",
            up=rules(150, 120, 0, 0, 0), up_events=E_159),
    scaling("scaleUp with percent policy and previous scale up events",
            current=100, desired=500, min_replicas=1, max_replicas=1000, expected=255, reason="ScaleUpLimit",
            up=rules(0, 0, 200, 120, 0), up_events=E_159),
    scaling("scaleUp with percent policy and previous scale up and down events",
            current=6, desired=24, min_replicas=1, max_replicas=1000, expected=16, reason="ScaleUpLimit",
            up=rules(0, 0, 300, 300, 0), up_events=uniform_events([4], 120), down_events=uniform_events([2], 120)),
    scaling("scaleDown with default policy and previous events",
            current=10, desired=5, min_replicas=1, max_replicas=1000, expected=5, reason="DesiredWithinRange",
            down_events=E_159),
    scaling("scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events",
            current=100, desired=0, min_replicas=1, max_replicas=1000, expected=1, reason="TooFewReplicas",
            down=rules(115, 120, 0, 0, 300), down_events=E_159),
    scaling("scaleDown with spec MinReplicas limitation with large pod policy and previous events",
            current=100, desired=0, min_replicas=5, max_replicas=1000, expected=5, reason="TooFewReplicas",
            down=rules(130, 120, 0, 0, 300), down_events=E_159),
    scaling("scaleDown with spec MinReplicas limitation with large percent policy and previous events",
            current=100, desired=2, min_replicas=5, max_replicas=1000, expected=5, reason="TooFewReplicas",
            down=rules(0, 0, 100, 120, 300), down_events=E_159),
    scaling("scaleDown with pod policy limitation and previous events",
            current=100, desired=2, min_replicas=1, max_replicas=1000, expected=100, reason="ScaleDownLimit",
            down=rules(5, 120, 0, 0, 300), down_events=E_159),
    scaling("scaleDown with percent policy limitation and previous events",
            current=100, desired=0, min_replicas=1, max_replicas=1000, expected=56, reason="ScaleDownLimit",
            down=rules(0, 0, 50, 120, 300), down_events=uniform_events([2, 4, 6], 120)),
    scaling("scaleDown with percent policy and previous scale up and down events",
            current=10, desired=1, min_replicas=1, max_replicas=1000, expected=6, reason="ScaleDownLimit",
            down=rules(0, 0, 50, 180, 0), up_events=uniform_events([2], 120), down_events=uniform_events([4], 120)),
    scaling("scaleDown with previous events preventing further scale down",
            current=100, desired=0, min_replicas=1, max_replicas=1000, expected=100, reason="ScaleDownLimit",
            down=rules(0, 0, 10, 120, 300), down_events=E_10_10_10),
    scaling("scaleDown with with previous events still allowing more scale down",
            current=10, desired=5, min_replicas=1, max_replicas=1000, expected=5, reason="DesiredWithinRange",
            down=rules(0, 0, 1000, 120, 300), down_events=E_10_10_10),
    scaling("check 'outdated' flag for events for one behavior for up",
            current=100, desired=200, min_replicas=1, max_replicas=1000, expected=200, reason="DesiredWithinRange",
            up=rules(1000, 60, 0, 0, 0), up_events=E_8_12_9_11),
    scaling("check that events were not marked 'outdated' for two different policies in the behavior for up",
            current=100, desired=200, min_replicas=1, max_replicas=1000, expected=200, reason="DesiredWithinRange",
            up=rules(1000, 120, 100, 60, 0), up_events=E_8_12_9_11),
    scaling("check that events were marked 'outdated' for two different policies in the behavior for up",
            current=100, desired=200, min_replicas=1, max_replicas=1000, expected=200, reason="DesiredWithinRange",
            up=rules(1000, 30, 100, 60, 0), up_events=E_8_12_9_11),
    scaling("check 'outdated' flag for events for one behavior for down",
            current=100, desired=5, min_replicas=1, max_replicas=1000, expected=5, reason="DesiredWithinRange",
            down=rules(1000, 60, 0, 0, 300), down_events=E_8_12_9_11),
    scaling("check that events were not marked 'outdated' for two different policies in the behavior for down",
            current=100, desired=5, min_replicas=1, max_replicas=1000, expected=5, reason="DesiredWithinRange",
            down=rules(1000, 120, 100, 60, 300), down_events=E_8_12_9_11),
    scaling("check that events were marked 'outdated' for two different policies in the behavior for down",
            current=100, desired=5, min_replicas=1, max_replicas=1000, expected=5, reason="DesiredWithinRange",
            down=rules(1000, 30, 100, 60, 300), down_events=E_8_12_9_11),
]
# fmt: on


@pytest.mark.parametrize(("args", "expected", "reason"), SCALING_WITH_RULES)
def test_scaling_with_rules(args: tuple[Any, ...], expected: int, reason: str) -> None:
    current, desired, min_replicas, max_replicas, behavior, state = args
    limits = limit_with_behaviors(
        current_replicas=current,
        desired=desired,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        behavior=behavior,
        state=state,
        now=NOW,
    )
    assert (limits.desired, limits.reason) == (expected, reason)


# ---------------------------------------------------------------------------------------------------
# TestStoreScaleEvents
# ---------------------------------------------------------------------------------------------------

# fmt: off
STORE_SCALE_EVENTS = [
    pytest.param(None, [], [], 0, id="TestStoreScaleEvents: empty entries with default behavior"),
    pytest.param(rules(10, 60, 100, 60, 0), [], [(5, False)], 0,
                 id="TestStoreScaleEvents: empty entries with two-policy-behavior"),
    pytest.param(None, [(7, 61)], [(7, False)], 0,
                 id="TestStoreScaleEvents: one outdated entry to be kept untouched without behavior"),
    pytest.param(rules(10, 60, 100, 60, 0), [(7, 61)], [(5, False)], 0,
                 id="TestStoreScaleEvents: one outdated entry to be replaced with behavior"),
    pytest.param(rules(10, 60, 100, 60, 0), [(7, 58)], [(7, False), (5, False)], 7,
                 id="TestStoreScaleEvents: one actual entry to be not touched with behavior"),
    pytest.param(rules(10, 60, 0, 0, 0), [(7, 61), (6, 59)], [(5, False), (6, False)], 6,
                 id="TestStoreScaleEvents: two entries, one of them to be replaced"),
    pytest.param(rules(10, 60, 100, 30, 0), [(8, 29), (6, 59), (7, 61), (9, 61)],
                 [(8, False), (6, False), (7, True), (5, False)], 14,
                 id="TestStoreScaleEvents: replace one entry, use policies with different periods"),
    pytest.param(rules(10, 120, 100, 30, 0), [(7, 58), (6, 59)], [(7, False), (6, False), (5, False)], 13,
                 id="TestStoreScaleEvents: two entries, both actual"),
]
# fmt: on


@pytest.mark.parametrize("direction", ["up", "down"])
@pytest.mark.parametrize(("scaling_rules", "previous", "stored", "change_in_last_minute"), STORE_SCALE_EVENTS)
def test_store_scale_events(
    direction: str,
    scaling_rules: ScalingRules | None,
    previous: list[tuple[int, float]],
    stored: list[tuple[int, bool]],
    change_in_last_minute: int,
) -> None:
    """A scale of 10 by 5 in one direction, with only that direction's rules set (the other defaulted)."""
    events = tuple(ScaleEvent(change, at(age)) for change, age in previous)
    assert replicas_change_per_period(60, events, NOW) == change_in_last_minute

    if direction == "up":
        behavior = Behavior(scaling_rules, DEFAULT_SCALE_DOWN) if scaling_rules else None
        state = store_scale_event(behavior, BehaviorState((), events, ()), previous=10, new=15, now=NOW)
        got = state.scale_up_events
    else:
        behavior = Behavior(DEFAULT_SCALE_UP, scaling_rules) if scaling_rules else None
        state = store_scale_event(behavior, BehaviorState((), (), events), previous=10, new=5, now=NOW)
        got = state.scale_down_events
    assert [(e.replica_change, e.outdated) for e in got] == stored


# ---------------------------------------------------------------------------------------------------
# TestNormalizeDesiredReplicasWithBehavior (stabilizeRecommendationWithBehaviors)
# ---------------------------------------------------------------------------------------------------

# fmt: off
NORMALIZE_WITH_BEHAVIOR = [
    pytest.param([], 100, 5, 5, [5], 0, 0,
                 id="TestNormalizeDesiredReplicasWithBehavior: empty recommendations for scaling down"),
    pytest.param([(4, 120), (5, 60)], 100, 3, 5, [4, 5, 3], 0, 180,
                 id="TestNormalizeDesiredReplicasWithBehavior: simple scale down stabilization"),
    pytest.param([(4, 120), (5, 60)], 1, 7, 4, [4, 5, 7], 300, 0,
                 id="TestNormalizeDesiredReplicasWithBehavior: simple scale up stabilization"),
    pytest.param([(1, 120), (2, 60)], 100, 3, 3, [1, 2, 3], 300, 0,
                 id="TestNormalizeDesiredReplicasWithBehavior: no scale down stabilization"),
    pytest.param([(4, 120), (5, 60)], 1, 3, 3, [4, 5, 3], 0, 300,
                 id="TestNormalizeDesiredReplicasWithBehavior: no scale up stabilization"),
    pytest.param([(10, 600), (9, 540)], 100, 3, 3, [10, 3], 0, 0,
                 id="TestNormalizeDesiredReplicasWithBehavior: "
                    "no scale down stabilization, reuse recommendation element"),
    pytest.param([(10, 600), (9, 540)], 1, 100, 100, [10, 100], 0, 0,
                 id="TestNormalizeDesiredReplicasWithBehavior: "
                    "no scale up stabilization, reuse recommendation element"),
    pytest.param([(10, 600), (4, 60), (5, 120), (9, 540)], 100, 3, 5, [10, 4, 5, 3], 0, 180,
                 id="TestNormalizeDesiredReplicasWithBehavior: "
                    "scale down stabilization, reuse one of obsolete recommendation element"),
    pytest.param([(10, 6000), (6, 60), (5, 120), (9, 180)], 1, 100, 5, [100, 6, 5, 9], 300, 0,
                 id="TestNormalizeDesiredReplicasWithBehavior: "
                    "scale up stabilization, reuse one of obsolete recommendation element"),
    pytest.param([(2, 6000), (3, 180)], 2, 1, 2, None, 300, 300,
                 id="TestNormalizeDesiredReplicasWithBehavior: "
                    "scale up and down stabilization, do not scale up when prenormalized rec goes down"),
    pytest.param([(2, 6000), (1, 180)], 2, 3, 2, None, 300, 300,
                 id="TestNormalizeDesiredReplicasWithBehavior: "
                    "scale up and down stabilization, do not scale down when prenormalized rec goes up"),
]
# fmt: on


@pytest.mark.parametrize(
    ("history", "current", "proposal", "stabilized", "stored", "up_window", "down_window"), NORMALIZE_WITH_BEHAVIOR
)
def test_normalize_desired_replicas_with_behavior(
    history: list[tuple[int, float]],
    current: int,
    proposal: int,
    stabilized: int,
    stored: list[int] | None,
    up_window: int,
    down_window: int,
) -> None:
    """Windows are set explicitly on both directions (0 means no window), as upstream's NormalizationArg."""
    behavior = Behavior(
        ScalingRules((), stabilization_window_seconds=up_window),
        ScalingRules((), stabilization_window_seconds=down_window),
    )
    result, recs = stabilize_with_behaviors(
        current_replicas=current,
        proposal=proposal,
        behavior=behavior,
        recommendations=recommendations(history),
        settings=Settings(),
        now=NOW,
    )
    assert result.stabilized == stabilized
    if stored is not None:
        assert [r.replicas for r in recs] == stored
