"""The emulator's ReplicaSet removal order (pod-deletion-cost included) and its Deployment rollouts with
maxSurge and maxUnavailable, driven through the official client on a fake clock."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import READY_DELAY_ANNOTATION, START_DELAY_ANNOTATION, EmulatedApiServer
from tests.sim.conftest import NS, workload

COST = "controller.kubernetes.io/pod-deletion-cost"
DELAYS = {START_DELAY_ANNOTATION: "5", READY_DELAY_ANNOTATION: "5"}


def _pods(api: k8s.ApiClient, app: str = "web") -> list[Any]:
    return list(k8s.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"app={app}").items)


def _annotate(api: k8s.ApiClient, name: str, cost: str) -> None:
    k8s.CoreV1Api(api).patch_namespaced_pod(name, NS, {"metadata": {"annotations": {COST: cost}}})


def _scale(api: k8s.ApiClient, kind: str, name: str, replicas: int) -> None:
    apps = k8s.AppsV1Api(api)
    body = {"spec": {"replicas": replicas}}
    if kind == "Deployment":
        apps.patch_namespaced_deployment_scale(name, NS, body)
    else:
        apps.patch_namespaced_replica_set_scale(name, NS, body)


def _ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
@pytest.mark.parametrize(
    ("costs", "replicas", "kept"),
    [
        pytest.param(["10", "0", "5", "-3"], 2, [0, 2], id="the two lowest costs go, a negative one first"),
        pytest.param(["7", None, "7", "1"], 3, [0, 2, 3], id="an unannotated pod counts as cost 0"),
        pytest.param(["2147483647", "-2147483648", "0", "1"], 1, [0], id="the int32 bounds order like any cost"),
    ],
)
def test_scale_down_removes_the_lowest_deletion_cost_first(
    server: EmulatedApiServer, api: k8s.ApiClient, kind: str, costs: list[str | None], replicas: int, kept: list[int]
) -> None:
    server.create(workload(kind, "web", replicas=4))
    names = sorted(p.metadata.name for p in _pods(api))
    for name, cost in zip(names, costs, strict=True):
        if cost is not None:
            _annotate(api, name, cost)
    _scale(api, kind, "web", replicas)
    assert sorted(p.metadata.name for p in _pods(api)) == [names[i] for i in kept]


def test_an_unready_pod_goes_before_a_cheaper_ready_one(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    """Readiness ranks before pod-deletion-cost (ActivePodsWithRanks keys 3 and 4)."""
    server.create(workload("Deployment", "web", replicas=3, annotations=DELAYS))
    server.advance(10)
    ready = sorted(p.metadata.name for p in _pods(api))
    _annotate(api, ready[0], "-100")
    _scale(api, "Deployment", "web", 4)
    server.advance(5)  # the new pod is Running, not ready
    (fresh,) = [p.metadata.name for p in _pods(api) if p.metadata.name not in ready]
    _annotate(api, fresh, "1000")
    _scale(api, "Deployment", "web", 2)
    assert sorted(p.metadata.name for p in _pods(api)) == ready[1:]


def test_equal_costs_fall_back_to_the_newest_ready_first(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    server.create(workload("Deployment", "web", replicas=2))
    first = {p.metadata.name for p in _pods(api)}
    server.advance(60)
    _scale(api, "Deployment", "web", 4)
    for pod in _pods(api):
        _annotate(api, pod.metadata.name, "3")
    _scale(api, "Deployment", "web", 2)
    assert {p.metadata.name for p in _pods(api)} == first


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("abc", id="not a number"),
        pytest.param("2147483648", id="beyond int32"),
        pytest.param("+1", id="a plus sign"),
        pytest.param("01", id="a leading zero"),
    ],
)
def test_an_invalid_deletion_cost_is_refused(server: EmulatedApiServer, api: k8s.ApiClient, value: str) -> None:
    server.create(workload("Deployment", "web", replicas=1))
    (pod,) = _pods(api)
    with pytest.raises(ApiException) as caught:
        _annotate(api, pod.metadata.name, value)
    body = json.loads(caught.value.body)
    assert (caught.value.status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == f"metadata.annotations[{COST}]"
    assert body["details"]["causes"][0]["message"] == f'Invalid value: "{value}": must be a 32bit integer'


# --- rollouts -----------------------------------------------------------------------------------------------


def _rolling(replicas: int, surge: Any, unavailable: Any) -> Any:
    manifest = workload("Deployment", "web", replicas=replicas, annotations=DELAYS)
    manifest["spec"]["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
    }
    return manifest


def _new_template(api: k8s.ApiClient) -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "example/app:2"}]}}}}
    k8s.AppsV1Api(api).patch_namespaced_deployment("web", NS, patch)


def _trace(server: EmulatedApiServer, api: k8s.ApiClient, steps: int) -> list[tuple[int, int, int]]:
    """(old pods, new pods, ready pods) every 5 s: the pods start in 5 s and are ready 5 s later."""
    seen = []
    for _ in range(steps):
        pods = _pods(api)
        old = sum(1 for p in pods if p.spec.containers[0].image == "example/app:1")
        seen.append((old, len(pods) - old, sum(1 for p in pods if _ready(p))))
        server.advance(5)
    return seen


@pytest.mark.parametrize(
    ("surge", "unavailable", "expected"),
    [
        pytest.param(
            "25%", 0,
            [(4, 1, 4), (4, 1, 4), (3, 2, 4), (3, 2, 4), (2, 3, 4), (2, 3, 4), (1, 4, 4), (1, 4, 4), (0, 4, 4)],
            id="maxSurge 25% maxUnavailable 0: one surge pod at a time, never below 4 ready",
        ),
        pytest.param(
            1, 1,
            [(3, 2, 3), (3, 2, 3), (1, 4, 3), (1, 4, 3), (0, 4, 4), (0, 4, 4), (0, 4, 4), (0, 4, 4), (0, 4, 4)],
            id="maxSurge 1 maxUnavailable 1: at most 5 pods, at least 3 ready",
        ),
    ],
)  # fmt: skip
def test_a_template_change_rolls_out_within_max_surge_and_max_unavailable(
    server: EmulatedApiServer,
    api: k8s.ApiClient,
    surge: Any,
    unavailable: Any,
    expected: list[tuple[int, int, int]],
) -> None:
    server.create(_rolling(4, surge, unavailable))
    server.advance(10)
    _new_template(api)
    assert _trace(server, api, len(expected)) == expected
    replica_sets = {
        rs.metadata.annotations["deployment.kubernetes.io/revision"]: rs.spec.replicas
        for rs in k8s.AppsV1Api(api).list_namespaced_replica_set(NS).items
    }
    assert replica_sets == {"1": 0, "2": 4}
    status = k8s.AppsV1Api(api).read_namespaced_deployment("web", NS).status
    assert (status.replicas, status.updated_replicas, status.ready_replicas) == (4, 4, 4)


def test_both_bounds_zero_allow_one_unavailable_pod(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    server.create(_rolling(2, 0, 0))
    server.advance(10)
    _new_template(api)
    assert _trace(server, api, 5) == [(1, 1, 1), (1, 1, 1), (0, 2, 1), (0, 2, 1), (0, 2, 2)]


def test_recreate_replaces_every_pod_at_once(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    manifest = workload("Deployment", "web", replicas=3, annotations=DELAYS)
    manifest["spec"]["strategy"] = {"type": "Recreate"}
    server.create(manifest)
    server.advance(10)
    _new_template(api)
    assert _trace(server, api, 3) == [(0, 3, 0), (0, 3, 0), (0, 3, 3)]


def test_a_scale_down_during_a_rollout_removes_old_pods_first_and_respects_costs(
    server: EmulatedApiServer, api: k8s.ApiClient
) -> None:
    """An autoscaler lowering replicas mid-rollout: the old set shrinks, the cheapest old pods go."""
    server.create(_rolling(4, 1, 0))
    server.advance(10)
    old = sorted(p.metadata.name for p in _pods(api))
    for name, cost in zip(old, ["50", "-5", "20", "0"], strict=True):
        _annotate(api, name, cost)
    _new_template(api)
    server.advance(10)  # the surge pod is ready: one old pod (the cheapest) has gone, a second surge pod starts
    assert sorted(p.metadata.name for p in _pods(api) if p.metadata.name in old) == [old[0], old[2], old[3]]
    _scale(api, "Deployment", "web", 2)  # 2 ready pods must stay: the two cheapest of the three old ones go
    assert [p.metadata.name for p in _pods(api) if p.metadata.name in old] == [old[0]]
    server.advance(10)  # the second new pod is ready: the last old pod goes
    pods = _pods(api)
    assert len(pods) == 2 and all(p.spec.containers[0].image == "example/app:2" for p in pods)


def test_apply_with_a_changed_template_keeps_the_old_set_until_new_pods_are_ready(server: EmulatedApiServer) -> None:
    server.create(_rolling(2, "50%", 0))
    server.advance(10)
    changed = copy.deepcopy(_rolling(2, "50%", 0))
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "example/app:2"
    server.apply(changed)
    images = sorted(p["spec"]["containers"][0]["image"] for p in server.list("v1", "Pod", namespace=NS))
    assert images == ["example/app:1", "example/app:1", "example/app:2"]
