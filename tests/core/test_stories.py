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
    Condition,
    ExternalReading,
    MetricFailure,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Pod,
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
    conditions: tuple[Condition, ...] = ()
    # Whether the target's pods are listed (ready and running, one per replica): Value targets count them.
    with_pods: bool = False

    def tick(self, reading: MetricInput) -> Decision:
        pods = tuple(
            Pod(f"worker-{i}", "Running", labels={"app": "worker"}, ready="True", start_time=START)
            for i in range(self.replicas if self.with_pods else 0)
        )
        result = decide(
            spec=self.spec,
            scale=Scale(self.replicas, self.replicas, "app=worker"),
            pods=pods,
            metrics=(reading,),
            state=self.state,
            settings=self.settings,
            now=self.now,
            conditions=self.conditions,
        )
        self.decisions.append(result)
        self.state = result.state
        self.conditions = result.conditions
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


def test_the_first_reconcile_s_recommendation_leaves_the_window_at_first_tick_plus_window() -> None:
    """Upstream stamps the initial recommendation with its own clock read, an instant before the reconcile's
    stabilization reads the clock: at exactly first tick + 300 s the legacy window no longer holds it."""
    story = Story(AutoscalerSpec(max_replicas=20, min_replicas=1, metrics=(QUEUE,)), 8, state=BehaviorState())
    first = story.tick(_queue(2))  # never reconciled: the current 8 is the initial recommendation
    assert first.desired_replicas == 8
    assert first.state.recommendations is not None
    assert first.state.recommendations[0].timestamp < START
    for _ in range(19):  # up to first tick + 285 s
        assert story.tick(_queue(2)).desired_replicas == 8
    assert story.now == START + timedelta(seconds=300)
    assert story.tick(_queue(2)).desired_replicas == 2


QUEUE_VALUE = MetricSpec(
    MetricSourceType.EXTERNAL,
    MetricTarget(MetricTargetType.VALUE, value=10_000),  # 10 messages per replica
    metric_name="queue_depth",
)
DRAIN = Behavior(
    scale_up=ScalingRules(policies=(ScalingPolicy(ScalingPolicyType.PODS, 4, 15),), stabilization_window_seconds=0),
    scale_down=ScalingRules(
        policies=(ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15),), stabilization_window_seconds=60
    ),
)


def _scaled_to_zero(story: Story) -> str | None:
    return next((c.status for c in story.conditions if c.type == "ScaledToZero"), None)


def test_a_queue_worker_goes_to_zero_and_comes_back_with_the_gate_on() -> None:
    """With HPAScaleToZero on: an idle queue takes the worker to 0 after the 60 s window, the autoscaler marks
    that zero as its own (ScaledToZero True), and the first messages bring it back (ScaledToZero False)."""
    spec = AutoscalerSpec(max_replicas=10, min_replicas=0, metrics=(QUEUE_VALUE,), behavior=DRAIN)
    story = Story(spec, 3, state=BehaviorState(), settings=Settings(hpa_scale_to_zero=True), with_pods=True)
    sizes = [story.tick(_queue(0)).desired_replicas for _ in range(6)]
    assert sizes == [3, 3, 3, 3, 0, 0]  # the 60 s window holds the first reconcile's 3 until it ages out
    assert _scaled_to_zero(story) == "True"
    for _ in range(20):  # five idle minutes at zero: metrics still read, nothing written
        result = story.tick(_queue(0))
        assert (result.desired_replicas, result.rescale) == (0, False)
        assert result.conditions[-1].reason != "ScalingDisabled"
    back = story.tick(_queue(25))
    assert (back.desired_replicas, back.rescale) == (3, True)  # ceil(25 / 10) from zero
    assert _scaled_to_zero(story) == "False"


def test_with_the_gate_off_a_zero_is_final_as_in_kubernetes_1_36() -> None:
    """Gate off (1.36's default): the worker can still be taken to 0 by minReplicas 0, but at 0 scaling is
    disabled, whatever the queue does: the HPA cannot tell that zero from one a person set."""
    spec = AutoscalerSpec(max_replicas=10, min_replicas=0, metrics=(QUEUE_VALUE,), behavior=DRAIN)
    story = Story(spec, 3, with_pods=True)
    for _ in range(6):
        story.tick(_queue(0))
    assert story.replicas == 0 and _scaled_to_zero(story) is None
    for _ in range(10):
        result = story.tick(_queue(500))
        assert (result.desired_replicas, result.rescale) == (0, False)
    active = next(c for c in story.conditions if c.type == "ScalingActive")
    assert (active.status, active.reason) == ("False", "ScalingDisabled")


def test_a_zero_set_by_hand_is_left_alone_even_with_the_gate_on() -> None:
    """The HPA's implicit maintenance mode: a target someone scaled to 0 stays there."""
    spec = AutoscalerSpec(max_replicas=10, min_replicas=0, metrics=(QUEUE_VALUE,), behavior=DRAIN)
    story = Story(spec, 0, settings=Settings(hpa_scale_to_zero=True), with_pods=True)
    for _ in range(8):
        assert story.tick(_queue(500)).desired_replicas == 0
    assert _scaled_to_zero(story) is None
