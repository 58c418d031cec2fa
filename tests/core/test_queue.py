"""Drain-time and formula proposals (autoscaler/core/queue.py) through `decide`: tables and multi-tick stories."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest

from autoscaler.core.decision import Decision, decide
from autoscaler.core.events import EventReason
from autoscaler.core.formula import parse
from autoscaler.core.queue import DrainTime, ExtraMetrics, FormulaMetric
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    Condition,
    ConditionType,
    ExternalReading,
    MetricFailure,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReference,
    Pod,
    Scale,
    Settings,
)
from autoscaler.core.zero import ScaleToZero

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SELECTOR = "app=worker"
GATE = Settings(hpa_scale_to_zero=True)
SCALED_TO_ZERO = (Condition(ConditionType.SCALED_TO_ZERO, "True", "ScaledToZero", "scaled to zero", NOW),)


def external(name: str, target: MetricTarget | None = None) -> MetricSpec:
    return MetricSpec(
        MetricSourceType.EXTERNAL, target or MetricTarget(MetricTargetType.VALUE, value=1000), metric_name=name
    )


DRAIN = ExtraMetrics(drain_time=DrainTime(external("backlog"), external("rate"), target_seconds=60))


def formula(text: str, target: MetricTarget, names: tuple[str, ...] = ("queue", "consumers")) -> ExtraMetrics:
    return ExtraMetrics(formula=FormulaMetric(parse(text), tuple((n, external(n)) for n in names), target))


VALUE_10 = MetricTarget(MetricTargetType.VALUE, value=10_000)
AVERAGE_10 = MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=10_000)


def spec(extra: ExtraMetrics, *, metrics: tuple[MetricSpec, ...] = (), min_replicas: int = 1) -> AutoscalerSpec:
    return AutoscalerSpec(
        max_replicas=50,
        metrics=metrics,
        min_replicas=min_replicas,
        scale_target_ref=ObjectReference("Deployment", "worker", "apps/v1"),
        extra_metrics=extra,
    )


def pods(ready: int, unready: int = 0) -> tuple[Pod, ...]:
    since = NOW - timedelta(hours=1)
    return tuple(
        Pod(f"worker-{i}", "Running", labels={"app": "worker"}, ready="True" if i < ready else "False",
            ready_transition=since, start_time=since)
        for i in range(ready + unready)
    )  # fmt: skip


def value(number: float) -> ExternalReading:
    return ExternalReading((round(number * 1000),), NOW)


FAILED = MetricFailure("Prometheus is unreachable")


def run(
    extra: ExtraMetrics,
    inputs: tuple[MetricInput, ...],
    *,
    current: int,
    ready: int | None = None,
    unready: int = 0,
    metrics: tuple[tuple[MetricSpec, MetricInput], ...] = (),
) -> Decision:
    from_zero = current == 0
    return decide(
        spec=spec(extra, metrics=tuple(m for m, _ in metrics), min_replicas=0 if from_zero else 1),
        scale=Scale(current, current, SELECTOR),
        pods=pods(current if ready is None else ready, unready),
        metrics=[r for _, r in metrics],
        state=BehaviorState(recommendations=()),
        settings=GATE if from_zero else Settings(),
        now=NOW,
        conditions=SCALED_TO_ZERO if from_zero else (),
        inputs=inputs,
    )


# --- drain time ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backlog", "rate", "current", "ready", "proposal", "explained"),
    [
        pytest.param(value(1200), value(10), 2, 2, 4,
                     "backlog 1200, processing 10/s by 2 ready pods (5/s per replica), drained in 120 s against a "
                     "target of 60 s: ceil(1200 / (5/s x 60 s)) = 4", id="scale up: twice the target drain time"),
        pytest.param(value(630), value(10), 2, 2, 2, "within tolerance of the target (1.05 of it): keep 2",
                     id="within the tolerance: keep the count"),
        pytest.param(value(60), value(10), 4, 4, 1, "ceil(60 / (2.5/s x 60 s)) = 1",
                     id="scale down: a short backlog needs one replica"),
        pytest.param(value(3000), value(10), 4, 2, 10, "by 2 ready pods (5/s per replica)",
                     id="throughput per replica counts the ready pods that produced the rate"),
        pytest.param(value(0), value(10), 3, 3, 0, "backlog 0, nothing to drain: propose 0",
                     id="an empty queue proposes 0"),
        pytest.param(value(0), FAILED, 3, 3, 0, "backlog 0, nothing to drain",
                     id="an empty queue proposes 0 whatever the rate"),
        pytest.param(value(500), value(0), 3, 3, 3,
                     "throughput per replica unknown (the processing rate is 0): propose 3 (the current count",
                     id="rate 0 with a backlog: hold, never a scale-down"),
        pytest.param(value(500), FAILED, 3, 3, 3,
                     "throughput per replica unknown (the processing rate could not be read: Prometheus is "
                     "unreachable): propose 3", id="a failed rate with a backlog: hold"),
        pytest.param(value(500), value(-1), 3, 3, 3, "the processing rate is -1", id="a negative rate: hold"),
        pytest.param(value(500), value(10), 2, 0, 2, "(no ready pod processes the queue): propose 2",
                     id="no ready pod yet: hold"),
        pytest.param(value(50), value(0), 0, 0, 1, "propose 1 (the current count, at least 1 while there is a backlog",
                     id="from zero: a backlog brings one replica"),
        pytest.param(value(50), FAILED, 0, 0, 1, "propose 1", id="from zero with a failed rate: one replica"),
        pytest.param(value(0), value(0), 0, 0, 0, "nothing to drain", id="from zero, no backlog: stay at zero"),
    ],
)  # fmt: skip
def test_drain_time_proposal(
    backlog: MetricInput, rate: MetricInput, current: int, ready: int, proposal: int, explained: str
) -> None:
    decision = run(DRAIN, (backlog, rate), current=current, ready=ready, unready=current - ready)
    assert decision.metric_proposal == proposal
    assert decision.proposing_metric == "drain time"
    (extra,) = decision.extra_metrics
    assert extra.proposed_replicas == proposal and extra.error is None
    assert explained in extra.explanation
    assert extra.explanation in decision.summary


@pytest.mark.parametrize(
    ("backlog", "error"),
    [
        pytest.param(FAILED, "unable to get the drain time's backlog: Prometheus is unreachable", id="failed"),
        pytest.param(ExternalReading((), NOW), "unable to get the drain time's backlog: no metrics returned",
                     id="no series"),
        pytest.param(value(-5), "invalid drain time backlog: the backlog is negative (-5)", id="negative"),
    ],
)  # fmt: skip
def test_a_backlog_that_cannot_be_read_fails_the_proposal_and_holds(backlog: MetricInput, error: str) -> None:
    decision = run(DRAIN, (backlog, value(10)), current=4)
    assert (decision.desired_replicas, decision.rescale, decision.metric_proposal) == (4, False, None)
    assert decision.extra_metrics[0].error == error
    assert [(e.reason, e.message) for e in decision.events] == [
        (EventReason.FAILED_GET_EXTERNAL_METRIC, error),
        (EventReason.FAILED_COMPUTE_METRICS_REPLICAS, f"invalid metrics (1 invalid out of 1), first error is: {error}"),
    ]
    active = next(c for c in decision.conditions if c.type == ConditionType.SCALING_ACTIVE)
    assert (active.status, active.reason) == ("False", "FailedGetExternalMetric")
    assert decision.error is not None and "invalid metrics (1 invalid out of 1), first error is: " + error in (
        decision.error
    )
    assert decision.summary.startswith("hold: no metric could be computed")


def test_missing_inputs_count_as_failed_never_as_zero() -> None:
    decision = run(DRAIN, (), current=4)
    assert (decision.desired_replicas, decision.metric_proposal) == (4, None)
    assert decision.extra_metrics[0].error == "unable to get the drain time's backlog: not read"


# --- formula ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "inputs", "current", "proposal", "explained"),
    [
        pytest.param(formula("queue / max(consumers, 1)", VALUE_10), (value(100), value(4)), 4, 10,
                     "formula queue / max(consumers, 1) = 25 (queue=100, consumers=4) against a target value 10: "
                     "ceil(2.5 * 4 ready pods) = 10, propose 10", id="Value target: the ratio times the ready pods"),
        pytest.param(formula("queue / max(consumers, 1)", VALUE_10), (value(100), value(0)), 4, 40,
                     "consumers=0", id="max keeps a zero consumer count away"),
        pytest.param(formula("queue / max(consumers, 1)", AVERAGE_10), (value(100), value(4)), 4, 3,
                     "against a target average value 10 per replica: ceil(25000 / 10000) = 3",
                     id="AverageValue target: the value over the target"),
        pytest.param(formula("queue - consumers", VALUE_10), (value(11.5), value(1)), 4, 4,
                     "usage ratio within tolerance", id="within the tolerance: keep the count"),
        pytest.param(formula("queue / consumers", AVERAGE_10), (value(30), value(3)), 0, 1,
                     "= 10 (queue=30, consumers=3)", id="from zero: ceil of the value over the target"),
    ],
)  # fmt: skip
def test_formula_proposal(
    extra: ExtraMetrics, inputs: tuple[MetricInput, ...], current: int, proposal: int, explained: str
) -> None:
    decision = run(extra, inputs, current=current)
    assert decision.metric_proposal == proposal
    assert decision.proposing_metric.startswith("formula ")
    assert explained in decision.extra_metrics[0].explanation


@pytest.mark.parametrize(
    ("inputs", "error"),
    [
        pytest.param((FAILED, value(4)), "unable to compute formula queue / consumers: input 'queue' could not be "
                     "read: Prometheus is unreachable", id="a failed input"),
        pytest.param((value(10), value(0)), "unable to compute formula queue / consumers: division by zero at column 7",
                     id="a division by zero at run time"),
        pytest.param((value(10), ExternalReading((), NOW)), "input 'consumers' could not be read: no metrics returned",
                     id="an input without series"),
    ],
)  # fmt: skip
def test_a_formula_without_a_value_is_a_failed_metric_never_a_zero(inputs: tuple[MetricInput, ...], error: str) -> None:
    decision = run(formula("queue / consumers", VALUE_10), inputs, current=6)
    assert (decision.desired_replicas, decision.rescale, decision.metric_proposal) == (6, False, None)
    assert error in (decision.extra_metrics[0].error or "")


CPU_LIKE = MetricSpec(
    MetricSourceType.EXTERNAL, MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=1000), metric_name="jobs"
)


def test_the_largest_proposal_wins_across_metrics_and_extras() -> None:
    extra = ExtraMetrics(
        drain_time=DRAIN.drain_time,
        formula=formula("queue / max(consumers, 1)", VALUE_10).formula,
    )
    decision = run(
        extra,
        (value(1200), value(10), value(100), value(4)),
        current=4,
        metrics=((CPU_LIKE, value(6)),),
    )
    # the External metric proposes 6, the drain time 8, the formula 10
    assert [r.proposed_replicas for r in decision.metrics] == [6]
    assert [e.proposed_replicas for e in decision.extra_metrics] == [8, 10]
    assert (decision.metric_proposal, decision.proposing_metric) == (10, "formula queue / max(consumers, 1)")
    assert decision.rescale_reason == "formula queue / max(consumers, 1) above target"


@pytest.mark.parametrize(
    ("metric", "desired", "rescale"),
    [
        pytest.param(
            value(9), 8, True, id="the other metric scales up (to 9, limited to 8): the failure does not stop it"
        ),
        pytest.param(value(2), 4, False, id="the other metric would scale down: hold"),
    ],
)
def test_a_failed_extra_holds_unless_another_metric_scales_up(metric: MetricInput, desired: int, rescale: bool) -> None:
    decision = run(DRAIN, (FAILED, FAILED), current=4, metrics=((CPU_LIKE, metric),))
    assert (decision.desired_replicas, decision.rescale) == (desired, rescale)
    assert decision.error is not None and "invalid metrics (1 invalid out of 2)" in decision.error


def test_without_extra_metrics_inputs_are_ignored_and_nothing_is_added() -> None:
    base = AutoscalerSpec(max_replicas=10, metrics=(CPU_LIKE,), scale_target_ref=ObjectReference("Deployment", "w"))
    decision = decide(
        spec=base,
        scale=Scale(2, 2, SELECTOR),
        pods=pods(2),
        metrics=[value(5)],
        state=BehaviorState(recommendations=()),
        settings=Settings(),
        now=NOW,
        inputs=(value(1),),
    )
    assert decision.extra_metrics == () and decision.summary == "scale 2 -> 4: metrics propose 5, limited to 4 " + (
        "(ScaleUpLimit)"
    )


# --- stories: 15 s ticks, the HPA's 300 s downscale stabilization --------------------------------------------


@dataclass
class Worker:
    """A queue worker decided every 15 s; its pods follow each decision, all ready."""

    extra: ExtraMetrics
    replicas: int
    now: datetime = NOW
    state: BehaviorState = field(default_factory=lambda: BehaviorState(recommendations=()))
    conditions: tuple[Condition, ...] = ()
    last_scale_time: datetime | None = None
    min_replicas: int = 1
    settings: Settings = field(default_factory=Settings)
    scale_to_zero: ScaleToZero | None = None

    def tick(self, *inputs: MetricInput) -> Decision:
        decision = decide(
            spec=replace(spec(self.extra, min_replicas=self.min_replicas), scale_to_zero=self.scale_to_zero),
            scale=Scale(self.replicas, self.replicas, SELECTOR),
            pods=pods(self.replicas),
            metrics=[],
            state=self.state,
            settings=self.settings,
            now=self.now,
            conditions=self.conditions,
            last_scale_time=self.last_scale_time,
            inputs=inputs,
        )
        assert decision.desired_replicas is not None
        self.replicas = decision.desired_replicas
        self.state, self.conditions = decision.state, decision.conditions
        self.last_scale_time = decision.status.last_scale_time
        self.now += timedelta(seconds=15)
        return decision


def test_story_a_burst_is_drained_then_the_worker_shrinks_after_the_window() -> None:
    worker = Worker(DRAIN, replicas=1)
    assert worker.tick(value(0), value(0)).desired_replicas == 1  # idle, at the minimum
    # A burst of 6000 items; one pod processes 5/s: 6000 / (5 x 60) = 20, capped by the legacy scale-up limit.
    assert worker.tick(value(6000), value(5)).desired_replicas == 4
    assert worker.tick(value(5800), value(20)).desired_replicas == 8
    assert worker.tick(value(5000), value(40)).desired_replicas == 16
    # 4000 / (5 x 60) = 14, below the count: the legacy window keeps its largest recent recommendation (20).
    assert worker.tick(value(4000), value(80)).desired_replicas == 20
    # The queue drains; the proposal falls to 0 but the 300 s downscale window keeps the recent maximum.
    for _ in range(4):
        worker.tick(value(1000), value(80))
    drained_at = worker.now
    while worker.now < drained_at + timedelta(seconds=300):
        assert worker.tick(value(0), value(0)).desired_replicas > 1
    assert worker.tick(value(0), value(0)).desired_replicas == 1


def test_story_a_five_minute_prometheus_outage_never_scales_down() -> None:
    worker = Worker(DRAIN, replicas=1)
    for _ in range(3):
        worker.tick(value(3000), value(5))
    busy = worker.replicas
    assert busy > 1
    outage_end = worker.now + timedelta(minutes=5)
    while worker.now < outage_end:
        decision = worker.tick(FAILED, FAILED)
        assert (decision.desired_replicas, decision.rescale) == (busy, False)
        assert decision.summary.startswith("hold: no metric could be computed")
    # The rate alone still failing, with a backlog: the throughput is unknown, the count is held.
    decision = worker.tick(value(3000), FAILED)
    assert decision.desired_replicas == busy and "throughput per replica unknown" in decision.summary
    # Prometheus is back: the drain time decides again.
    assert worker.tick(value(30), value(5 * busy)).metric_proposal == 1


def test_story_scale_to_zero_reads_the_drain_time_as_activity_never_an_outage_as_idleness() -> None:
    """With scaleToZero and only a drain time, the backlog is the activity: a backlog keeps the worker up, a
    failed backlog is no proof of idleness, and only a whole cooldown of empty queue brings it to zero."""
    worker = Worker(DRAIN, replicas=2, min_replicas=0, scale_to_zero=ScaleToZero(cooldown_seconds=300))
    for _ in range(20):  # 300 s of backlog: never idle
        decision = worker.tick(value(600), value(10))
        assert "active: drain time proposes" in decision.summary and worker.replicas >= 1
    for _ in range(10):  # the backlog cannot be read for 150 s: the idle stretch never starts
        decision = worker.tick(FAILED, value(10))
        assert "not idle: unreadable drain time" in decision.summary and worker.replicas >= 1
    ticks = 0
    while worker.replicas > 0:  # an empty queue: zero only after the whole cooldown
        decision = worker.tick(value(0), value(0))
        ticks += 1
        assert ticks <= 40, decision.summary
    assert ticks * 15 > 300 and "scaled to zero" in decision.rescale_reason
    woken = worker.tick(value(50), ExternalReading((), worker.now))  # work again: back to one
    assert woken.desired_replicas == 1 and worker.replicas == 1


def test_story_from_zero_to_one_when_work_arrives_then_to_the_drain_count() -> None:
    worker = Worker(DRAIN, replicas=0, min_replicas=0, settings=GATE, conditions=SCALED_TO_ZERO)
    assert worker.tick(value(0), value(0)).desired_replicas == 0  # no work, stay at zero
    first = worker.tick(value(900), ExternalReading((), NOW))  # work arrives; no pod has processed anything yet
    assert first.desired_replicas == 1 and "at least 1 while there is a backlog" in first.summary
    # One pod processes 2/s: 880 / (2 x 60) = 8, within the legacy scale-up limit of 4 at a time.
    assert worker.tick(value(880), value(2)).desired_replicas == 4
    # 800 / (2 x 60) = 6.67 -> 7; the legacy window keeps the previous recommendation of 8.
    decision = worker.tick(value(800), value(8))
    assert (decision.metric_proposal, decision.desired_replicas) == (7, 8)
