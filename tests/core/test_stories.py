"""Multi-minute stories run against the core with a fake clock and production durations.

Each tick is one reconcile 15 s after the last (the HPA's default sync period); the target's scale follows
each decision, and the behaviour state carries from one decision to the next, as in the daemon.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from autoscaler.core.decision import Decision, decide
from autoscaler.core.types import (
    AutoscalerSpec,
    Behavior,
    BehaviorState,
    ExternalReading,
    MetricFailure,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Scale,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
    Settings,
)

START = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
QUEUE = MetricSpec(
    MetricSourceType.EXTERNAL,
    MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=1000),  # 1 message per pod
    metric_name="queue_depth",
)


@dataclass
class Story:
    """A target driven by a sequence of readings; the clock advances 15 s per tick."""

    spec: AutoscalerSpec
    replicas: int
    now: datetime = START
    state: BehaviorState = field(default_factory=lambda: BehaviorState(recommendations=()))
    settings: Settings = field(default_factory=Settings)
    decisions: list[Decision] = field(default_factory=list)

    def tick(self, reading: MetricInput) -> Decision:
        result = decide(
            spec=self.spec,
            scale=Scale(self.replicas, self.replicas, "app=worker"),
            pods=(),
            metrics=(reading,),
            state=self.state,
            settings=self.settings,
            now=self.now,
        )
        self.decisions.append(result)
        self.state = result.state
        assert result.desired_replicas is not None
        self.replicas = result.desired_replicas
        self.now += timedelta(seconds=15)
        return result


def _queue(messages: int) -> ExternalReading:
    return ExternalReading(values=(messages * 1000,), timestamp=START)


def test_scale_down_policies_pods_4_and_percent_10_per_minute() -> None:
    """From 80 towards 10 with Pods 4/60 s and Percent 10/60 s (selectPolicy Max), Max selects the larger
    change: 10 % (8 pods) while above 40 replicas, then 4 pods a minute, one step per 60 s period."""
    down = ScalingRules(
        policies=(
            ScalingPolicy(ScalingPolicyType.PODS, 4, 60),
            ScalingPolicy(ScalingPolicyType.PERCENT, 10, 60),
        ),
        select_policy=SelectPolicy.MAX,
        stabilization_window_seconds=0,
    )
    up = ScalingRules(policies=(ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15),), stabilization_window_seconds=0)
    story = Story(AutoscalerSpec(max_replicas=100, min_replicas=1, metrics=(QUEUE,), behavior=Behavior(up, down)), 80)
    sizes = []
    for _ in range(4 * 16):  # 16 minutes
        story.tick(_queue(10))  # 10 messages: 10 replicas wanted
        sizes.append(story.replicas)
    per_minute = sizes[::4]
    assert per_minute == [72, 64, 57, 51, 45, 40, 36, 32, 28, 24, 20, 16, 12, 10, 10, 10]
    # Within a minute nothing more moves: the period's budget is spent.
    assert sizes[1:4] == [72, 72, 72]
    limited = story.decisions[1]
    assert limited.limits is not None and limited.limits.reason == "ScaleDownLimit"
    assert [p.period_start_replicas for p in limited.limits.policies] == [80, 80]


def test_legacy_downscale_waits_for_the_five_minute_window() -> None:
    """Without behavior: the highest recommendation of the last 300 s holds a scale-down back."""
    story = Story(AutoscalerSpec(max_replicas=20, min_replicas=1, metrics=(QUEUE,)), 8)
    story.tick(_queue(8))  # at 8: recommendation 8
    for _ in range(19):  # 4 min 45 s of low load
        assert story.tick(_queue(2)).desired_replicas == 8
    assert story.decisions[-1].conditions[0].reason == "ScaleDownStabilized"
    # 300 s after the last recommendation of 8, it ages out of the window.
    assert story.tick(_queue(2)).desired_replicas == 8
    assert story.tick(_queue(2)).desired_replicas == 2


def test_metric_outage_never_scales_down() -> None:
    """A queue metric that stops answering holds the count, tick after tick, and recovers when it returns."""
    story = Story(AutoscalerSpec(max_replicas=20, min_replicas=1, metrics=(QUEUE,)), 6)
    for _ in range(40):  # 10 minutes without data
        result = story.tick(MetricFailure("Prometheus query returned no data"))
        assert (result.desired_replicas, result.rescale) == (6, False)
        assert result.error is not None and "no data" in result.error
    assert story.tick(_queue(12)).desired_replicas == 12


def test_scale_up_limit_with_behavior_counts_recent_events() -> None:
    """Percent 100 per 60 s: doubling is allowed once per minute, measured from the period's start."""
    up = ScalingRules(policies=(ScalingPolicy(ScalingPolicyType.PERCENT, 100, 60),), stabilization_window_seconds=0)
    down = ScalingRules(policies=(ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15),))
    story = Story(AutoscalerSpec(max_replicas=100, metrics=(QUEUE,), behavior=Behavior(up, down)), 2)
    sizes = [story.tick(_queue(50)).desired_replicas for _ in range(13)]
    assert sizes == [4, 4, 4, 4, 8, 8, 8, 8, 16, 16, 16, 16, 32]
