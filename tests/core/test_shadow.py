"""Shadow mode's comparison (core/shadow.py): this decision beside the count of the autoscaler it would replace."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from autoscaler.core.decision import decide, dry_run
from autoscaler.core.shadow import ShadowComparison, ShadowReading, compare
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    ExternalReading,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Scale,
    Settings,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
HPA = "HorizontalPodAutoscaler worker"
QUEUE = MetricSpec(
    MetricSourceType.EXTERNAL, MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=1000), metric_name="q"
)
SPEC = AutoscalerSpec(max_replicas=20, min_replicas=1, metrics=(QUEUE,))


@pytest.mark.parametrize(
    ("ours", "reading", "expected"),
    [
        pytest.param(5, ShadowReading(HPA, NOW, 5), ShadowComparison(HPA, NOW, 5, 5, 0), id="agree"),
        pytest.param(7, ShadowReading(HPA, NOW, 4), ShadowComparison(HPA, NOW, 7, 4, 3), id="we want more"),
        pytest.param(2, ShadowReading(HPA, NOW, 4), ShadowComparison(HPA, NOW, 2, 4, -2), id="we want fewer"),
        pytest.param(
            3,
            ShadowReading(HPA, NOW, error="not found"),
            ShadowComparison(HPA, NOW, 3, None, None, "not found"),
            id="theirs unknown: no difference",
        ),
        pytest.param(None, ShadowReading(HPA, NOW, 4), ShadowComparison(HPA, NOW, None, 4, None), id="ours unknown"),
    ],
)
def test_compare(ours: int | None, reading: ShadowReading, expected: ShadowComparison) -> None:
    assert compare(ours, reading) == expected


def test_decide_carries_the_comparison_and_decides_as_without_it() -> None:
    """The comparison is beside the decision, never part of it: the same decision with or without it."""
    inputs = dict(
        spec=SPEC,
        scale=Scale(2, 2, "app=worker"),
        pods=(),
        metrics=(ExternalReading(values=(6000,), timestamp=NOW),),
        state=BehaviorState(recommendations=()),
        settings=Settings(),
        now=NOW,
    )
    plain = decide(**inputs)  # type: ignore[arg-type]
    shadowed = decide(**inputs, shadow=ShadowReading(HPA, NOW, 3))  # type: ignore[arg-type]
    assert plain.shadow is None
    assert shadowed.shadow == ShadowComparison(HPA, NOW, 4, 3, 1)
    assert shadowed == plain.__class__(**{**{f: getattr(plain, f) for f in plain.__slots__}, "shadow": shadowed.shadow})
    # Shadow mode runs as dry-run: the rescale is reported, and the comparison kept.
    dry = dry_run(shadowed, state=BehaviorState(recommendations=()), conditions=(), last_scale_time=None)
    assert dry.shadow == shadowed.shadow and [e.reason for e in dry.events] == ["DryRunRescale"]
