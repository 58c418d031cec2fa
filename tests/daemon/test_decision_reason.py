"""The closed-set reason of a decision (`autoscaler_target_decision_info`, the decision log line)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from autoscaler.core.decision import Decision, StatusUpdate
from autoscaler.core.types import BehaviorState, Condition, ConditionType
from autoscaler.daemon.observe import decision_reason

ABLE = Condition(ConditionType.ABLE_TO_SCALE, "True", "SucceededRescale", "")
ACTIVE = Condition(ConditionType.SCALING_ACTIVE, "True", "ValidMetricFound", "")
NOT_LIMITED = Condition(ConditionType.SCALING_LIMITED, "False", "DesiredWithinRange", "")
BASE = Decision(
    current_replicas=4, desired_replicas=2, rescale=True, min_replicas=1, max_replicas=10,
    conditions=(), events=(), status=StatusUpdate(4, 2, None, None), state=BehaviorState(), summary="",
)  # fmt: skip


@pytest.mark.parametrize(
    ("conditions", "reason"),
    [
        pytest.param((ABLE, ACTIVE, NOT_LIMITED), "SucceededRescale", id="a plain rescale"),
        pytest.param((ABLE, replace(ACTIVE, status="False", reason="FailedGetPodsMetric"), NOT_LIMITED),
                     "FailedGetPodsMetric", id="ScalingActive False: its reason"),
        pytest.param((ABLE, ACTIVE, NOT_LIMITED,
                      Condition(ConditionType.FALLBACK_ACTIVE, "False", "MetricsReadable", "")),
                     "SucceededRescale", id="a fallback not in force is no reason"),
        pytest.param((ABLE, ACTIVE, NOT_LIMITED,
                      Condition(ConditionType.FALLBACK_ACTIVE, "True", "FallbackScaleUpOnly", "")),
                     "FallbackScaleUpOnly", id="a fallback in force is the reason"),
        pytest.param((ABLE, ACTIVE, Condition(ConditionType.SCALING_LIMITED, "True", "TooManyReplicas", ""),
                      Condition(ConditionType.SCALED_TO_ZERO, "False", "NotScaledToZero", "")),
                     "TooManyReplicas", id="not scaled to zero is no reason; the limit is"),
    ],
)  # fmt: skip
def test_the_reason_names_what_happened(conditions: tuple[Condition, ...], reason: str) -> None:
    assert decision_reason(replace(BASE, conditions=conditions)) == reason
