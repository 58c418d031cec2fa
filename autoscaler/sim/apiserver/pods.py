"""One pod as its controller and the kubelet see it: how it is born, what its status is at a given time, and
its rank when a scale-down picks which pods to delete.

`new_pod` builds a pod from a workload's template as its controller would; `pod_status` derives the whole
status (phase, conditions with their transition times, container states, IPs) from the pod's creation time
and the delays annotated on it, a pure function of the pod and `now`. `deletion_rank` is
controller.ActivePodsWithRanks' order (pkg/controller/controller_utils.go), on a single node.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from autoscaler.sim.apiserver.clock import parse_timestamp, timestamp
from autoscaler.sim.apiserver.store import clone
from autoscaler.sim.apiserver.strategy import (
    DELETION_COST_ANNOTATION,
    default_pod_spec,
    deletion_cost_value,
    qos_class,
    random_suffix,
)

JSON = dict[str, Any]

START_DELAY_ANNOTATION = "sim.autoscaler.dev/start-delay-seconds"
READY_DELAY_ANNOTATION = "sim.autoscaler.dev/ready-delay-seconds"
TERMINATION_ANNOTATION = "sim.autoscaler.dev/termination-grace-seconds"
NODE_NAME = "emulated-node"


def pod_status(pod: JSON, now: datetime, ip: str) -> JSON:
    """The status a pod born at creationTimestamp with its annotated delays has at `now`."""
    meta = pod["metadata"]
    notes = meta.get("annotations") or {}
    born = parse_timestamp(meta["creationTimestamp"])
    started = born + timedelta(seconds=float(notes.get(START_DELAY_ANNOTATION, 0)))
    ready_at = started + timedelta(seconds=float(notes.get(READY_DELAY_ANNOTATION, 0)))
    running, ready = now >= started, now >= ready_at
    names = [c.get("name", "") for c in pod["spec"].get("containers") or []]
    unready = "" if ready else f"containers with unready status: [{' '.join(names)}]"

    def condition(type_: str, ok: bool, since: datetime, reason: str = "") -> JSON:
        out: JSON = {"type": type_, "status": "True" if ok else "False", "lastProbeTime": None,
                     "lastTransitionTime": timestamp(since)}  # fmt: skip
        if not ok and reason:
            out["reason"], out["message"] = reason, unready
        return out

    containers = []
    for container in pod["spec"].get("containers") or []:
        state: JSON = (
            {"running": {"startedAt": timestamp(started)}} if running else {"waiting": {"reason": "ContainerCreating"}}
        )
        containers.append({
            "name": container.get("name", ""), "image": container.get("image", ""),
            "imageID": "", "ready": ready, "started": running, "restartCount": 0, "state": state,
        })  # fmt: skip
    status: JSON = {
        "phase": "Running" if running else "Pending",
        "conditions": [
            condition("PodReadyToStartContainers", running, started if running else born),
            condition("Initialized", True, born),
            condition("Ready", ready, ready_at if ready else born, "ContainersNotReady"),
            condition("ContainersReady", ready, ready_at if ready else born, "ContainersNotReady"),
            condition("PodScheduled", True, born),
        ],
        "hostIP": "10.0.0.1",
        "hostIPs": [{"ip": "10.0.0.1"}],
        "startTime": timestamp(born),
        "containerStatuses": containers,
        "qosClass": (pod.get("status") or {}).get("qosClass", "BestEffort"),
    }
    if running:
        status["podIP"], status["podIPs"] = ip, [{"ip": ip}]
    return status


def deletion_cost(pod: JSON) -> int:
    """The pod's `controller.kubernetes.io/pod-deletion-cost`: an int32, 0 when absent or unreadable
    (GetDeletionCostFromPodAnnotations' error is ignored by the ranking, which then compares 0)."""
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    return parse_deletion_cost(value) if value is not None else 0


def parse_deletion_cost(value: Any) -> int:
    """The cost an annotation value gives, or 0 when it is not one (see `strategy.deletion_cost_value`)."""
    number = deletion_cost_value(value)
    return 0 if number is None else number


def deletion_rank(pod: JSON) -> tuple[Any, ...]:
    """Sort key: pods that sort first are deleted first (ActivePodsWithRanks.Less).

    The keys, in order: unassigned before assigned; Pending < Unknown < Running; not ready before ready;
    lower pod-deletion-cost first; (pods doubled up on a node: one node here, so always equal); the most
    recently ready first (the LogarithmicScaleDown gate's log2 buckets are not modelled: exact times are
    compared, as with the gate off); more container restarts (the maximum over containers) first; newest
    first; then the name, for a stable order where upstream compares UIDs.
    """
    status = pod.get("status") or {}
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase", ""), 0)
    ready: JSON = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    is_ready = ready.get("status") == "True"
    ready_since = ready.get("lastTransitionTime", "") if is_ready else ""
    restarts = max((int(c.get("restartCount", 0)) for c in status.get("containerStatuses") or []), default=0)
    created = pod["metadata"].get("creationTimestamp", "")
    return (
        1 if (pod.get("spec") or {}).get("nodeName") else 0,
        phase_rank,
        1 if is_ready else 0,
        deletion_cost(pod),
        _Desc(ready_since),
        -restarts,
        _Desc(created),
        _Desc(pod["metadata"]["name"]),
    )


class _Desc:
    """Orders strings in reverse (newest timestamps first)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    __hash__ = None  # type: ignore[assignment]


def ordinal(name: str) -> int:
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def new_pod(
    workload: JSON, *, existing: list[JSON], start_seconds: float, ready_seconds: float, now: datetime, ip: str
) -> JSON:
    """A pod as a ReplicaSet or StatefulSet controller creates it, with its status at creation."""
    meta, spec = workload["metadata"], workload.get("spec") or {}
    template = clone(spec.get("template") or {})
    template_meta = template.get("metadata") or {}
    labels = dict(template_meta.get("labels") or {})
    name_prefix = f"{meta['name']}-"
    if workload.get("kind") == "StatefulSet":
        taken = {ordinal(p["metadata"]["name"]) for p in existing}
        index = next(i for i in range(len(existing) + 1) if i not in taken)
        name = f"{meta['name']}-{index}"
        labels["statefulset.kubernetes.io/pod-name"] = name
        labels["apps.kubernetes.io/pod-index"] = str(index)
    else:
        name = name_prefix + random_suffix()
    annotations = dict(template_meta.get("annotations") or {})
    annotations[START_DELAY_ANNOTATION] = str(start_seconds)
    annotations[READY_DELAY_ANNOTATION] = str(ready_seconds)
    pod_spec = template.get("spec") or {}
    default_pod_spec(pod_spec)
    pod_spec["nodeName"] = NODE_NAME
    pod: JSON = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "generateName": name_prefix, "namespace": meta["namespace"],
            "uid": str(uuid.uuid4()), "creationTimestamp": timestamp(now),
            "labels": labels, "annotations": annotations,
            "ownerReferences": [{
                "apiVersion": workload.get("apiVersion", "apps/v1"), "kind": workload.get("kind", ""),
                "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True,
            }],
        },
        "spec": pod_spec,
        "status": {"phase": "Pending"},
    }  # fmt: skip
    pod["status"] = pod_status(pod | {"status": {"qosClass": qos_class(pod_spec)}}, now, ip)
    return pod
