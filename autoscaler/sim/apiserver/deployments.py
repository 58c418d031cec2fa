"""The deployment controller's part of the model: a Deployment owns one ReplicaSet per pod template.

The ReplicaSet of the current template is named `<deployment>-<pod-template-hash>`, selects and labels its
pods with that hash and carries the `deployment.kubernetes.io/revision` annotation. With the RollingUpdate
strategy a template change steps the new ReplicaSet up and the old ones down within maxSurge and
maxUnavailable as pods become ready (the deployment controller's rolloutRolling: reconcileNewReplicaSet,
then reconcileOldReplicaSets with cleanupUnhealthyReplicas and scaleDownOldReplicaSetsForRollingUpdate);
with Recreate the old ones go to zero and the new one to the full count at once. These functions build the
objects and compute the counts; `lifecycle` writes them.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from autoscaler.sim.apiserver.clock import timestamp
from autoscaler.sim.apiserver.store import clone

JSON = dict[str, Any]

HASH_LABEL = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
# The alphabet of pod-template-hash values (rand.SafeEncodeString: no vowels, no look-alike digits).
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: Any) -> str:
    """A stable 10-character hash of a pod template, in the alphabet the real hashes use."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])


def revision(replica_set: JSON) -> int:
    annotations = replica_set["metadata"].get("annotations") or {}
    try:
        return int(annotations.get(REVISION_ANNOTATION, 0))
    except ValueError:
        return 0


def new_replica_set(deployment: JSON, pod_hash: str, *, replicas: int, number: int, now: datetime) -> JSON:
    """The ReplicaSet the deployment controller creates for the deployment's current template."""
    meta, spec = deployment["metadata"], deployment.get("spec") or {}
    template = clone(spec.get("template") or {})
    template_meta = template.setdefault("metadata", {})
    template_meta["labels"] = dict(template_meta.get("labels") or {}, **{HASH_LABEL: pod_hash})
    selector = clone(spec.get("selector") or {})
    selector["matchLabels"] = dict(selector.get("matchLabels") or {}, **{HASH_LABEL: pod_hash})
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k != "kubectl.kubernetes.io/last-applied-configuration"
    }
    annotations[REVISION_ANNOTATION] = str(number)
    annotations["deployment.kubernetes.io/desired-replicas"] = str(replicas)
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{meta['name']}-{pod_hash}",
            "namespace": meta["namespace"],
            "uid": str(uuid.uuid4()),
            "creationTimestamp": timestamp(now),
            "generation": 1,
            "labels": template_meta["labels"],
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": replicas,
            "minReadySeconds": spec.get("minReadySeconds", 0),
            "selector": selector,
            "template": template,
        },
        "status": {"replicas": 0},
    }


def scaled_message(name: str, old: int, new: int) -> str:
    """The deployment controller's ScalingReplicaSet event message."""
    direction = "up" if new > old else "down"
    return f"Scaled {direction} replica set {name} to {new} from {old}"


# --------------------------------------------------------------------------------------------------------
# The rolling update (pkg/controller/deployment/rolling.go and util/deployment_util.go)
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplicaSetView:
    """What the rolling update reads of one ReplicaSet: its spec.replicas and its available (ready) pods."""

    name: str
    replicas: int
    available: int


def scaled_value(value: Any, total: int, *, round_up: bool, default: str = "25%") -> int:
    """GetScaledValueFromIntOrPercent: an int as is, "N%" of `total` rounded up or down; else the default."""
    if isinstance(value, int) and not isinstance(value, bool):
        return max(value, 0)
    match = re.fullmatch(r"([0-9]+)%", str(value)) or re.fullmatch(r"([0-9]+)%", default)
    assert match is not None, default
    exact = int(match.group(1)) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def rolling_bounds(deployment: JSON) -> tuple[int, int] | None:
    """ResolveFenceposts: (maxSurge, maxUnavailable) in pods; None for the Recreate strategy."""
    spec = deployment.get("spec") or {}
    strategy = spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return None
    rolling = strategy.get("rollingUpdate") or {}
    desired = int(spec.get("replicas", 1))
    surge = scaled_value(rolling.get("maxSurge", "25%"), desired, round_up=True)
    unavailable = scaled_value(rolling.get("maxUnavailable", "25%"), desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # both zero would stall the rollout: the controller allows one unavailable pod
    return surge, unavailable


def new_replica_set_replicas(*, desired: int, max_surge: int, new: ReplicaSetView, old: list[ReplicaSetView]) -> int:
    """reconcileNewReplicaSet with NewRSNewReplicas: up within desired + maxSurge pods in all sets."""
    if new.replicas >= desired:
        return desired
    total = new.replicas + sum(r.replicas for r in old)
    room = desired + max_surge - total
    if room <= 0:
        return new.replicas
    return new.replicas + min(room, desired - new.replicas)


def old_replica_set_replicas(
    *, desired: int, max_unavailable: int, new: ReplicaSetView, old: list[ReplicaSetView]
) -> dict[str, int]:
    """reconcileOldReplicaSets: the old sets' new counts (oldest first in `old`), keeping at least
    desired - maxUnavailable pods available; unhealthy old pods go first (cleanupUnhealthyReplicas)."""
    counts = {r.name: r.replicas for r in old}
    if sum(counts.values()) == 0:
        return counts
    all_pods = new.replicas + sum(counts.values())
    min_available = desired - max_unavailable
    new_unavailable = new.replicas - new.available
    max_scaled_down = all_pods - min_available - new_unavailable
    if max_scaled_down <= 0:
        return counts
    cleaned = 0
    for rs in old:
        if cleaned >= max_scaled_down:
            break
        unhealthy = counts[rs.name] - rs.available
        if counts[rs.name] == 0 or unhealthy <= 0:
            continue
        step = min(max_scaled_down - cleaned, unhealthy)
        counts[rs.name] -= step
        cleaned += step
    available = new.available + sum(min(rs.available, counts[rs.name]) for rs in old)
    if available <= min_available:
        return counts
    to_remove, removed = available - min_available, 0
    for rs in old:
        if removed >= to_remove:
            break
        if counts[rs.name] == 0:
            continue
        step = min(counts[rs.name], to_remove - removed)
        counts[rs.name] -= step
        removed += step
    return counts
