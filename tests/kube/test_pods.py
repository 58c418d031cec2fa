"""A target's pods by the scale's selector, read through the official client into the core's Pod."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from autoscaler.core.types import Pod, PodPhase
from autoscaler.kube.client import KubeClient
from autoscaler.kube.pods import PodLister, pod_from_json
from tests.kube.conftest import NS, Setup


def test_pods_by_selector_become_core_pods(kube: KubeClient, setup: Setup) -> None:
    setup.pod(
        "web-1",
        labels={"app": "web", "tier": "front"},
        containers=[
            {"name": "app", "image": "a", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}},
            {"name": "log", "image": "b", "resources": {"requests": {"cpu": "1.5m"}}},
        ],
        initContainers=[
            {"name": "proxy", "image": "c", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
            {"name": "migrate", "image": "d", "resources": {"requests": {"cpu": "2"}}},
        ],
        resources={"requests": {"cpu": "1"}},
    )
    setup.pod("web-2", labels={"app": "web", "tier": "back"})
    setup.pod("api-1", labels={"app": "api"})

    pods = PodLister(kube).list_pods(NS, "app=web,tier in (front)")
    assert [p.name for p in pods] == ["web-1"]
    pod = pods[0]
    assert pod.namespace == NS
    assert pod.labels["tier"] == "front"
    assert [(c.name, dict(c.requests)) for c in pod.containers] == [
        ("app", {"cpu": 250, "memory": 1073741824000}),
        ("log", {"cpu": 2}),
    ]
    assert [(c.name, c.restart_policy_always, dict(c.requests)) for c in pod.init_containers] == [
        ("proxy", True, {"cpu": 100}),
        ("migrate", False, {"cpu": 2000}),
    ]
    assert dict(pod.pod_requests) == {"cpu": 1000}
    assert not pod.deleted

    assert {p.name for p in PodLister(kube).list_pods(NS, "app=web")} == {"web-1", "web-2"}
    assert PodLister(kube).list_pods(NS, "app=nothing") == ()


def test_pod_status_fields() -> None:
    pod = pod_from_json(
        {
            "metadata": {"name": "p", "namespace": NS, "deletionTimestamp": "2026-01-01T00:00:09Z"},
            "spec": {"containers": [{"name": "app"}]},
            "status": {
                "phase": "Running",
                "startTime": "2026-01-01T00:00:01Z",
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T00:00:05Z"},
                ],
            },
        }
    )
    assert pod.phase is PodPhase.RUNNING
    assert pod.ready == "False" and not pod.is_ready
    assert pod.ready_transition == datetime.fromisoformat("2026-01-01T00:00:05+00:00")
    assert pod.start_time == datetime.fromisoformat("2026-01-01T00:00:01+00:00")
    assert pod.deleted
    assert pod_from_json({"metadata": {"name": "q"}}).ready is None


def test_status_and_deletion_come_through_the_wire(kube: KubeClient, server: Any) -> None:
    server.put(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-9",
                "namespace": NS,
                "labels": {"app": "web"},
                "deletionTimestamp": "2026-01-01T00:01:00Z",
            },
            "spec": {"containers": [{"name": "app", "image": "a", "resources": {"requests": {"cpu": "500m"}}}]},
            "status": {
                "phase": "Running",
                "startTime": "2026-01-01T00:00:01Z",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:07Z"}],
            },
        }
    )
    (pod,) = PodLister(kube).list_pods(NS, "app=web")
    assert pod.deleted
    assert pod.phase is PodPhase.RUNNING
    assert pod.is_ready
    assert pod.ready_transition == datetime.fromisoformat("2026-01-01T00:00:07+00:00")
    assert pod.start_time == datetime.fromisoformat("2026-01-01T00:00:01+00:00")


def _pod_json(name: str, labels: dict[str, str], cpu: str = "500m") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "shop", "labels": labels},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Running"},
    }


def test_pods_of_one_workload_share_their_labels_and_containers() -> None:
    """100,000 cached pods must not hold 100,000 copies of their workload's labels and requests: pods with
    equal labels share one mapping, equal containers one tuple; different ones do not, and a pod's mapping is
    not the JSON it came from (a later change of that JSON does not reach it)."""
    raw = _pod_json("web-1", {"app": "web", "pod-template-hash": "abc"})
    a = pod_from_json(raw)
    b = pod_from_json(_pod_json("web-2", {"app": "web", "pod-template-hash": "abc"}))
    c = pod_from_json(_pod_json("web-3", {"app": "web", "pod-template-hash": "def"}, cpu="1"))
    assert a.labels is b.labels and a.containers is b.containers
    assert a.labels is not c.labels and a.containers is not c.containers
    assert dict(c.labels) == {"app": "web", "pod-template-hash": "def"} and c.containers[0].requests == {"cpu": 1000}
    raw["metadata"]["labels"]["app"] = "changed"
    assert a.labels["app"] == "web"
    bare = pod_from_json({"metadata": {"name": "x"}})
    assert dict(bare.labels) == {} and bare.containers == () and dict(bare.pod_requests) == {}


def test_pods_started_in_the_same_second_share_their_times() -> None:
    def timed(name: str, start: str) -> Pod:
        raw = _pod_json(name, {"app": "web"})
        raw["status"] = {"phase": "Running", "startTime": start}
        return pod_from_json(raw)

    one, two = timed("web-1", "2026-03-01T12:00:00Z"), timed("web-2", "2026-03-01T12:00:00Z")
    later = timed("web-3", "2026-03-01T12:00:01Z")
    assert one.start_time is two.start_time and one.start_time == datetime(2026, 3, 1, 12, tzinfo=UTC)
    assert later.start_time is not one.start_time and later.start_time == datetime(2026, 3, 1, 12, 0, 1, tzinfo=UTC)
