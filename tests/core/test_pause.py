"""Pausing by annotation (core/pause.py): reading the annotations, and multi-minute stories on a fake clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from autoscaler.core.decision import Decision, decide, dry_run
from autoscaler.core.events import EventReason
from autoscaler.core.pause import PAUSED, PAUSED_REPLICAS, Pause, combine, pause_from_annotations
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    Condition,
    ConditionType,
    ExternalReading,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Scale,
    ScaleFailure,
    Settings,
)

START = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
QUEUE = MetricSpec(
    MetricSourceType.EXTERNAL,
    MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=1000),  # 1 message per pod
    metric_name="queue_depth",
)
SPEC = AutoscalerSpec(max_replicas=20, min_replicas=1, metrics=(QUEUE,))
ON_TARGET = "Deployment worker"


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param({}, None, id="no annotation: not paused"),
        pytest.param({"other": "x"}, None, id="other annotations are not read"),
        pytest.param({PAUSED: "false"}, None, id="paused false: not paused"),
        pytest.param({PAUSED: "true"}, Pause(ON_TARGET), id="paused true: hold"),
        pytest.param({PAUSED_REPLICAS: "3"}, Pause(ON_TARGET, 3), id="a count: held at it"),
        pytest.param({PAUSED_REPLICAS: "0"}, Pause(ON_TARGET, 0), id="a count of 0"),
        pytest.param({PAUSED: "true", PAUSED_REPLICAS: "5"}, Pause(ON_TARGET, 5), id="both: the count"),
    ],
)
def test_annotations_that_read(annotations: dict[str, str], expected: Pause | None) -> None:
    assert pause_from_annotations(annotations, source=ON_TARGET) == expected


@pytest.mark.parametrize(
    ("annotations", "named"),
    [
        pytest.param({PAUSED: "yes"}, f'{PAUSED}: "yes"', id="paused yes"),
        pytest.param({PAUSED: "True"}, f'{PAUSED}: "True"', id="paused True (case matters)"),
        pytest.param({PAUSED: ""}, f'{PAUSED}: ""', id="paused empty"),
        pytest.param({PAUSED_REPLICAS: "-1"}, f'{PAUSED_REPLICAS}: "-1"', id="a negative count"),
        pytest.param({PAUSED_REPLICAS: "2.5"}, f'{PAUSED_REPLICAS}: "2.5"', id="a fractional count"),
        pytest.param({PAUSED_REPLICAS: " 3"}, f'{PAUSED_REPLICAS}: " 3"', id="a count with a space"),
        pytest.param({PAUSED_REPLICAS: "2147483648"}, f'{PAUSED_REPLICAS}: "2147483648"', id="beyond int32"),
        pytest.param({PAUSED_REPLICAS: "٣"}, f'{PAUSED_REPLICAS}: "٣"', id="a non-ASCII digit"),
        pytest.param({PAUSED: "false", PAUSED_REPLICAS: "3"}, f'{PAUSED}: "false" contradicts', id="contradiction"),
    ],
)
def test_bad_values_are_problems_naming_the_annotation_and_value(annotations: dict[str, str], named: str) -> None:
    pause = pause_from_annotations(annotations, source=ON_TARGET)
    assert pause is not None and pause.replicas is None
    assert pause.problem.startswith(f"{ON_TARGET}: ") and named in pause.problem


@pytest.mark.parametrize(
    ("requests", "expected"),
    [
        pytest.param([None, None], None, id="none"),
        pytest.param([Pause("spec"), None], Pause("spec"), id="the spec alone"),
        pytest.param([None, Pause("target", 2)], Pause("target", 2), id="the target alone"),
        pytest.param([Pause("spec"), Pause("target", 2)], Pause("target", 2), id="a count wins over a hold"),
        pytest.param([Pause("spec", 4), Pause("target", 2)], Pause("spec", 4), id="the spec's count first"),
        pytest.param(
            [Pause("spec", 4), Pause("target", problem="bad")], Pause("target", problem="bad"), id="a problem wins"
        ),
    ],
)
def test_combining_the_spec_and_the_target(requests: list[Pause | None], expected: Pause | None) -> None:
    assert combine(requests) == expected


def _queue(messages: int) -> ExternalReading:
    return ExternalReading(values=(messages * 1000,), timestamp=START)


@dataclass
class Story:
    """A queue worker decided every 15 s; the scale follows each decision; the pause changes between ticks."""

    replicas: int
    now: datetime = START
    state: BehaviorState = field(default_factory=lambda: BehaviorState(recommendations=()))
    conditions: tuple[Condition, ...] = ()
    decisions: list[Decision] = field(default_factory=list)

    def tick(self, messages: int, pause: Pause | None = None, *, dry: bool = False) -> Decision:
        result = decide(
            spec=SPEC,
            scale=Scale(self.replicas, self.replicas, "app=worker"),
            pods=(),
            metrics=(_queue(messages),),
            state=self.state,
            settings=Settings(),
            now=self.now,
            conditions=self.conditions,
            pause=pause,
        )
        if dry:
            result = dry_run(result, state=self.state, conditions=self.conditions, last_scale_time=None)
        self.decisions.append(result)
        self.state, self.conditions = result.state, result.conditions
        if result.rescale:
            assert result.desired_replicas is not None
            self.replicas = result.desired_replicas
        self.now += timedelta(seconds=15)
        return result


def _active(decision: Decision) -> Condition:
    return next(c for c in decision.conditions if c.type == ConditionType.SCALING_ACTIVE)


def _reasons(decision: Decision) -> list[str]:
    return [str(e.reason) for e in decision.events]


def test_a_pause_holds_through_a_burst_and_scaling_resumes_when_it_ends() -> None:
    """Paused on the target for 5 minutes of a growing backlog: no write, one ScalingPaused Event, the status
    says so; the annotation removed, the next tick scales on the backlog again, with a ScalingResumed Event."""
    story = Story(replicas=2)
    assert story.tick(2).desired_replicas == 2
    pause = Pause(ON_TARGET)
    first = story.tick(12, pause)
    assert not first.rescale and first.desired_replicas == 2
    assert _active(first).status == "False" and _active(first).reason == "ScalingPaused"
    assert f"{PAUSED} on {ON_TARGET}" in _active(first).message
    assert _reasons(first) == ["ScalingPaused"]
    assert first.metrics == () and "paused at 2" in first.summary
    for _ in range(19):  # five minutes of backlog, still paused: nothing moves, no repeated Event
        held = story.tick(12, pause)
        assert not held.rescale and held.desired_replicas == 2 and held.events == ()
        assert _active(held).last_transition_time == _active(first).last_transition_time
    resumed = story.tick(12)
    assert resumed.rescale and resumed.desired_replicas == 4  # the scale-up limit: 2 -> max(4, 2 * 2)
    assert _reasons(resumed)[0] == "ScalingResumed"
    assert _active(resumed).status == "True" and _active(resumed).reason == "ValidMetricFound"
    assert "ScalingResumed" not in _reasons(story.tick(12))  # once


def test_a_paused_count_is_written_once_then_held() -> None:
    """paused-replicas 6 on a target at 2: one write to 6 (SuccessfulRescale, a scale event), then held there
    whatever the metrics say; metrics would have scaled it to 1."""
    story = Story(replicas=2)
    pause = Pause("PrometheusAutoscaler shop/worker", 6)
    first = story.tick(1, pause)
    assert first.rescale and first.desired_replicas == 6
    assert _reasons(first) == ["ScalingPaused", "SuccessfulRescale"]
    assert f"{PAUSED_REPLICAS} on PrometheusAutoscaler shop/worker" in first.events[1].message
    assert first.status.last_scale_time == START  # a real write, through the usual path
    for _ in range(20):
        later = story.tick(1, pause)
        assert not later.rescale and later.desired_replicas == 6 and later.events == ()
    assert story.replicas == 6


def test_a_paused_count_in_dry_run_is_reported_not_written() -> None:
    story = Story(replicas=2)
    result = story.tick(1, Pause(ON_TARGET, 6), dry=True)
    assert result.desired_replicas == 6
    assert _reasons(result) == ["ScalingPaused", "DryRunRescale"]
    assert result.state.scale_up_events == ()


def test_a_bad_annotation_holds_and_is_reported_every_tick() -> None:
    """A value that does not read never lets metrics scale the target: held, ScalingActive False with reason
    InvalidPauseAnnotation and a Warning Event naming the annotation and its value, each tick."""
    story = Story(replicas=3)
    bad = pause_from_annotations({PAUSED: "yes"}, source=ON_TARGET)
    assert bad is not None
    for _ in range(3):
        result = story.tick(15, bad)
        assert not result.rescale and result.desired_replicas == 3
        assert _active(result).reason == "InvalidPauseAnnotation"
        assert [(e.type, e.reason) for e in result.events] == [("Warning", EventReason.INVALID_PAUSE_ANNOTATION)]
        assert f'{PAUSED}: "yes"' in result.events[0].message
    fixed = story.tick(15)
    assert fixed.rescale and _reasons(fixed)[0] == "ScalingResumed"


def test_a_scale_that_cannot_be_read_is_still_failed_get_scale() -> None:
    result = decide(
        spec=SPEC,
        scale=ScaleFailure('deployments.apps "worker" not found'),
        pods=(),
        metrics=(_queue(1),),
        state=BehaviorState(),
        settings=Settings(),
        now=START,
        pause=Pause(ON_TARGET, 3),
    )
    assert not result.rescale and _reasons(result) == ["FailedGetScale"]


def test_a_paused_target_at_zero_is_scaled_to_the_paused_count() -> None:
    story = Story(replicas=0)
    result = story.tick(0, Pause(ON_TARGET, 2))
    assert result.rescale and result.desired_replicas == 2


def test_a_bad_annotation_corrected_to_a_pause_says_pausing_starts() -> None:
    story = Story(replicas=3)
    bad = pause_from_annotations({PAUSED: "ture"}, source=ON_TARGET)
    story.tick(15, bad)
    corrected = story.tick(15, Pause(ON_TARGET))
    assert _reasons(corrected) == ["ScalingPaused"] and _active(corrected).reason == "ScalingPaused"
