"""AmbiguousSelector: horizontal.go validateAndParseSelector + hpasControllingPodsUnderSelector.

Upstream (TestMultipleHPAs and the selector index): pods selected by more than one HPA's scale selector refuse
every one of those HPAs: ScalingActive False AmbiguousSelector, a Warning AmbiguousSelector Event and the
FailedComputeMetricsReplicas path, with "pods by selector <selector> are controlled by multiple HPAs: [<keys>]".
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from autoscaler.core.decision import controlling_autoscalers, decide
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    ExternalReading,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReference,
    Pod,
    Scale,
    Settings,
)

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def pod(name: str, **labels: str) -> Pod:
    return Pod(name=name, phase="Running", labels=labels, namespace="shop")


@pytest.mark.parametrize(
    ("pods", "selectors", "expected"),
    [
        pytest.param((pod("a", app="web"),), {"shop/web": "app=web"}, ("shop/web",), id="only-itself"),
        pytest.param(
            (pod("a", app="web"),),
            {"shop/web": "app=web", "shop/b": "app=web", "shop/c": "app=api"},
            ("shop/b", "shop/web"),
            id="two-select-the-same-pod-sorted",
        ),
        pytest.param(
            (pod("a", app="web", track="canary"),),
            {"shop/stable": "app=web", "shop/canary": "app=web,track=canary"},
            ("shop/canary", "shop/stable"),
            id="a-broader-selector-overlaps",
        ),
        pytest.param((), {"shop/web": "app=web", "shop/b": "app=web"}, (), id="no-pods-no-ambiguity"),
        pytest.param(
            (pod("a", app="web"),),
            {"shop/web": "app=web", "shop/new": ""},
            ("shop/web",),
            id="unregistered-selects-nothing",
        ),
        pytest.param(
            (pod("a", app="web"),),
            {"shop/web": "app=web", "shop/bad": "app=="},
            ("shop/web",),
            id="unparsable-selects-nothing",
        ),
    ],
)
def test_controlling_autoscalers(pods: tuple[Pod, ...], selectors: dict[str, str], expected: tuple[str, ...]) -> None:
    assert controlling_autoscalers(pods, selectors) == expected


SPEC = AutoscalerSpec(
    max_replicas=10,
    metrics=(MetricSpec(MetricSourceType.EXTERNAL, MetricTarget(MetricTargetType.VALUE, value=1000), metric_name="q"),),
    scale_target_ref=ObjectReference("Deployment", "web", "apps/v1"),
)


@pytest.mark.parametrize(
    ("controllers", "ambiguous"),
    [
        pytest.param((), False, id="none-registered"),
        pytest.param(("shop/web",), False, id="itself"),
        pytest.param(("shop/b", "shop/web"), True, id="two"),
    ],
)
def test_decide_refuses_an_ambiguous_selector(controllers: tuple[str, ...], ambiguous: bool) -> None:
    decision = decide(
        spec=SPEC,
        scale=Scale(2, 2, "app=web"),
        pods=(pod("a", app="web"),),
        metrics=(ExternalReading((8000,), NOW),),
        state=BehaviorState(),
        settings=Settings(),
        now=NOW,
        controllers=controllers,
    )
    active = next(c for c in decision.conditions if c.type == "ScalingActive")
    if not ambiguous:
        assert active.reason == "ValidMetricFound" and decision.metric_proposal is not None
        return
    message = "pods by selector app=web are controlled by multiple HPAs: [shop/b shop/web]"
    assert (active.status, active.reason, active.message) == ("False", "AmbiguousSelector", message)
    assert [(e.type, e.reason, e.message) for e in decision.events] == [
        ("Warning", "AmbiguousSelector", message),
        ("Warning", "FailedComputeMetricsReplicas", message),
    ]
    assert not decision.rescale and decision.desired_replicas == 2 and decision.status.current_metrics is None
    assert (
        decision.error
        == f"failed to compute desired number of replicas based on listed metrics for Deployment/web: {message}"
    )
