"""Rollout-aware counting (`spec.rolloutAware`, an extension): surge pods of a rollout do not inflate the count.

The failure it prevents (kubernetes/kubernetes#72775 and its duplicates #84142, #90461, #98914): while a
Deployment rolls out with maxSurge, its selector matches the pods of the old and the new ReplicaSet, up to
`spec.replicas + maxSurge` of them. Two places of the HPA's calculator then count the surge pods as capacity:

- an Object or External AverageValue target within tolerance proposes `status.replicas`
  (GetObjectPerPodMetricReplicas, GetExternalPerPodMetricReplicas), which counts every pod of every
  ReplicaSet. The HPA writes `spec.replicas + surge` and its downscale stabilization window keeps it ("sustained
  well after the rollout is done until the HPA cooldown elapses", #72775). Before kubernetes/kubernetes#79035
  every path started from status.replicas and the writes compounded into the 383 -> 479 -> 589 -> 664
  staircase reported there;
- every proposal of the form ceil(usage ratio x ready pods) (the direct path of GetResourceReplicas /
  calcPlainMetricReplicas, and getUsageRatioReplicaCount for Value targets) multiplies by a count that
  includes the surge pods: at a ratio of 0.85 (below target) 100 + 25 ready pods propose ceil(0.85 x 125) =
  107, a scale-up of a Deployment whose pods are all below their target. (The rebalanced path fills the
  surge pods that are not ready with 0 and is not inflated.)

The rule, applied only while the target has more live pods (not deleted, not Failed or Succeeded) than its
spec.replicas, the surplus being the surge:

1. `status.replicas` is read as at most spec.replicas: an AverageValue target judges its tolerance against
   spec.replicas pods and, within it, proposes spec.replicas (not spec.replicas + surge);
2. an Object or External Value target multiplies its usage ratio by at most spec.replicas ready pods: the
   ratio does not depend on the pods, so the surge pods would only scale the answer up;
3. a metric whose usage ratio is below 1 (below its target) never proposes more than spec.replicas. Per-pod
   metrics (Resource, ContainerResource, Pods) otherwise keep the HPA's count, ready surge pods included:
   their average falls as the surge pods take a share of the load, so ratio x ready pods is still the load
   over the target, and capping it would scale down in the middle of every rollout.

Pure: the inputs are the pods and the scale that the decision snapshot already carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from autoscaler.core.gomath import saturated_ceil_int32
from autoscaler.core.metric import MetricResult
from autoscaler.core.types import MetricSourceType, MetricTargetType, Pod, PodPhase


@dataclass(frozen=True, slots=True)
class RolloutCount:
    """The target's live pods against its spec.replicas; a surplus means a rollout's surge pods are running."""

    spec_replicas: int
    live_pods: int

    @property
    def surplus(self) -> int:
        return max(self.live_pods - self.spec_replicas, 0)

    def describe(self) -> str:
        return (
            f"rollout-aware: {self.live_pods} live pods for spec.replicas {self.spec_replicas} ({self.surplus} surge)"
        )


def rollout_count(pods: Sequence[Pod], spec_replicas: int) -> RolloutCount:
    """The live pods (not deleted, not Failed or Succeeded, as IsPodActive) of the target."""
    live = sum(1 for p in pods if not p.deleted and p.phase not in (PodPhase.FAILED, PodPhase.SUCCEEDED))
    return RolloutCount(spec_replicas=spec_replicas, live_pods=live)


def status_replicas(count: RolloutCount, status_replicas: int) -> int:
    """Rule 1: status.replicas as the AverageValue paths read it, at most spec.replicas during a surge."""
    return min(status_replicas, count.spec_replicas) if count.surplus else status_replicas


def adjusted(result: MetricResult, count: RolloutCount) -> MetricResult:
    """Rules 2 and 3 on one metric's proposal; unchanged without a surge, on an error or from zero replicas."""
    calc = result.calculation
    if not count.surplus or result.proposed_replicas is None or calc is None or count.spec_replicas == 0:
        return result
    spec = count.spec_replicas
    proposed = result.proposed_replicas
    ratio = calc.usage_ratio
    notes = []
    value_target = result.spec.type in (MetricSourceType.OBJECT, MetricSourceType.EXTERNAL) and (
        result.spec.target.type == MetricTargetType.VALUE
    )
    if value_target and calc.ready_pod_count is not None and ratio is not None and ratio >= 0:
        capped = saturated_ceil_int32(ratio * spec)
        if capped < proposed:
            notes.append(f"ready pods counted as {spec}: ceil({ratio:g} * {spec}) = {capped}")
            proposed = capped
    if ratio is not None and ratio < 1.0 and proposed > spec:
        notes.append(f"usage ratio {ratio:g} is below target: no more than spec.replicas {spec}")
        proposed = spec
    if proposed == result.proposed_replicas:
        return result
    note = f"{calc.note}; rollout-aware ({count.surplus} surge pods): " + "; ".join(notes)
    return replace(result, proposed_replicas=proposed, calculation=replace(calc, replicas=proposed, note=note))
