"""Fallback when a metric fails (core/fallback.py): a 5-minute Prometheus outage through each mode, 15 s ticks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from autoscaler.core.fallback import Fallback, FallbackAction, observed_value
from autoscaler.core.state import behavior_state_from_json, behavior_state_to_json
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    ContainerUsage,
    ExternalReading,
    MetricFailure,
    MetricHealth,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReading,
    PodsReading,
    PodUsage,
    PodValue,
    ResourceReading,
)
from autoscaler.core.zero import ScaleToZero
from tests.core.story import INFLIGHT, QUEUE, START, Story, queue

DOWN = MetricFailure("Prometheus unreachable: connection refused")
OUTAGE_TICKS = 20  # 5 minutes of 15 s ticks


def _spec(**fallback: object) -> AutoscalerSpec:
    """In-flight messages, 5 per replica (AverageValue): 20 messages keep 4 replicas."""
    return AutoscalerSpec(max_replicas=20, min_replicas=1, metrics=(INFLIGHT,), fallback=Fallback(**fallback))  # type: ignore[arg-type]


def _outage(story: Story, before: float = 20) -> tuple[list[int], list[int]]:
    """A minute at `before` messages, 5 minutes of outage, then 2 minutes readable at the same backlog."""
    story.ticks(4, queue(before))
    during = story.ticks(OUTAGE_TICKS, DOWN)
    after = story.ticks(8, queue(before))
    return during, after


def _fallback_events(story: Story) -> list[str]:
    return [reason for reason, _ in story.events() if reason.startswith("Fallback")]


@pytest.mark.parametrize(
    ("fallback", "during", "reason"),
    [
        pytest.param({}, [4] * OUTAGE_TICKS, "FallbackHold", id="hold (the default): the HPA's freeze"),
        pytest.param(
            {"action": FallbackAction.SCALE_UP_ONLY, "replicas": 6},
            [4, 4] + [6] * (OUTAGE_TICKS - 2),
            "FallbackScaleUpOnly",
            id="scaleUpOnly 6: up to 6 at the third failure, never down",
        ),
        pytest.param(
            {"action": FallbackAction.SCALE_UP_ONLY, "replicas": 2},
            [4] * OUTAGE_TICKS,
            "FallbackScaleUpOnly",
            id="scaleUpOnly 2 below the current 4: stays at 4",
        ),
        pytest.param(
            {"action": FallbackAction.REPLICAS, "replicas": 8},
            [4, 4] + [8] * (OUTAGE_TICKS - 2),
            "FallbackReplicas",
            id="replicas 8: the fixed count from the third failure",
        ),
        pytest.param(
            {"action": FallbackAction.LAST_KNOWN_GOOD},
            [4] * OUTAGE_TICKS,
            "FallbackLastKnownGood",
            id="lastKnownGood: 20 messages stand in for 5 minutes, inside the 600 s budget",
        ),
        pytest.param(
            {"failure_threshold": 1, "action": FallbackAction.REPLICAS, "replicas": 8},
            [8] * OUTAGE_TICKS,
            "FallbackReplicas",
            id="failureThreshold 1: the first failure",
        ),
    ],
)
def test_a_five_minute_outage_through_each_mode(fallback: dict[str, object], during: list[int], reason: str) -> None:
    story = Story(_spec(**fallback), 4)
    seen, after = _outage(story)
    assert seen == during
    threshold = int(fallback.get("failure_threshold", 3))  # type: ignore[call-overload]
    started = story.decisions[4 + threshold - 1]
    assert [e.reason for e in started.events if str(e.reason).startswith("Fallback")] == ["FallbackStarted"]
    active = next(c for c in started.conditions if c.type == "FallbackActive")
    assert (active.status, active.reason) == ("True", reason)
    assert f"fallback {fallback.get('action', 'hold')} for metric 0 (inflight)" in started.summary
    # The first readable tick ends it, and the HPA's decisions carry on from the same backlog.
    ended = story.decisions[4 + OUTAGE_TICKS]
    assert [e.reason for e in ended.events if str(e.reason).startswith("Fallback")] == ["FallbackEnded"]
    assert _fallback_events(story) == ["FallbackStarted", "FallbackEnded"]
    condition = story.condition("FallbackActive")
    assert condition is not None and (condition.status, condition.reason) == ("False", "MetricsReadable")
    assert after[-1] == 4 or fallback.get("action") in (FallbackAction.SCALE_UP_ONLY, FallbackAction.REPLICAS)


def test_before_the_threshold_a_failure_holds_as_the_hpa_does() -> None:
    story = Story(_spec(action=FallbackAction.REPLICAS, replicas=8, failure_threshold=3), 4)
    story.ticks(2, queue(20))
    first, second = story.tick(DOWN), story.tick(DOWN)
    assert (first.desired_replicas, second.desired_replicas) == (4, 4)
    assert story.condition("FallbackActive").status == "False"  # type: ignore[union-attr]
    assert story.state.metric_health[0].failures == 2


def test_last_known_good_expires_after_its_budget_and_then_holds() -> None:
    """A 120 s budget: the last good 80 messages (8 replicas) stand in until they are 120 s old, then the HPA's
    hold; the condition says which."""
    story = Story(_spec(action=FallbackAction.LAST_KNOWN_GOOD, staleness_seconds=120, failure_threshold=2), 4)
    story.tick(queue(80))  # 4 -> 8, read at START
    good_at = story.now - (story.now - START)
    assert story.state.metric_health[0].last_good == 80_000
    assert story.state.metric_health[0].last_good_time == good_at
    seen = [story.tick(DOWN) for _ in range(12)]
    ages = [(d.desired_replicas, "last good value 80 from" in d.summary, "no good value within 120 s" in d.summary)
            for d in seen]  # fmt: skip
    # The first failure holds (threshold 2); failures 2..8 (15 s .. 120 s old... up to 120 s) substitute; then hold.
    assert ages[0] == (8, False, False)
    assert all(sub for _, sub, _ in ages[1:8])
    assert all(expired for _, _, expired in ages[8:])
    condition = story.condition("FallbackActive")
    assert condition is not None and condition.reason == "FallbackLastKnownGood"
    assert "holding as the HPA does" in condition.message


def test_last_known_good_scales_up_on_the_stored_value_when_the_target_grew() -> None:
    """The last good value is the backlog, not a replica count: with AverageValue, per replica."""
    spec = replace(_spec(action=FallbackAction.LAST_KNOWN_GOOD, failure_threshold=1), metrics=(INFLIGHT,))
    story = Story(spec, 2)
    story.tick(queue(20))  # 20 in flight at 5 per replica: 4
    assert story.replicas == 4
    assert [story.tick(DOWN).desired_replicas for _ in range(4)] == [4, 4, 4, 4]


def test_a_partial_failure_with_lastknowngood_still_lets_the_other_metric_scale_down() -> None:
    """With a stand-in value the failed metric proposes again, so the HPA's block on scale-down is lifted."""
    other = replace(INFLIGHT, metric_name="consumers_lag")
    spec = replace(_spec(action=FallbackAction.LAST_KNOWN_GOOD, failure_threshold=1), metrics=(INFLIGHT, other))
    story = Story(spec, 6)
    story.tick(queue(10), queue(10))  # both propose 2; the downscale window holds 6
    held = story.tick(DOWN, queue(10))
    assert "last good value 10 from 15 s ago" in held.summary
    assert held.metric_proposal == 2  # without the stand-in: no proposal, the HPA's hold
    assert held.status.current_metrics is not None and None not in held.status.current_metrics


def test_the_state_survives_a_json_round_trip_mid_outage_with_identical_decisions() -> None:
    spec = _spec(action=FallbackAction.LAST_KNOWN_GOOD, staleness_seconds=600)
    story, twin = Story(spec, 4), Story(spec, 4)
    for s in (story, twin):
        s.ticks(4, queue(60))
        s.ticks(5, DOWN)
    document = behavior_state_to_json(twin.state)
    assert document["metricHealth"][0]["failures"] == 5
    assert document["metricHealth"][0]["lastGood"]["milliValue"] == 60_000
    twin.round_trip()
    assert twin.state == story.state
    for reading in [DOWN] * 10 + [queue(60)] * 3:
        a, b = story.tick(reading), twin.tick(reading)
        assert (a.desired_replicas, a.summary, a.conditions, a.events) == (
            b.desired_replicas,
            b.summary,
            b.conditions,
            b.events,
        )


def test_a_metric_edited_in_the_spec_does_not_inherit_the_old_ones_memory() -> None:
    state = BehaviorState(
        recommendations=(),
        metric_health=(
            MetricHealth(key="External||||queue_depth_old||", failures=9, last_good=1, last_good_time=START),
        ),
    )
    story = Story(_spec(action=FallbackAction.REPLICAS, replicas=9), 4, state=state)
    assert story.tick(DOWN).desired_replicas == 4  # the first failure of this metric
    assert story.state.metric_health[0].failures == 1


def test_fallback_replicas_at_zero_wakes_a_queue_worker_in_an_outage() -> None:
    """With scaleToZero too: at zero, Prometheus down past the threshold brings the fixed count."""
    spec = AutoscalerSpec(
        max_replicas=10,
        min_replicas=0,
        metrics=(QUEUE,),
        scale_to_zero=ScaleToZero(cooldown_seconds=300),
        fallback=Fallback(failure_threshold=3, action=FallbackAction.REPLICAS, replicas=2),
    )
    story = Story(spec, 1)
    story.ticks(21, queue(0))
    assert story.replicas == 0
    assert story.ticks(4, DOWN) == [0, 0, 2, 2]


@pytest.mark.parametrize(
    ("spec", "reading", "value"),
    [
        pytest.param(QUEUE, ExternalReading((3000, 4000), START), 7000, id="External: the sum"),
        pytest.param(
            MetricSpec(MetricSourceType.OBJECT, MetricTarget(MetricTargetType.VALUE, value=1), metric_name="q"),
            ObjectReading(2500, START),
            2500,
            id="Object: the value",
        ),
        pytest.param(
            MetricSpec(MetricSourceType.PODS, MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=1)),
            PodsReading((PodValue("a", 1000, START), PodValue("b", 3000, START))),
            2000,
            id="Pods: the average",
        ),
        pytest.param(
            MetricSpec(MetricSourceType.RESOURCE, MetricTarget(MetricTargetType.UTILIZATION, average_utilization=50),
                       resource_name="cpu"),
            ResourceReading((
                PodUsage("a", START, 60, (ContainerUsage("app", {"cpu": 100}), ContainerUsage("side", {"cpu": 50}))),
                PodUsage("b", START, 60, (ContainerUsage("app", {"cpu": 250}),)),
            )),
            200,
            id="Resource: the average usage per pod",
        ),
        pytest.param(QUEUE, ExternalReading((), START), None, id="External with no series: no value, never zero"),
        pytest.param(QUEUE, DOWN, None, id="a failure: no value, never zero"),
    ],
)  # fmt: skip
def test_observed_value(spec: MetricSpec, reading: object, value: int | None) -> None:
    assert observed_value(spec, reading) == value  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"metricHealth": [{"metric": 3}]}, id="a metric key that is not a string"),
        pytest.param({"metricHealth": [{"metric": "m", "failures": -1}]}, id="negative failures"),
        pytest.param({"metricHealth": [{"metric": "m", "failures": "2"}]}, id="failures as a string"),
        pytest.param({"metricHealth": [{"metric": "m", "lastGood": {"milliValue": 1.5, "time": "x"}}]}, id="a float"),
        pytest.param({"idleSince": "yesterday"}, id="idleSince that is no time"),
    ],
)
def test_a_malformed_stored_state_is_refused(document: dict[str, object]) -> None:
    with pytest.raises((ValueError, KeyError)):
        behavior_state_from_json(document)


@pytest.mark.parametrize(
    "fallback",
    [
        pytest.param({}, id="hold"),
        pytest.param({"action": FallbackAction.LAST_KNOWN_GOOD}, id="lastKnownGood"),
        pytest.param({"action": FallbackAction.REPLICAS, "replicas": 4}, id="replicas 4"),
    ],
)
def test_no_scale_down_on_the_first_readings_after_an_outage(fallback: dict[str, object]) -> None:
    """After Prometheus returns, a rate over the few samples scraped since reads low: for recoverySeconds
    (120 s) it never scales down; the state's recoveredAt survives a JSON round trip; then the HPA's rule again."""
    story = Story(_spec(**fallback), 4)
    story.ticks(4, queue(20))
    story.ticks(OUTAGE_TICKS, DOWN)
    low = story.ticks(4, queue(8))  # 60 s of under-read windows: 8 messages propose 2
    story.round_trip()
    more = story.ticks(3, queue(8))  # 105 s readable
    assert low + more == [4] * 7
    assert (
        "no scale-down after the fallback until the metric has been readable for 120 s" in story.decisions[-1].summary
    )
    assert "metric 0 (inflight) readable again for 90 s" in story.decisions[-1].summary
    story.ticks(2, queue(8))  # 135 s readable: the guard is over
    last = story.decisions[-1]
    assert "no scale-down after the fallback" not in last.summary
    assert all(h.recovered_at is None for h in last.state.metric_health)


def test_recovery_seconds_zero_is_the_hpa_rule_after_the_outage() -> None:
    story = Story(_spec(recovery_seconds=0), 4)
    story.ticks(4, queue(20))
    story.ticks(OUTAGE_TICKS, DOWN)
    assert story.ticks(1, queue(8)) == [2], "no recovery hold: the legacy window has no recommendation left"
