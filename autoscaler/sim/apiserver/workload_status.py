"""The status a workload controller writes, from the count of its pods and of its ready pods.

Fields follow the apps/v1 types: zero counts are omitted where the API marks them omitempty (Deployment),
and kept where they are required (StatefulSet and ReplicaSet `replicas`). A Deployment gets the Available
and Progressing conditions `kubectl describe` shows; their transition times only move when they change.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from autoscaler.sim.apiserver.clock import timestamp

JSON = dict[str, Any]


def _nonzero(**counts: int) -> JSON:
    return {k: v for k, v in counts.items() if v}


def _condition(old: JSON, type_: str, ok: bool, reason: str, message: str, now: datetime) -> JSON:
    previous = next((c for c in old.get("conditions") or [] if c.get("type") == type_), None)
    status = "True" if ok else "False"
    if previous is None or previous.get("status") != status:
        since = updated = timestamp(now)
    else:
        since = previous["lastTransitionTime"]
        updated = previous["lastUpdateTime"] if previous.get("reason") == reason else timestamp(now)
    return {"type": type_, "status": status, "lastUpdateTime": updated, "lastTransitionTime": since,
            "reason": reason, "message": message}  # fmt: skip


def workload_status(
    plural: str,
    *,
    old: JSON,
    desired: int,
    replicas: int,
    updated: int,
    ready: int,
    generation: int,
    name: str,
    now: datetime,
) -> JSON:
    """`name` is the object the messages name: the Deployment's current ReplicaSet, or the workload."""
    if plural == "deployments":
        # maxUnavailable defaults to 25% of the desired count, rounded down (deployment defaults).
        available_enough = ready >= desired - desired // 4
        status = _nonzero(
            observedGeneration=generation,
            replicas=replicas,
            updatedReplicas=updated,
            readyReplicas=ready,
            availableReplicas=ready,
            unavailableReplicas=max(replicas - ready, 0),
        )
        status["conditions"] = [
            _condition(
                old,
                "Available",
                available_enough,
                "MinimumReplicasAvailable" if available_enough else "MinimumReplicasUnavailable",
                "Deployment has minimum availability."
                if available_enough
                else "Deployment does not have minimum availability.",
                now,
            ),
            _condition(
                old,
                "Progressing",
                True,
                "NewReplicaSetAvailable" if ready == desired == replicas == updated else "ReplicaSetUpdated",
                f'ReplicaSet "{name}" has successfully progressed.'
                if ready == desired == replicas == updated
                else f'ReplicaSet "{name}" is progressing.',
                now,
            ),
        ]
        return status
    if plural == "statefulsets":
        return {
            "replicas": replicas,
            "observedGeneration": generation,
            **_nonzero(
                readyReplicas=ready, currentReplicas=replicas, updatedReplicas=replicas, availableReplicas=ready
            ),
            "currentRevision": f"{name}-rev1",
            "updateRevision": f"{name}-rev1",
            "collisionCount": 0,
        }
    return {
        "replicas": replicas,
        "observedGeneration": generation,
        **_nonzero(fullyLabeledReplicas=replicas, readyReplicas=ready, availableReplicas=ready),
    }
