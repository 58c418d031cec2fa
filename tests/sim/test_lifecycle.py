"""The pod lifecycle model on a fake clock: Pending, Running, Ready; scale-down order; workload status."""

from __future__ import annotations

from typing import Any

from autoscaler.sim.apiserver import READY_DELAY_ANNOTATION, START_DELAY_ANNOTATION, EmulatedApiServer
from tests.sim.conftest import NS, workload

DELAYS = {START_DELAY_ANNOTATION: "5", READY_DELAY_ANNOTATION: "10"}


def _pods(server: EmulatedApiServer, app: str = "web") -> list[Any]:
    return server.list("v1", "Pod", namespace=NS, label_selector=f"app={app}")


def _condition(pod: Any, kind: str) -> Any:
    return next(c for c in pod["status"]["conditions"] if c["type"] == kind)


def test_pods_go_pending_running_ready_on_the_clock(server: EmulatedApiServer) -> None:
    server.create(workload("Deployment", "web", replicas=2, annotations=DELAYS))
    pods = _pods(server)
    assert [p["status"]["phase"] for p in pods] == ["Pending", "Pending"]
    assert _condition(pods[0], "PodScheduled")["status"] == "True"
    assert _condition(pods[0], "Ready")["status"] == "False"
    assert pods[0]["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}

    server.advance(5)
    pods = _pods(server)
    assert [p["status"]["phase"] for p in pods] == ["Running", "Running"]
    assert _condition(pods[0], "Ready")["status"] == "False"
    assert pods[0]["status"]["podIP"]

    server.advance(10)
    pod = _pods(server)[0]
    assert _condition(pod, "Ready") | {"lastProbeTime": None} == {
        "type": "Ready",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": "2026-01-01T00:00:15Z",
    }
    assert pod["status"]["startTime"] == "2026-01-01T00:00:00Z"
    assert pod["status"]["containerStatuses"][0]["state"] == {"running": {"startedAt": "2026-01-01T00:00:05Z"}}


def test_pods_copy_the_template(server: EmulatedApiServer) -> None:
    server.create(workload("StatefulSet", "web", replicas=1))
    (pod,) = _pods(server)
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "250m", "memory": "64Mi"}}
    assert pod["status"]["qosClass"] == "Burstable"
    assert pod["metadata"]["labels"]["app"] == "web"


def test_a_deployment_runs_its_pods_through_a_replica_set(server: EmulatedApiServer) -> None:
    created = server.create(workload("Deployment", "web", replicas=2))
    (replica_set,) = server.list("apps/v1", "ReplicaSet", namespace=NS)
    pod_hash = replica_set["metadata"]["labels"]["pod-template-hash"]
    assert replica_set["metadata"]["name"] == f"web-{pod_hash}"
    assert replica_set["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert replica_set["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert replica_set["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    pods = _pods(server)
    assert all(p["metadata"]["name"].startswith(f"web-{pod_hash}-") for p in pods)
    assert {p["metadata"]["ownerReferences"][0]["uid"] for p in pods} == {replica_set["metadata"]["uid"]}
    assert server.get("apps/v1", "Deployment", "web")["status"]["updatedReplicas"] == 2


def test_a_new_template_gets_a_new_replica_set_and_the_old_one_scales_to_zero(server: EmulatedApiServer) -> None:
    server.create(workload("Deployment", "web", replicas=2))
    changed = workload("Deployment", "web", replicas=2)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "example/app:2"
    server.apply(changed)
    replica_sets = server.list("apps/v1", "ReplicaSet", namespace=NS)
    by_revision = {r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: r for r in replica_sets}
    assert (by_revision["1"]["spec"]["replicas"], by_revision["2"]["spec"]["replicas"]) == (0, 2)
    assert {p["spec"]["containers"][0]["image"] for p in _pods(server)} == {"example/app:2"}


def test_workload_status_follows_its_pods(server: EmulatedApiServer) -> None:
    server.create(workload("Deployment", "web", replicas=3, annotations=DELAYS))
    status = server.get("apps/v1", "Deployment", "web")["status"]
    assert status["replicas"] == 3 and "readyReplicas" not in status
    server.advance(15)
    status = server.get("apps/v1", "Deployment", "web")["status"]
    assert (status["readyReplicas"], status["availableReplicas"], status["observedGeneration"]) == (3, 3, 1)
    assert {c["type"]: c["status"] for c in status["conditions"]} == {"Available": "True", "Progressing": "True"}


def test_scale_down_removes_unready_then_newest_pods_first(server: EmulatedApiServer) -> None:
    server.create(workload("Deployment", "web", replicas=2, annotations=DELAYS))
    server.advance(15)
    ready = {p["metadata"]["name"] for p in _pods(server)}
    server.advance(60)
    server.apply(workload("Deployment", "web", replicas=4, annotations=DELAYS))
    assert len(_pods(server)) == 4
    server.advance(5)  # the two new pods are Running but not Ready
    server.apply(workload("Deployment", "web", replicas=2, annotations=DELAYS))
    assert {p["metadata"]["name"] for p in _pods(server)} == ready


def test_statefulset_names_pods_by_ordinal_and_removes_the_highest(server: EmulatedApiServer) -> None:
    server.create(workload("StatefulSet", "db", replicas=3))
    assert sorted(p["metadata"]["name"] for p in _pods(server, "db")) == ["db-0", "db-1", "db-2"]
    server.apply(workload("StatefulSet", "db", replicas=1))
    assert [p["metadata"]["name"] for p in _pods(server, "db")] == ["db-0"]
    assert server.get("apps/v1", "StatefulSet", "db")["status"]["replicas"] == 1


def test_deleted_pod_is_replaced_and_deleted_workload_takes_its_pods(server: EmulatedApiServer) -> None:
    server.create(workload("ReplicaSet", "web", replicas=2))
    victim = _pods(server)[0]["metadata"]["name"]
    server.delete("v1", "Pod", victim)
    names = {p["metadata"]["name"] for p in _pods(server)}
    assert len(names) == 2 and victim not in names
    server.delete("apps/v1", "ReplicaSet", "web")
    assert _pods(server) == []


def test_set_delays_overrides_annotations_and_defaults(server: EmulatedApiServer) -> None:
    server.lifecycle.set_delays("Deployment", "web", start_delay_seconds=1, ready_delay_seconds=0)
    server.create(workload("Deployment", "web", replicas=1, annotations=DELAYS))
    assert _pods(server)[0]["status"]["phase"] == "Pending"
    server.advance(1)
    assert _condition(_pods(server)[0], "Ready")["status"] == "True"


def test_scaling_emits_controller_events(server: EmulatedApiServer) -> None:
    server.create(workload("Deployment", "web", replicas=1))
    server.apply(workload("Deployment", "web", replicas=3))
    (replica_set,) = server.list("apps/v1", "ReplicaSet", namespace=NS)
    name = replica_set["metadata"]["name"]
    events = [
        (e["involvedObject"]["kind"], e["reason"], e["message"]) for e in server.list("v1", "Event", namespace=NS)
    ]
    assert [e for e in events if e[0] == "Deployment"] == [
        ("Deployment", "ScalingReplicaSet", f"Scaled up replica set {name} to 1 from 0"),
        ("Deployment", "ScalingReplicaSet", f"Scaled up replica set {name} to 3 from 1"),
    ]
    created = [e for e in events if e[0] == "ReplicaSet"]
    assert len(created) == 3 and all(
        r == "SuccessfulCreate" and m.startswith(f"Created pod: {name}-") for _, r, m in created
    )


def test_scale_down_with_a_grace_period_leaves_terminating_pods(server: EmulatedApiServer) -> None:
    server.lifecycle.set_delays(
        "Deployment", "web", start_delay_seconds=0, ready_delay_seconds=0, termination_grace_seconds=30
    )
    server.create(workload("Deployment", "web", replicas=3))
    server.apply(workload("Deployment", "web", replicas=1))
    pods = _pods(server)
    terminating = [p for p in pods if p["metadata"].get("deletionTimestamp")]
    assert len(pods) == 3 and len(terminating) == 2
    assert terminating[0]["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:30Z"
    assert _condition(terminating[0], "Ready")["status"] == "False"
    assert server.get("apps/v1", "Deployment", "web")["status"]["replicas"] == 1
    server.advance(30)
    assert len(_pods(server)) == 1


def test_a_status_written_through_the_api_is_left_alone(server: EmulatedApiServer) -> None:
    """A test can make a pod unready or failed; the model does not undo it."""
    server.create(workload("Deployment", "web", replicas=1, annotations=DELAYS))
    name = _pods(server)[0]["metadata"]["name"]
    server.patch_status("v1", "Pod", name, {"phase": "Failed"})
    server.advance(60)
    assert _pods(server)[0]["status"]["phase"] == "Failed"
