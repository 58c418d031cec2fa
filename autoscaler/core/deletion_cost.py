"""Sparing busy pods on a scale-in (`spec.scaleDown.podDeletionCost`, an extension): which pods to annotate.

Before the daemon lowers a Deployment's or ReplicaSet's replicas it sets every pod's
`controller.kubernetes.io/pod-deletion-cost` to that pod's value of a per-pod metric (e.g. in-flight jobs), so
the ReplicaSet controller, which removes lower costs first among pods of equal phase and readiness
(ActivePodsWithRanks), removes the least busy pods. Every live pod gets a cost from its own value, rather than
only the pods about to go getting a low one: the controller picks its victims itself (a rollout, a second
scale-down, another ReplicaSet may change how many go and from where), and absolute values need no memory of
which pods were marked, so nothing goes stale between two scale-downs. Only pods whose annotation must change
are patched. Pure: the pods and the reading in, the patches out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from autoscaler.core.types import MetricFailure, MetricInput, MetricSpec, Pod, PodPhase, PodsReading

ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True, slots=True)
class PodDeletionCost:
    """`spec.scaleDown.podDeletionCost`: the per-pod metric (read as a Pods metric) that ranks pods for removal."""

    metric: MetricSpec


@dataclass(frozen=True, slots=True)
class CostPatch:
    """One pod's new cost; `previous` is its annotation's value (None: absent or not an int32)."""

    pod: str
    cost: int
    previous: int | None


@dataclass(frozen=True, slots=True)
class CostPlan:
    """The patches a scale-down needs first, and what was left alone and why."""

    patches: tuple[CostPatch, ...] = ()
    unchanged: int = 0
    # Live pods without a sample: their annotation is left as it is (no value is guessed for them).
    unsampled: tuple[str, ...] = ()
    # The metric failed as a whole: nothing is patched, and the scale-down goes ahead all the same.
    error: str = ""

    def describe(self) -> str:
        if self.error:
            return f"pod-deletion-cost not updated: {self.error}"
        text = f"pod-deletion-cost: {len(self.patches)} pods to update, {self.unchanged} unchanged"
        return text + (f", {len(self.unsampled)} without a sample" if self.unsampled else "")


def cost_of(value_milli: int) -> int:
    """A reading's value (milli-units) as a cost: the value in the metric's unit rounded down, within int32."""
    return max(INT32_MIN, min(INT32_MAX, value_milli // 1000))


def plan_deletion_costs(*, pods: Sequence[Pod], reading: MetricInput) -> CostPlan:
    """The cost of each live pod (not deleted, not Failed or Succeeded) from its sample, where it changes."""
    if isinstance(reading, MetricFailure):
        return CostPlan(error=reading.message)
    if not isinstance(reading, PodsReading):
        return CostPlan(error=f"a reading of type {type(reading).__name__} is not a per-pod metric")
    values = {item.pod: item.value for item in reading.items}
    patches: list[CostPatch] = []
    unsampled: list[str] = []
    unchanged = 0
    for pod in sorted(pods, key=lambda p: p.name):
        if pod.deleted or pod.phase in (PodPhase.FAILED, PodPhase.SUCCEEDED):
            continue
        if pod.name not in values:
            unsampled.append(pod.name)
            continue
        cost = cost_of(values[pod.name])
        if cost == pod.deletion_cost:
            unchanged += 1
        else:
            patches.append(CostPatch(pod.name, cost, pod.deletion_cost))
    return CostPlan(patches=tuple(patches), unchanged=unchanged, unsampled=tuple(unsampled))


def parse_cost(value: object) -> int | None:
    """An annotation's cost as the ReplicaSet controller reads it (GetDeletionCostFromPodAnnotations): an int32
    in decimal, without "+" or leading zeros; None otherwise."""
    if not isinstance(value, str) or not value:
        return None
    digits = value[1:] if value.startswith("-") else value
    if not digits.isascii() or not digits.isdigit() or (digits.startswith("0") and value != "0"):
        return None
    number = int(value)
    return number if INT32_MIN <= number <= INT32_MAX else None
