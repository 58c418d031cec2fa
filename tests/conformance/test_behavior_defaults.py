"""Behavior defaulting, transcribed from upstream pkg/apis/autoscaling/v2/defaults_test.go.

TestGenerateScaleUpRules / TestGenerateScaleDownRules: every field a direction sets replaces the default's
(copyHPAScalingRules), the rest keep GenerateHPAScaleUpRules' / GenerateHPAScaleDownRules' defaults. Our
counterpart is the spec loader's defaulting, `autoscaler.spec.hpa.to_core`; an unset scale-down window
stays None, which the controller later reads as its --horizontal-pod-autoscaler-downscale-stabilization.
"""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.types import ScalingPolicy, ScalingPolicyType, ScalingRules, SelectPolicy
from autoscaler.spec.hpa import AutoscalerSpec, to_core

PODS, PERCENT = ScalingPolicyType.PODS, ScalingPolicyType.PERCENT
MAX, MIN = SelectPolicy.MAX, SelectPolicy.MIN


def rules_json(
    pods: int = 0,
    pods_period: int = 0,
    percent: int = 0,
    percent_period: int = 0,
    window: int | None = None,
    select: str | None = None,
) -> dict[str, Any]:
    """The HPAScalingRules the Go test builds: a policy only when its value or period is set."""
    rules: dict[str, Any] = {}
    policies = []
    if pods or pods_period:
        policies.append({"type": "Pods", "value": pods, "periodSeconds": pods_period})
    if percent or percent_period:
        policies.append({"type": "Percent", "value": percent, "periodSeconds": percent_period})
    if policies:
        rules["policies"] = policies
    if window is not None:
        rules["stabilizationWindowSeconds"] = window
    if select is not None:
        rules["selectPolicy"] = select
    return rules


def generated(direction: str, rules: dict[str, Any]) -> ScalingRules:
    spec = AutoscalerSpec.model_validate(
        {
            "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "maxReplicas": 10,
            "behavior": {direction: rules},
        }
    )
    behavior = to_core(spec).behavior
    assert behavior is not None
    return behavior.scale_up if direction == "scaleUp" else behavior.scale_down


# fmt: off
SCALE_DOWN = [
    pytest.param(rules_json(), [(PERCENT, 100, 15)], None, MAX,
                 id="TestGenerateScaleDownRules: Default values"),
    pytest.param(rules_json(1, 2, 3, 4, window=25, select="Max"), [(PODS, 1, 2), (PERCENT, 3, 4)], 25, MAX,
                 id="TestGenerateScaleDownRules: All parameters are specified"),
    pytest.param(rules_json(percent=1, percent_period=2, select="Min"), [(PERCENT, 1, 2)], None, MIN,
                 id="TestGenerateScaleDownRules: Percent policy is specified"),
    pytest.param(rules_json(pods=3, pods_period=4), [(PODS, 3, 4)], None, MAX,
                 id="TestGenerateScaleDownRules: Pods policy is specified"),
]
# fmt: on


@pytest.mark.parametrize(("rules", "policies", "window", "select"), SCALE_DOWN)
def test_generate_scale_down_rules(
    rules: dict[str, Any], policies: list[tuple[ScalingPolicyType, int, int]], window: int | None, select: SelectPolicy
) -> None:
    down = generated("scaleDown", rules)
    assert down.policies == tuple(ScalingPolicy(*p) for p in policies)
    assert down.stabilization_window_seconds == window
    assert down.select_policy == select


# fmt: off
SCALE_UP = [
    pytest.param(rules_json(), [(PODS, 4, 15), (PERCENT, 100, 15)], 0, MAX,
                 id="TestGenerateScaleUpRules: Default values"),
    pytest.param(rules_json(1, 2, 3, 4, window=25, select="Max"), [(PODS, 1, 2), (PERCENT, 3, 4)], 25, MAX,
                 id="TestGenerateScaleUpRules: All parameters are specified"),
    pytest.param(rules_json(pods=1, pods_period=2, select="Min"), [(PODS, 1, 2)], 0, MIN,
                 id="TestGenerateScaleUpRules: Pod policy is specified"),
    pytest.param(rules_json(percent=7, percent_period=10), [(PERCENT, 7, 10)], 0, MAX,
                 id="TestGenerateScaleUpRules: Percent policy is specified"),
    pytest.param(rules_json(pods=4, pods_period=2, window=25), [(PODS, 4, 2)], 25, MAX,
                 id="TestGenerateScaleUpRules: Pod policy and stabilization window are specified"),
    pytest.param(rules_json(percent=7, percent_period=60, window=25), [(PERCENT, 7, 60)], 25, MAX,
                 id="TestGenerateScaleUpRules: Percent policy and stabilization window are specified"),
]
# fmt: on


@pytest.mark.parametrize(("rules", "policies", "window", "select"), SCALE_UP)
def test_generate_scale_up_rules(
    rules: dict[str, Any], policies: list[tuple[ScalingPolicyType, int, int]], window: int, select: SelectPolicy
) -> None:
    up = generated("scaleUp", rules)
    assert up.policies == tuple(ScalingPolicy(*p) for p in policies)
    assert up.stabilization_window_seconds == window
    assert up.select_policy == select


def test_a_direction_left_out_gets_all_defaults() -> None:
    """SetDefaults_HorizontalPodAutoscalerBehavior: a behavior with only scaleUp gets the default scaleDown."""
    spec = AutoscalerSpec.model_validate(
        {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 10, "behavior": {"scaleUp": {}}}
    )
    behavior = to_core(spec).behavior
    assert behavior is not None
    assert behavior.scale_down == ScalingRules((ScalingPolicy(PERCENT, 100, 15),), MAX, None)
