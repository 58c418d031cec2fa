"""A target at, or going to, 0 replicas: Kubernetes 1.36's HPAScaleToZero rules (kubernetes/kubernetes#135118).

Each case names the upstream function whose branch it pins down: shouldComputeMetricsForZeroReplicas (compute at
0, or stay disabled), hasObjectOrExternalMetrics and getScaledToZeroConditionStatus (which it reads), the
minReplicas correction after normalization, and the block that sets the ScaledToZero condition after a rescale.
Every case runs through `autoscaler replay`'s path, with the gate set as a controller setting in the snapshot
(`settings.featureGates.HPAScaleToZero`; 1.36's default is off) and the HPA's status conditions as input.
"""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.replay import replay_data
from tests.conformance.builders import (
    SCALED_TO_ZERO_TRUE,
    external_value_metric,
    generate_scaling_rules,
    horizontal_test_snapshot,
    object_value_metric,
)

ABLE, ACTIVE, LIMITED, ZERO = "AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero"
GATE_ON = {"HPAScaleToZero": True}
GATE_OFF = {"HPAScaleToZero": False}
NOT_SCALED_TO_ZERO = {
    "type": ZERO,
    "status": "False",
    "reason": "NotScaledToZero",
    "message": "the HPA controller did not scale the workload to zero",
}
QUEUE = external_value_metric("queue", 100_000, selector={})  # a Value target of 100 messages
QPS = object_value_metric("qps", 15_000)
ONE_CPU = 1000

VALID, IN_RANGE = (ACTIVE, "True", "ValidMetricFound"), (LIMITED, "False", "DesiredWithinRange")
DISABLED = ((ABLE, "True", "SucceededGetScale"), (ACTIVE, "False", "ScalingDisabled"))
RESCALED = ((ABLE, "True", "SucceededRescale"), VALID, IN_RANGE)
HELD = ((ABLE, "True", "ReadyForNewScale"), VALID, IN_RANGE)


def case(name: str, *, desired: int, conditions: tuple[tuple[str, str, str], ...], reason: str | None = None,
         api_rules: bool = True, **fields: Any) -> Any:  # fmt: skip
    """`reason` is the SuccessfulRescale event's reason text, when the case rescales. `api_rules=False` marks a
    spec the API server refuses (minReplicas 0 without an Object or External metric): the controller's rule
    for it is pinned as upstream's controller tests pin it, without the API server in front."""
    fields.setdefault("max_replicas", 6)
    fields.setdefault("status_replicas", fields["spec_replicas"])
    fields.setdefault("reported_cpu_requests", [ONE_CPU] * fields["spec_replicas"])
    return pytest.param(fields, desired, conditions, reason, api_rules, id=name)


AT_ZERO = [
    case("shouldComputeMetricsForZeroReplicas: gate off, a ScaledToZero condition is not read, and removed: disabled",
         desired=0, conditions=DISABLED,
         min_replicas=0, spec_replicas=0, metrics=[QUEUE], reported_levels=[300_000],
         feature_gates=GATE_OFF, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("shouldComputeMetricsForZeroReplicas: gate off (1.36's default), minReplicas 0: disabled",
         desired=0, conditions=DISABLED,
         min_replicas=0, spec_replicas=0, metrics=[QUEUE], reported_levels=[300_000]),
    case("shouldComputeMetricsForZeroReplicas: gate on, a zero the autoscaler did not set (no condition): disabled",
         desired=0, conditions=DISABLED,
         min_replicas=0, spec_replicas=0, metrics=[QUEUE], reported_levels=[300_000], feature_gates=GATE_ON),
    case("shouldComputeMetricsForZeroReplicas: gate on, ScaledToZero False: disabled",
         desired=0, conditions=((ZERO, "False", "NotScaledToZero"), *DISABLED),
         min_replicas=0, spec_replicas=0, metrics=[QUEUE], reported_levels=[300_000],
         feature_gates=GATE_ON, status_conditions=[NOT_SCALED_TO_ZERO]),
    case("hasObjectOrExternalMetrics: gate on, ScaledToZero True but only a Resource metric: disabled",
         desired=0, conditions=((ZERO, "True", "ScaledToZero"), *DISABLED), api_rules=False,
         min_replicas=0, spec_replicas=0, cpu_target=50, reported_levels=[],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("minReplicas raised while at zero, only a Resource metric: computed, and with no pod to read it held at 0",
         desired=0, conditions=((ZERO, "True", "ScaledToZero"), (ABLE, "True", "SucceededGetScale"),
                                (ACTIVE, "False", "FailedGetResourceMetric")),
         min_replicas=2, spec_replicas=0, cpu_target=50, reported_levels=[],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("canScaleFromZero: an External value of 300 against 100 scales 0 to 3; the condition turns False",
         desired=3, conditions=((ZERO, "False", "NotScaledToZero"), *RESCALED),
         reason="external metric queue({}) above target",
         min_replicas=0, spec_replicas=0, metrics=[QUEUE], reported_levels=[300_000],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("canScaleFromZero: an Object value of 20 against 15 scales 0 to 2",
         desired=2, conditions=((ZERO, "False", "NotScaledToZero"), *RESCALED),
         min_replicas=0, spec_replicas=0, metrics=[QPS], reported_levels=[20_000],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("canScaleFromZero: an empty queue stays at 0, the condition kept True",
         desired=0, conditions=((ZERO, "True", "ScaledToZero"), *HELD),
         min_replicas=0, spec_replicas=0, metrics=[QUEUE], reported_levels=[0],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("minReplicas raised while at zero: metrics are computed and the count never ends below the minimum",
         desired=3, conditions=((ZERO, "False", "NotScaledToZero"), (ABLE, "True", "SucceededRescale"),
                                (ACTIVE, "True", "ValidMetricFound"), (LIMITED, "True", "TooFewReplicas")),
         min_replicas=3, spec_replicas=0, metrics=[QUEUE], reported_levels=[100_000],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("minReplicas raised while at zero, behavior set: the correction after normalization gives the reason",
         desired=2, conditions=((ZERO, "False", "NotScaledToZero"), *RESCALED),
         reason="Current number of replicas below Spec.MinReplicas",
         min_replicas=2, spec_replicas=0, metrics=[QUEUE], reported_levels=[0],
         scale_up_rules=generate_scaling_rules(pods=4, pods_period=15),
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("a Percent-only scale-up policy cannot leave 0: the minimum (2) is applied after it",
         desired=2, conditions=((ZERO, "False", "NotScaledToZero"), (ABLE, "True", "SucceededRescale"),
                                (ACTIVE, "True", "ValidMetricFound"), (LIMITED, "True", "ScaleUpLimit")),
         reason="external metric queue({}) above target",
         min_replicas=2, spec_replicas=0, metrics=[QUEUE], reported_levels=[500_000],
         scale_up_rules=generate_scaling_rules(percent=100, percent_period=15),
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("a Percent-only scale-up policy cannot leave 0: with minReplicas 0 the target stays at 0",
         desired=0, conditions=((ZERO, "True", "ScaledToZero"), (ABLE, "True", "ReadyForNewScale"),
                                (ACTIVE, "True", "ValidMetricFound"), (LIMITED, "True", "ScaleUpLimit")),
         min_replicas=0, spec_replicas=0, metrics=[QUEUE], reported_levels=[500_000],
         scale_up_rules=generate_scaling_rules(percent=100, percent_period=15),
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
]  # fmt: skip

TO_ZERO_AND_OTHER_RESCALES = [
    case("ScaledToZero condition: 3 to 0 with minReplicas 0 and an External metric sets it True",
         desired=0, conditions=(*RESCALED, (ZERO, "True", "ScaledToZero")),
         reason="All metrics below target",
         min_replicas=0, spec_replicas=3, metrics=[QUEUE], reported_levels=[0], recommendations=(),
         feature_gates=GATE_ON),
    case("ScaledToZero condition: gate off, 3 to 0 writes no condition",
         desired=0, conditions=RESCALED,
         min_replicas=0, spec_replicas=3, metrics=[QUEUE], reported_levels=[0], recommendations=(),
         feature_gates=GATE_OFF),
    case("ScaledToZero condition: 3 to 0 on a Resource metric alone sets it False (not a zero to come back from)",
         desired=0, conditions=(*RESCALED, (ZERO, "False", "NotScaledToZero")), api_rules=False,
         min_replicas=0, spec_replicas=3, cpu_target=90, reported_levels=[0, 0, 0], recommendations=(),
         feature_gates=GATE_ON),
    case("ScaledToZero condition: an ordinary rescale 3 to 4 sets it False",
         desired=4, conditions=(*RESCALED, (ZERO, "False", "NotScaledToZero")),
         min_replicas=1, spec_replicas=3, metrics=[QUEUE], reported_levels=[133_000], feature_gates=GATE_ON),
    case("ScaledToZero condition: a stale True (the target was scaled up by hand) turns False on the next rescale",
         desired=4, conditions=((ZERO, "False", "NotScaledToZero"), *RESCALED),
         min_replicas=0, spec_replicas=3, metrics=[QUEUE], reported_levels=[133_000],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("ScaledToZero condition: without a rescale it is kept as it was",
         desired=3, conditions=((ZERO, "True", "ScaledToZero"), *HELD),
         min_replicas=0, spec_replicas=3, metrics=[QUEUE], reported_levels=[100_000],
         feature_gates=GATE_ON, status_conditions=[SCALED_TO_ZERO_TRUE]),
    case("ScaledToZero condition: without a rescale none is added",
         desired=3, conditions=HELD,
         min_replicas=1, spec_replicas=3, metrics=[QUEUE], reported_levels=[100_000], feature_gates=GATE_ON),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "desired", "conditions", "reason", "api_rules"), [*AT_ZERO, *TO_ZERO_AND_OTHER_RESCALES]
)
def test_zero_replica_rules(
    fields: dict[str, Any],
    desired: int,
    conditions: tuple[tuple[str, str, str], ...],
    reason: str | None,
    api_rules: bool,
) -> None:
    result = replay_data(horizontal_test_snapshot(**fields), api_rules=api_rules)
    assert (result["desiredReplicas"], result["rescale"]) == (desired, desired != fields["spec_replicas"])
    assert tuple((c["type"], c["status"], c["reason"]) for c in result["conditions"]) == conditions
    rescales = [e for e in result["events"] if e["reason"] == "SuccessfulRescale"]
    if desired == fields["spec_replicas"]:
        assert rescales == []
    else:
        assert len(rescales) == 1
        if reason is not None:
            assert rescales[0]["message"] == f"New size: {desired}; reason: {reason}"


def test_a_disabled_zero_explains_why() -> None:
    """The summary says which rule keeps a zero disabled, since the HPA's one message cannot."""
    at_zero: dict[str, Any] = {"min_replicas": 0, "max_replicas": 6, "spec_replicas": 0, "status_replicas": 0}
    off = replay_data(horizontal_test_snapshot(**at_zero, metrics=[QUEUE], reported_levels=[1]))
    assert "HPAScaleToZero gate is off" in off["summary"]
    manual = replay_data(
        horizontal_test_snapshot(**at_zero, metrics=[QUEUE], reported_levels=[1], feature_gates=GATE_ON)
    )
    assert "no ScaledToZero=True condition" in manual["summary"]
