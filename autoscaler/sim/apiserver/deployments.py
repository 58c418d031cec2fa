"""The deployment controller's part of the model: a Deployment owns one ReplicaSet per pod template.

The ReplicaSet of the current template is named `<deployment>-<pod-template-hash>`, selects and labels its
pods with that hash, carries the `deployment.kubernetes.io/revision` annotation and is scaled to the
Deployment's replicas; ReplicaSets of older templates are scaled to zero at once (a rollout without
surge or pacing). These functions build the objects; `lifecycle` writes them.
"""

from __future__ import annotations

import hashlib
import json
import uuid
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
