"""Decisions as JSON (the output of `autoscaler replay`, documented field by field in docs/snapshot.md).

The behaviour state is written in the snapshot's own input format, so a decision's `behaviorState` can be
fed to the next snapshot; metric statuses are written in the autoscaling/v2 MetricStatus shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from autoscaler.core.behavior import Limits, Stabilization
from autoscaler.core.decision import Decision
from autoscaler.core.formats import format_milli, format_time
from autoscaler.core.metric import MetricResult, MetricStatus
from autoscaler.core.queue import ExtraResult
from autoscaler.core.shadow import ShadowComparison
from autoscaler.core.state import behavior_state_to_json
from autoscaler.core.types import LabelSelector, MetricSourceType, MetricSpec, ObjectReference, Recommendation

FORMAT_VERSION = "autoscaler.dev/decision/v1"


def _time(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None


def _float(value: float | None) -> float | str | None:
    if value is None:
        return None
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return value


def _selector(selector: LabelSelector | None) -> dict[str, Any] | None:
    if selector is None:
        return None
    out: dict[str, Any] = {}
    if selector.match_labels:
        out["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        out["matchExpressions"] = [
            {"key": r.key, "operator": r.operator, "values": list(r.values)} for r in selector.match_expressions
        ]
    return out


def _identifier(spec: MetricSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec.metric_name}
    if spec.metric_selector is not None:
        out["selector"] = _selector(spec.metric_selector)
    return out


def _current(status: MetricStatus) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if status.value is not None:
        out["value"] = format_milli(status.value)
    if status.average_value is not None:
        out["averageValue"] = format_milli(status.average_value)
    if status.average_utilization is not None:
        out["averageUtilization"] = status.average_utilization
    return out


def metric_status(status: MetricStatus | None) -> dict[str, Any]:
    """An autoscaling/v2 MetricStatus; a metric that failed is `{"type": ""}`, as the HPA leaves it."""
    if status is None:
        return {"type": ""}
    spec, current = status.spec, _current(status)
    match spec.type:
        case MetricSourceType.RESOURCE:
            return {"type": "Resource", "resource": {"name": spec.resource_name, "current": current}}
        case MetricSourceType.CONTAINER_RESOURCE:
            return {
                "type": "ContainerResource",
                "containerResource": {"name": spec.resource_name, "container": spec.container, "current": current},
            }
        case MetricSourceType.PODS:
            return {"type": "Pods", "pods": {"metric": _identifier(spec), "current": current}}
        case MetricSourceType.OBJECT:
            ref = spec.described_object
            described = {"kind": ref.kind, "name": ref.name, "apiVersion": ref.api_version} if ref else {}
            return {
                "type": "Object",
                "object": {"describedObject": described, "metric": _identifier(spec), "current": current},
            }
    return {"type": "External", "external": {"metric": _identifier(spec), "current": current}}


def _milli_current(status: MetricStatus | None) -> dict[str, Any] | None:
    if status is None:
        return None
    out = _current(status)
    if status.value is not None:
        out["valueMilli"] = status.value
    if status.average_value is not None:
        out["averageValueMilli"] = status.average_value
    return out


def metric_result(result: MetricResult) -> dict[str, Any]:
    calc = result.calculation
    pods = result.pods
    return {
        "index": result.index,
        "type": str(result.spec.type),
        "name": result.name,
        "proposedReplicas": result.proposed_replicas,
        "error": result.error,
        "errorReason": result.error_reason or None,
        "current": _milli_current(result.status),
        "usageRatio": _float(calc.usage_ratio) if calc else None,
        "rebalancedUsageRatio": _float(calc.rebalanced_usage_ratio) if calc else None,
        "withinTolerance": calc.within_tolerance if calc else None,
        "tolerance": {"scaleDown": result.tolerances.scale_down, "scaleUp": result.tolerances.scale_up},
        "readyPodCount": calc.ready_pod_count if calc else None,
        "pods": (
            {
                "ready": list(pods.ready),
                "unready": list(pods.unready),
                "missing": list(pods.missing),
                "ignored": list(pods.ignored),
            }
            if pods
            else None
        ),
        "explanation": calc.note if calc else None,
    }


def _recommendations(items: tuple[Recommendation, ...]) -> list[dict[str, Any]]:
    return [{"replicas": r.replicas, "timestamp": _time(r.timestamp)} for r in items]


def _stabilization(stab: Stabilization | None) -> dict[str, Any] | None:
    if stab is None:
        return None
    return {
        "proposal": stab.proposal,
        "stabilized": stab.stabilized,
        "scaleUpWindowSeconds": stab.scale_up_window_seconds,
        "scaleDownWindowSeconds": stab.scale_down_window_seconds,
        "scaleUpWindow": _recommendations(stab.scale_up_window),
        "scaleDownWindow": _recommendations(stab.scale_down_window),
        "reason": stab.reason,
        "message": stab.message,
    }


def _limits(limits: Limits | None) -> dict[str, Any] | None:
    if limits is None:
        return None
    return {
        "desired": limits.desired,
        "clipped": limits.clipped,
        "reason": limits.reason,
        "message": limits.message,
        "minAllowed": limits.min_allowed,
        "maxAllowed": limits.max_allowed,
        "selectPolicy": str(limits.select_policy) if limits.select_policy else None,
        "policies": [
            {
                "type": str(p.type),
                "value": p.value,
                "periodSeconds": p.period_seconds,
                "periodStartReplicas": p.period_start_replicas,
                "limit": p.limit,
            }
            for p in limits.policies
        ],
    }


def decision(
    result: Decision, *, now: datetime, name: str = "", namespace: str = "", source: str = ""
) -> dict[str, Any]:
    """The whole decision as a JSON-ready dict."""
    status = result.status
    limited = result.limits.reason if result.limits and result.limits.clipped else None
    out: dict[str, Any] = {
        "formatVersion": FORMAT_VERSION,
        "snapshot": source or None,
        "autoscaler": {"name": name, "namespace": namespace},
        "now": _time(now),
        "currentReplicas": result.current_replicas,
        "desiredReplicas": result.desired_replicas,
        "rescale": result.rescale,
        "rescaleReason": result.rescale_reason or None,
        "summary": result.summary,
        "error": result.error,
        "minReplicas": result.min_replicas,
        "maxReplicas": result.max_replicas,
        "metricProposal": result.metric_proposal,
        "proposingMetric": result.proposing_metric or None,
        "invalidMetrics": result.invalid_metrics,
        "limitedBy": limited,
        "metrics": [metric_result(m) for m in result.metrics],
        "stabilization": _stabilization(result.stabilization),
        "limits": _limits(result.limits),
        "conditions": [
            {
                "type": c.type,
                "status": c.status,
                "reason": c.reason,
                "message": c.message,
                "lastTransitionTime": _time(c.last_transition_time),
            }
            for c in result.conditions
        ],
        "events": [{"type": e.type, "reason": e.reason, "message": e.message} for e in result.events],
        "status": {
            "currentReplicas": status.current_replicas,
            "desiredReplicas": status.desired_replicas,
            "lastScaleTime": _time(status.last_scale_time),
            "currentMetrics": (
                [metric_status(s) for s in status.current_metrics] if status.current_metrics is not None else None
            ),
        },
        "behaviorState": behavior_state_to_json(result.state),
    } | _extras(result.extra_metrics)
    if result.shadow is not None:
        out["shadow"] = shadow_status(result.shadow)
    return out


def _extras(extras: tuple[ExtraResult, ...]) -> dict[str, Any]:
    """`extraMetrics`, the drain time's and the formula's proposals, when the spec has them (docs/snapshot.md)."""
    if not extras:
        return {}
    return {
        "extraMetrics": [
            {
                "kind": extra.kind,
                "name": extra.name,
                "proposedReplicas": extra.proposed_replicas,
                "error": extra.error,
                "inputs": {name: _float(value) for name, value in extra.values},
                "value": _float(extra.value),
                "usageRatio": _float(extra.calculation.usage_ratio) if extra.calculation else None,
                "withinTolerance": extra.calculation.within_tolerance if extra.calculation else None,
                "readyPodCount": extra.calculation.ready_pod_count if extra.calculation else None,
                "explanation": extra.explanation,
            }
            for extra in extras
        ]
    }


def shadow_status(comparison: ShadowComparison) -> dict[str, Any]:
    """Shadow mode's comparison as the status and replay show it: ours, theirs, the difference, when, from what."""
    out: dict[str, Any] = {
        "desiredReplicas": comparison.desired_replicas,
        "theirs": comparison.theirs,
        "difference": comparison.difference,
        "observedAt": _time(comparison.observed_at),
        "source": comparison.source,
    }
    if comparison.error:
        out["error"] = comparison.error
    return {key: value for key, value in out.items() if value is not None}


# The TARGETS column of `kubectl get hpa` shows this many metrics, then "+ N more...".
TARGETS_SHOWN = 2


def format_reference(ref: ObjectReference) -> str:
    """The REFERENCE column of `kubectl get hpa`: "Deployment/web"."""
    return f"{ref.kind}/{ref.name}"


def _target_text(spec: MetricSpec, status: MetricStatus | None) -> str:
    target = spec.target
    unknown = "<unknown>"
    if spec.type in (MetricSourceType.EXTERNAL, MetricSourceType.OBJECT):
        if target.average_value is not None:
            current = format_milli(status.average_value) if status and status.average_value is not None else unknown
            return f"{current}/{format_milli(target.average_value)} (avg)"
        current = format_milli(status.value) if status and status.value is not None else unknown
        return f"{current}/{format_milli(target.value or 0)}"
    if spec.type == MetricSourceType.PODS:
        current = format_milli(status.average_value) if status and status.average_value is not None else unknown
        return f"{current}/{format_milli(target.average_value or 0)}"
    # Resource and ContainerResource: named by the resource, a value or a utilization.
    if target.average_value is not None:
        current = format_milli(status.average_value) if status and status.average_value is not None else unknown
        return f"{spec.resource_name}: {current}/{format_milli(target.average_value)}"
    current = f"{status.average_utilization}%" if status and status.average_utilization is not None else unknown
    wanted = f"{target.average_utilization}%" if target.average_utilization is not None else "<auto>"
    return f"{spec.resource_name}: {current}/{wanted}"


def format_targets(metrics: Sequence[MetricSpec], statuses: Sequence[MetricStatus | None] | None) -> str:
    """The TARGETS column of `kubectl get hpa` (kubectl's formatHPAMetrics): "cpu: 45%/70%, 300m/500m".

    `statuses` are the status's currentMetrics by index (None, or a None entry, for a metric without a current
    value: "<unknown>"); after two metrics the rest is counted: "... + 1 more...". Quantities are written as
    the HPA writes current values (DecimalSI), targets too (kubectl keeps a target's own format, e.g. "1Gi").
    """
    if not metrics:
        return "<none>"
    shown = [
        _target_text(spec, statuses[i] if statuses is not None and i < len(statuses) else None)
        for i, spec in enumerate(metrics)
    ]
    text = ", ".join(shown[:TARGETS_SHOWN])
    if len(shown) > TARGETS_SHOWN:
        return f"{text} + {len(shown) - TARGETS_SHOWN} more..."
    return text
