"""Rollout-aware counting (core/rollout.py): surge pods of a rollout do not inflate the proposal.

Every case is decided twice, as the HPA (rolloutAware off) and rollout-aware, so the table shows both.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.decision import Decision, decide
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    ExternalReading,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReference,
    Pod,
    PodPhase,
    PodsReading,
    PodValue,
    Scale,
    Settings,
)
from autoscaler.replay import replay_data
from autoscaler.spec.hpa import to_core
from autoscaler.spec.render import decision as render
from autoscaler.spec.snapshot_out import snapshot_json
from autoscaler.spec.validation import load_spec

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
LONG_AGO = NOW - timedelta(hours=1)
PODS_METRIC = MetricSpec(
    MetricSourceType.PODS,
    MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=100_000),
    metric_name="memory_per_pod",
)
EXTERNAL_AVERAGE = MetricSpec(
    MetricSourceType.EXTERNAL,
    MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=10_000),
    metric_name="queue_depth",
)
EXTERNAL_VALUE = MetricSpec(
    MetricSourceType.EXTERNAL, MetricTarget(MetricTargetType.VALUE, value=300_000), metric_name="latency_ms"
)


def _pods(ready: int, *, pending: int = 0, deleted: int = 0) -> tuple[Pod, ...]:
    def pod(i: int, *, phase: PodPhase = PodPhase.RUNNING, ready: str = "True", gone: bool = False) -> Pod:
        return Pod(
            name=f"web-{i}",
            phase=phase,
            labels={"app": "web"},
            ready=ready,
            ready_transition=LONG_AGO,
            start_time=LONG_AGO,
            deleted=gone,
        )

    running = [pod(i) for i in range(ready)]
    waiting = [pod(ready + i, phase=PodPhase.PENDING, ready="False") for i in range(pending)]
    leaving = [pod(ready + pending + i, gone=True) for i in range(deleted)]
    return tuple(running + waiting + leaving)


def _per_pod(pods: tuple[Pod, ...], milli: int) -> PodsReading:
    return PodsReading(tuple(PodValue(p.name, milli, NOW) for p in pods if p.phase == PodPhase.RUNNING))


def _external(total_milli: int) -> ExternalReading:
    return ExternalReading((total_milli,), NOW)


CASES = [
    pytest.param(
        EXTERNAL_AVERAGE, 100, _pods(110), _external(1_000_000), 110, 100,
        id="#72775 staircase: AverageValue within tolerance proposes status.replicas 110 (100 + 10 surge)",
    ),
    pytest.param(
        EXTERNAL_AVERAGE, 100, _pods(110), _external(1_150_000), 110, 115,
        id="AverageValue judged against spec.replicas: 1150 / (10 x 100) is above tolerance, 115 pods of demand",
    ),
    pytest.param(
        PODS_METRIC, 1, _pods(2), 85_000, 2, 1,
        id="#72775 as reported: 1 replica, maxSurge 1, both pods below target, the HPA asks for 2",
    ),
    pytest.param(
        PODS_METRIC, 100, _pods(125), 85_000, 107, 100,
        id="25% surge at a ratio of 0.85: ceil(0.85 x 125) = 107 scales up below target",
    ),
    pytest.param(
        EXTERNAL_VALUE, 4, _pods(5), _external(600_000), 10, 8,
        id="a Value target counts at most spec.replicas ready pods: ceil(2 x 4), not ceil(2 x 5)",
    ),
    pytest.param(
        PODS_METRIC, 4, _pods(5), 150_000, 8, 8,
        id="a per-pod metric above target keeps the HPA's count, surge pods included (their load is real)",
    ),
    pytest.param(
        PODS_METRIC, 4, _pods(5), 50_000, 3, 3,
        id="load spread over the surge pods still scales down as the HPA does",
    ),
    pytest.param(
        PODS_METRIC, 4, _pods(4, pending=2), 85_000, 4, 4,
        id="pending surge pods: the ratio over the ready pods, no change",
    ),
    pytest.param(
        EXTERNAL_AVERAGE, 4, _pods(4, deleted=2), _external(60_000), 6, 6,
        id="terminating pods are no surplus: a scale-up to 6 is the HPA's",
    ),
    pytest.param(
        PODS_METRIC, 4, _pods(4), 85_000, 4, 4,
        id="no rollout: the HPA's ceil(0.85 x 4) = 4",
    ),
]  # fmt: skip


def _decide(
    metric: MetricSpec, spec_replicas: int, pods: tuple[Pod, ...], reading: int | MetricInput, aware: bool
) -> Decision:
    live = sum(1 for p in pods if not p.deleted)
    spec = AutoscalerSpec(
        max_replicas=1000,
        metrics=(metric,),
        scale_target_ref=ObjectReference("Deployment", "web", "apps/v1"),
        rollout_aware=aware,
    )
    value = _per_pod(pods, reading) if isinstance(reading, int) else reading
    return decide(
        spec=spec,
        scale=Scale(spec_replicas=spec_replicas, status_replicas=live, selector="app=web"),
        pods=pods,
        metrics=[value],
        state=BehaviorState(),
        settings=Settings(),
        now=NOW,
    )


@pytest.mark.parametrize(("metric", "spec_replicas", "pods", "reading", "hpa", "aware"), CASES)
def test_rollout_aware_proposal(
    metric: MetricSpec, spec_replicas: int, pods: tuple[Pod, ...], reading: int | MetricInput, hpa: int, aware: int
) -> None:
    assert _decide(metric, spec_replicas, pods, reading, False).metric_proposal == hpa
    assert _decide(metric, spec_replicas, pods, reading, True).metric_proposal == aware


def test_the_decision_explains_the_rollout_rule() -> None:
    decision = _decide(PODS_METRIC, 100, _pods(125), 85_000, True)
    assert decision.summary == (
        "stay at 100: metrics propose 100; rollout-aware: 125 live pods for spec.replicas 100 (25 surge)"
    )
    (result,) = decision.metrics
    assert result.calculation is not None
    assert result.calculation.note == (
        "ceil(0.85 * 125 ready pods) = 107; rollout-aware (25 surge pods): "
        "usage ratio 0.85 is below target: no more than spec.replicas 100"
    )


def test_the_surge_is_not_locked_in() -> None:
    """#72775: "the desired count is set to the number of pods with surge ... sustained well after the rollout
    is done until the HPA cooldown elapses": the HPA writes 100 + 10 and its downscale window keeps 110."""
    counts: dict[bool, list[int]] = {}
    for aware in (False, True):
        spec_replicas, state = 100, BehaviorState()
        counts[aware] = []
        for minute in range(4):
            live = spec_replicas + -(-spec_replicas // 10)  # maxSurge 10 %, rounded up, all ready
            spec = AutoscalerSpec(max_replicas=1000, metrics=(EXTERNAL_AVERAGE,), rollout_aware=aware)
            decision = decide(
                spec=spec,
                scale=Scale(spec_replicas, live, "app=web"),
                pods=_pods(live),
                metrics=[_external(1_000_000)],
                state=state,
                settings=Settings(),
                now=NOW + timedelta(minutes=minute),
            )
            assert decision.desired_replicas is not None
            spec_replicas, state = decision.desired_replicas, decision.state
            counts[aware].append(spec_replicas)
    assert counts == {False: [110, 110, 110, 110], True: [100, 100, 100, 100]}


def test_the_flag_off_leaves_the_hpa_path_byte_for_byte() -> None:
    pods = _pods(125)
    plain = _decide(PODS_METRIC, 100, pods, 85_000, False)
    spec_default = AutoscalerSpec(max_replicas=1000, metrics=(PODS_METRIC,), scale_target_ref=ObjectReference(
        "Deployment", "web", "apps/v1"))  # fmt: skip
    default = decide(
        spec=spec_default,
        scale=Scale(100, 125, "app=web"),
        pods=pods,
        metrics=[_per_pod(pods, 85_000)],
        state=BehaviorState(),
        settings=Settings(),
        now=NOW,
    )
    assert plain == default
    assert replace(spec_default, rollout_aware=False) == spec_default


def test_a_snapshot_of_a_rollout_replays_to_the_same_decision() -> None:
    """Everything the rule reads (the pods, the scale, the flag in the spec) is in the decision snapshot."""
    spec_data = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 200,
        "rolloutAware": True,
        "metrics": [{"type": "Pods", "pods": {"metric": {"name": "memory_per_pod"},
                                              "target": {"type": "AverageValue", "averageValue": "100"}}}],
    }  # fmt: skip
    model = load_spec(spec_data, scale_to_zero=False)
    pods = _pods(125)
    inputs = {
        "scale": Scale(100, 125, "app=web"),
        "pods": pods,
        "metrics": (_per_pod(pods, 85_000),),
        "state": BehaviorState(),
        "settings": Settings(),
        "now": NOW,
    }
    written = snapshot_json(name="web", namespace="shop", spec_model=model, **inputs)  # type: ignore[arg-type]
    assert written["autoscaler"]["spec"]["rolloutAware"] is True
    direct = decide(spec=to_core(model), **inputs)  # type: ignore[arg-type]
    assert direct.metric_proposal == 100
    assert replay_data(written) == render(direct, now=NOW, name="web", namespace="shop", source="")


@given(
    spec_replicas=st.integers(min_value=1, max_value=40),
    missing=st.integers(min_value=0, max_value=5),
    deleted=st.integers(min_value=0, max_value=5),
    per_pod=st.integers(min_value=0, max_value=400_000),
    total=st.integers(min_value=0, max_value=8_000_000),
    metric=st.sampled_from([PODS_METRIC, EXTERNAL_AVERAGE, EXTERNAL_VALUE]),
)
@settings(max_examples=200, deadline=None)
def test_without_a_surplus_the_rule_changes_nothing(
    spec_replicas: int, missing: int, deleted: int, per_pod: int, total: int, metric: MetricSpec
) -> None:
    """No more live pods than spec.replicas (fewer, or terminating ones): rolloutAware decides as the HPA."""
    pods = _pods(max(spec_replicas - missing, 1), deleted=deleted)
    reading: int | MetricInput = per_pod if metric is PODS_METRIC else _external(total)
    assert _decide(metric, spec_replicas, pods, reading, True) == _decide(metric, spec_replicas, pods, reading, False)


@given(
    spec_replicas=st.integers(min_value=1, max_value=40),
    surge=st.integers(min_value=1, max_value=10),
    per_pod=st.integers(min_value=0, max_value=99_999),
    total=st.integers(min_value=0, max_value=8_000_000),
    metric=st.sampled_from([PODS_METRIC, EXTERNAL_AVERAGE, EXTERNAL_VALUE]),
)
@settings(max_examples=200, deadline=None)
def test_during_a_surge_no_proposal_counts_the_surge_as_capacity(
    spec_replicas: int, surge: int, per_pod: int, total: int, metric: MetricSpec
) -> None:
    """Below target a metric proposes at most spec.replicas; a Value or AverageValue target proposes at most
    what spec.replicas pods (not spec.replicas + surge) would need."""
    pods = _pods(spec_replicas + surge)
    reading: int | MetricInput = per_pod if metric is PODS_METRIC else _external(total)
    decision = _decide(metric, spec_replicas, pods, reading, True)
    assert decision.metric_proposal is not None
    if metric is PODS_METRIC:  # below its 100 target
        assert decision.metric_proposal <= spec_replicas
    elif metric is EXTERNAL_AVERAGE:  # ceil(total / 10) outside the tolerance over spec.replicas, else spec.replicas
        ratio = total / (10_000 * spec_replicas)
        wanted = spec_replicas if 0.9 <= ratio <= 1.1 else math.ceil(total / 10_000)
        assert decision.metric_proposal == wanted
    else:  # ceil(total / 300 x spec.replicas) outside the tolerance, and never above spec.replicas below target
        ratio = total / 300_000
        wanted = spec_replicas if 0.9 <= ratio <= 1.1 else math.ceil(ratio * spec_replicas)  # float64, as Go
        assert decision.metric_proposal == (min(wanted, spec_replicas) if ratio < 1 else wanted)
