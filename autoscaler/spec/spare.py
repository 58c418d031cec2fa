"""The spec's scale-in extensions (docs/spec.md, "Sparing busy pods" and "Rollout-aware counting").

`spec.scaleDown.podDeletionCost` names a per-pod metric (a Pods metric's `metric` with its own `prometheus`
binding) whose value becomes each pod's `controller.kubernetes.io/pod-deletion-cost` before the daemon lowers a
Deployment's or ReplicaSet's replicas, so the ReplicaSet controller removes the least busy pods first.
`spec.rolloutAware` is a plain boolean on the spec (autoscaler/spec/hpa.py). Both are off by default: the
HPA's path is unchanged. Parsing only; the core's values are `core.deletion_cost.PodDeletionCost` and
`core.types.AutoscalerSpec.rollout_aware`.
"""

from __future__ import annotations

from pydantic import Field

from autoscaler.core import types as core
from autoscaler.core.deletion_cost import PodDeletionCost
from autoscaler.spec.errors import Problem
from autoscaler.spec.hpa import AutoscalerSpec, MetricIdentifier, SpecModel, known, selector_to_core
from autoscaler.spec.prometheus import PrometheusBinding

# The kinds whose pods a ReplicaSet controller removes (pod-deletion-cost means nothing to a StatefulSet).
DELETION_COST_KINDS = ("Deployment", "ReplicaSet")
# A placeholder target: the per-pod values are read as a Pods metric's, and never compared with a target.
_NO_TARGET = core.MetricTarget(core.MetricTargetType.AVERAGE_VALUE, average_value=1)


class PodDeletionCostSpec(SpecModel):
    """Which per-pod metric ranks the pods for removal (lowest first)."""

    metric: MetricIdentifier = Field(
        description="The per-pod metric (e.g. in-flight jobs), read as a Pods metric: one value per pod."
    )
    prometheus: PrometheusBinding | None = Field(
        None, description="How the metric maps to PromQL, as a Pods metric's binding (docs/metrics.md)."
    )


class ScaleDown(SpecModel):
    """What the daemon does before it lowers the target's replicas."""

    pod_deletion_cost: PodDeletionCostSpec | None = Field(
        None,
        alias="podDeletionCost",
        description="Mark each pod with controller.kubernetes.io/pod-deletion-cost from a per-pod metric "
        "before a scale-down, so the least busy pods are removed first (Deployments and ReplicaSets).",
    )


def deletion_cost_problems(spec: AutoscalerSpec, *, path: str = "spec") -> list[Problem]:
    """podDeletionCost needs a target whose pods a ReplicaSet controller removes."""
    ref = spec.scale_target_ref
    if spec.scale_down is None or spec.scale_down.pod_deletion_cost is None or not known(ref) or not known(ref.kind):
        return []
    if ref.kind in DELETION_COST_KINDS:
        return []
    return [
        (
            f"{path}.scaleDown.podDeletionCost",
            f"needs a Deployment or ReplicaSet target (the ReplicaSet controller reads pod-deletion-cost), "
            f"not {ref.kind}",
        )
    ]


def deletion_cost_to_core(model: ScaleDown | None) -> PodDeletionCost | None:
    """The core's value of `spec.scaleDown.podDeletionCost`, or None when it is not set."""
    if model is None or model.pod_deletion_cost is None:
        return None
    identifier = model.pod_deletion_cost.metric
    return PodDeletionCost(
        metric=core.MetricSpec(
            core.MetricSourceType.PODS,
            _NO_TARGET,
            metric_name=identifier.name,
            metric_selector=selector_to_core(identifier.selector),
        )
    )


__all__ = [
    "DELETION_COST_KINDS",
    "PodDeletionCostSpec",
    "ScaleDown",
    "deletion_cost_problems",
    "deletion_cost_to_core",
]
