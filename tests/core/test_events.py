"""The HPA's event vocabulary has one owner (core/events.py), which the core and the Kubernetes layer share."""

from __future__ import annotations

import ast
from pathlib import Path

from autoscaler.core.events import METRIC_FAILURE_REASONS, EventReason, failed_rescale_message, rescale_message
from autoscaler.core.types import MetricSourceType

ROOT = Path(__file__).resolve().parents[2] / "autoscaler"


def test_the_hpa_s_messages() -> None:
    assert rescale_message(3, "All metrics below target") == "New size: 3; reason: All metrics below target"
    assert (
        failed_rescale_message(3, "All metrics below target", "409 Conflict")
        == "New size: 3; reason: All metrics below target; error: 409 Conflict"
    )


def test_every_metric_type_has_its_failure_reason() -> None:
    assert set(METRIC_FAILURE_REASONS) == set(MetricSourceType)
    assert METRIC_FAILURE_REASONS[MetricSourceType.EXTERNAL] == "FailedGetExternalMetric"
    assert METRIC_FAILURE_REASONS[MetricSourceType.CONTAINER_RESOURCE] == "FailedGetContainerResourceMetric"


def test_no_module_spells_an_event_reason_itself() -> None:
    """Events are emitted with `EventReason.X`, never with a reason spelled out: one vocabulary, no drift.

    (Condition reasons such as "FailedGetScale" share some names with events; they are not events.)
    """
    reasons = {str(r) for r in EventReason}
    emitters = {"event", "Event", "normal", "warning", "record"}
    offenders = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if name in emitters and any(isinstance(a, ast.Constant) and a.value in reasons for a in arguments):
                offenders.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    assert offenders == []
