"""Scale to zero and back (core/zero.py), as multi-minute stories with production durations: a 300 s cooldown."""

from __future__ import annotations

from dataclasses import replace

import pytest

from autoscaler.core.decision import dry_run
from autoscaler.core.state import behavior_state_to_json
from autoscaler.core.types import (
    AutoscalerSpec,
    Behavior,
    MetricFailure,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    Settings,
)
from autoscaler.core.zero import ScaleToZero
from tests.core.story import INFLIGHT, QUEUE, Story, queue

ZERO = ScaleToZero(cooldown_seconds=300)
SPEC = AutoscalerSpec(max_replicas=10, min_replicas=0, metrics=(QUEUE,), scale_to_zero=ZERO)
DOWN = MetricFailure("Prometheus unreachable: connection refused")


def _to_zero(story: Story) -> int:
    """Idle ticks until the target reaches zero; how many it took."""
    for count in range(1, 200):
        if story.tick(queue(0)).desired_replicas == 0:
            return count
    raise AssertionError("never reached zero")


def test_an_idle_queue_goes_to_zero_after_the_whole_cooldown_and_is_marked_as_the_autoscalers_zero() -> None:
    """The gate is off (1.36's default): scaleToZero opts in. 300 s idle after the first idle tick, then 0."""
    story = Story(SPEC, 3)
    sizes = story.ticks(21, queue(0))
    # Above 0 the metrics path never goes below 1; the 300 s downscale window holds 3 until the cooldown ends.
    assert sizes == [3] * 20 + [0]
    last = story.decisions[-1]
    assert last.rescale and "scaled to zero: every metric at or below its activation threshold for 300 s" in (
        last.rescale_reason
    )
    assert "SuccessfulRescale" in [e for e, _ in story.events(20)]
    zero = story.condition("ScaledToZero")
    assert zero is not None and (zero.status, zero.reason) == ("True", "ScaledToZero")
    # The 300 s downscale window held 3 the whole time; the cooldown's last idle tick says how far it is.
    assert story.decisions[19].desired_replicas == 3
    assert "idle for 285 s of the 300 s cooldown" in story.decisions[19].summary


# A short scale-down window (15 s) and a 100 % policy: the metrics' 0 reaches the floor of 1 before the cooldown ends.
FAST = Behavior(
    scale_up=ScalingRules((ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15),), stabilization_window_seconds=0),
    scale_down=ScalingRules((ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15),), stabilization_window_seconds=15),
)
WITHIN_RANGE = ("False", "DesiredWithinRange", "the desired count is within the acceptable range")
HELD = (
    "True",
    "ScaleToZeroCooldown",
    "the desired replica count is less than 1, the least above zero until every metric has been idle for the "
    "scale-to-zero cooldown",
)


@pytest.mark.parametrize(
    ("start", "idle_replicas", "sizes", "limited"),
    [
        pytest.param(
            1, 0, [1, 1, 1, 1, 0], [WITHIN_RANGE, HELD, HELD, HELD, WITHIN_RANGE],
            id="1 -> 0 at minReplicas 0: held at 1 by the cooldown, then within range as the HPA says of 1 -> 0",
        ),
        pytest.param(
            3, 0, [3, 1, 1, 1, 0], [WITHIN_RANGE, HELD, HELD, HELD, WITHIN_RANGE],
            id="3 -> 1 is held by the cooldown's floor of 1, not by a minimum replica count",
        ),
        pytest.param(
            3, 2, [3, 1, 1, 1, 2], [WITHIN_RANGE, HELD, HELD, HELD, WITHIN_RANGE],
            id="the idle count 2 after the cooldown is within range too",
        ),
    ],
)  # fmt: skip
def test_the_scaling_limited_condition_on_the_way_to_zero_names_the_cooldown_never_a_minimum(
    start: int, idle_replicas: int, sizes: list[int], limited: list[tuple[str, str, str]]
) -> None:
    """minReplicas is 0: TooFewReplicas ("less than the minimum replica count") would be wrong at any step."""
    zero = replace(ZERO, cooldown_seconds=60, idle_replicas=idle_replicas)
    story = Story(replace(SPEC, behavior=FAST, scale_to_zero=zero), start)
    seen = []
    for _ in sizes:
        story.tick(queue(0))
        condition = story.condition("ScalingLimited")
        assert condition is not None
        seen.append((condition.status, condition.reason, condition.message))
    assert [d.desired_replicas for d in story.decisions] == sizes
    assert seen == limited
    last = story.decisions[-1]
    assert last.limits is not None and (last.limits.desired, last.limits.clipped) == (idle_replicas, False)
    assert "TooFewReplicas" not in last.summary and "limited to" not in last.summary, last.summary


def test_with_a_minimum_above_zero_too_few_replicas_is_still_the_hpas() -> None:
    """Without scaleToZero (minReplicas 2), a 0 proposal is limited by the minimum, as the HPA says."""
    story = Story(AutoscalerSpec(max_replicas=10, min_replicas=2, metrics=(QUEUE,), behavior=FAST), 4)
    assert story.ticks(3, queue(0)) == [4, 2, 2]
    condition = story.condition("ScalingLimited")
    assert condition is not None and (condition.status, condition.reason) == ("True", "TooFewReplicas")


def test_activity_during_the_cooldown_restarts_it() -> None:
    story = Story(SPEC, 2)
    story.ticks(12, queue(0))  # 180 s idle
    assert (story.tick(queue(1)).desired_replicas or 0) >= 1  # one message: active, the idle stretch ends
    assert story.state.idle_since is None
    assert _to_zero(story) == 21  # a whole new 300 s


def test_a_failed_metric_never_counts_as_idle_and_restarts_the_cooldown() -> None:
    """KEDA's bug read "no data" as zero; here a failure ends the idle stretch, and the target holds."""
    story = Story(SPEC, 2)
    story.ticks(19, queue(0))  # 270 s idle
    before = story.replicas
    held = story.tick(DOWN)
    assert (held.desired_replicas, held.rescale) == (before, False)
    assert story.state.idle_since is None
    assert held.summary.startswith("hold: no metric could be computed")
    assert "not idle: unreadable metric 0 (queue_depth)" in held.summary
    for _ in range(20):  # a 5-minute outage: never zero
        assert story.tick(DOWN).desired_replicas != 0
    assert _to_zero(story) == 21


def test_any_failed_metric_among_several_blocks_zero() -> None:
    spec = replace(SPEC, metrics=(QUEUE, INFLIGHT))
    story = Story(spec, 2)
    for _ in range(40):
        assert story.tick(queue(0), DOWN).desired_replicas != 0
    assert story.tick(queue(0), queue(0)).desired_replicas != 0  # readable again: the cooldown starts now


@pytest.mark.parametrize(
    ("messages", "threshold", "desired"),
    [
        pytest.param(0, None, 0, id="an empty queue stays at zero"),
        pytest.param(0.001, None, 1, id="anything above the default threshold 0 activates, at least one replica"),
        pytest.param(45, None, 4, id="45 messages at 10 per replica want 5: the legacy cap max(2 x 0, 4) gives 4"),
        pytest.param(30, 50_000, 0, id="30 messages under an activation threshold of 50 stay at zero"),
        pytest.param(50, 50_000, 0, id="exactly at the threshold is not above it"),
        pytest.param(31, 30_000, 4, id="31 messages above 30 activate: ceil(31 / 10) = 4"),
    ],
)
def test_leaving_zero_needs_a_metric_above_its_activation_threshold(
    messages: float, threshold: int | None, desired: int
) -> None:
    spec = replace(SPEC, scale_to_zero=replace(ZERO, activation_thresholds=(threshold,)))
    story = Story(spec, 3)
    _to_zero(story)
    result = story.tick(queue(messages))
    assert result.desired_replicas == desired
    if desired:
        assert result.rescale_reason.startswith("activated from zero: metric 0 (queue_depth)")
        zero = story.condition("ScaledToZero")
        assert zero is not None and zero.status == "False"


def test_going_to_zero_compares_every_metric_with_its_own_threshold() -> None:
    spec = replace(SPEC, scale_to_zero=replace(ZERO, activation_thresholds=(5_000,)))
    story = Story(spec, 2)
    assert _to_zero_with(story, queue(5)) == 21  # 5 messages: at the threshold counts as idle
    story2 = Story(spec, 2)
    for _ in range(40):
        assert story2.tick(queue(6)).desired_replicas != 0


def _to_zero_with(story: Story, reading: object) -> int:
    for count in range(1, 200):
        if story.tick(reading).desired_replicas == 0:  # type: ignore[arg-type]
            return count
    raise AssertionError("never reached zero")


def test_the_idle_count_is_kept_instead_of_zero() -> None:
    spec = replace(SPEC, scale_to_zero=replace(ZERO, idle_replicas=2))
    story = Story(spec, 6)
    sizes = story.ticks(25, queue(0))
    assert sizes[-1] == 2 and 0 not in sizes
    assert "scaled to the idle count 2" in story.decisions[20].rescale_reason


def test_a_zero_set_by_a_person_is_left_alone() -> None:
    """No ScaledToZero=True condition: the HPA's implicit maintenance mode, whatever the queue says."""
    story = Story(SPEC, 0)
    for _ in range(8):
        result = story.tick(queue(500))
        assert (result.desired_replicas, result.rescale) == (0, False)
    assert "did not set" in story.decisions[-1].summary


def test_at_zero_a_failed_metric_holds_at_zero() -> None:
    story = Story(SPEC, 1)
    _to_zero(story)
    for _ in range(20):
        assert story.tick(DOWN).desired_replicas == 0


def test_the_cooldown_survives_a_restart_through_the_state_json() -> None:
    """Mid-story the state goes through its JSON form: the idle stretch keeps its start, decisions are identical."""
    story, twin = Story(SPEC, 2), Story(SPEC, 2)
    for _ in range(10):
        story.tick(queue(0))
        twin.tick(queue(0))
    assert "idleSince" in behavior_state_to_json(twin.state)
    twin.round_trip()
    for _ in range(15):
        a, b = story.tick(queue(0)), twin.tick(queue(0))
        assert (a.desired_replicas, a.summary, a.conditions) == (b.desired_replicas, b.summary, b.conditions)
    assert story.replicas == twin.replicas == 0


def test_without_scale_to_zero_the_state_json_is_the_hpas() -> None:
    story = Story(AutoscalerSpec(max_replicas=10, min_replicas=1, metrics=(QUEUE,)), 2)
    story.ticks(5, queue(0))
    assert set(behavior_state_to_json(story.state)) == {"recommendations", "scaleUpEvents", "scaleDownEvents"}


def test_gate_on_and_scale_to_zero_together_decide_the_same() -> None:
    a = Story(SPEC, 2)
    b = Story(SPEC, 2, settings=Settings(hpa_scale_to_zero=True))
    assert a.ticks(25, queue(0)) == b.ticks(25, queue(0))


def test_dry_run_keeps_the_idle_stretch() -> None:
    """A dry-run decision to go to zero shows the rescale and keeps the idle stretch: the next tick decides again."""
    story = Story(SPEC, 2)
    story.ticks(20, queue(0))
    decision = story.decide(queue(0))
    assert decision.rescale and decision.desired_replicas == 0
    shown = dry_run(decision, state=story.state, conditions=story.conditions, last_scale_time=None)
    assert shown.state.idle_since == decision.state.idle_since is not None
    assert shown.summary.startswith("dry run: ")


def test_wake_from_manual_zero_takes_any_zero_as_its_own() -> None:
    """The spec says otherwise: a zero a person set leaves 0 on activation, and stays there without it."""
    spec = replace(SPEC, scale_to_zero=replace(ZERO, wake_from_manual_zero=True))
    story = Story(spec, 0)
    assert story.tick(queue(0)).desired_replicas == 0
    woke = story.tick(queue(25))
    assert (woke.desired_replicas, woke.rescale) == (3, True)
    assert woke.rescale_reason.startswith("activated from zero")
