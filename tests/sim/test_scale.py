"""The /scale subresource of apps/v1 workloads through the official client, as the autoscaler calls it."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import NS, status_of, workload

KINDS = [
    pytest.param("Deployment", "deployment", id="deployment"),
    pytest.param("StatefulSet", "stateful_set", id="statefulset"),
    pytest.param("ReplicaSet", "replica_set", id="replicaset"),
]


def _call(apps: k8s.AppsV1Api, verb: str, suffix: str, *args: object) -> k8s.V1Scale:
    return getattr(apps, f"{verb}_namespaced_{suffix}_scale")(*args)


@pytest.mark.parametrize(("kind", "suffix"), KINDS)
def test_read_scale(server: EmulatedApiServer, api: k8s.ApiClient, kind: str, suffix: str) -> None:
    server.create(workload(kind, "web", replicas=3, labels={"app": "web", "tier": "front"}))
    scale = _call(k8s.AppsV1Api(api), "read", suffix, "web", NS)
    assert scale.kind == "Scale" and scale.api_version == "autoscaling/v1"
    assert scale.spec.replicas == 3
    assert scale.status.replicas == 3  # the lifecycle model created the pods at once (no delays)
    assert scale.status.selector == "app=web,tier=front"
    assert scale.metadata.resource_version


@pytest.mark.parametrize(("kind", "suffix"), KINDS)
def test_replace_scale_with_current_resource_version(
    server: EmulatedApiServer, api: k8s.ApiClient, kind: str, suffix: str
) -> None:
    server.create(workload(kind, "web", replicas=2))
    apps = k8s.AppsV1Api(api)
    scale = _call(apps, "read", suffix, "web", NS)
    scale.spec.replicas = 5
    replaced = _call(apps, "replace", suffix, "web", NS, scale)
    assert replaced.spec.replicas == 5
    assert int(replaced.metadata.resource_version) > int(scale.metadata.resource_version)
    assert server.get("apps/v1", kind, "web")["spec"]["replicas"] == 5


@pytest.mark.parametrize(("kind", "suffix"), KINDS)
def test_replace_scale_with_stale_resource_version_is_a_conflict(
    server: EmulatedApiServer, api: k8s.ApiClient, kind: str, suffix: str
) -> None:
    server.create(workload(kind, "web", replicas=2))
    apps = k8s.AppsV1Api(api)
    stale = _call(apps, "read", suffix, "web", NS)
    _call(apps, "patch", suffix, "web", NS, {"spec": {"replicas": 3}})
    stale.spec.replicas = 7
    with pytest.raises(ApiException) as caught:
        _call(apps, "replace", suffix, "web", NS, stale)
    assert caught.value.status == 409
    plural = {"Deployment": "deployments", "StatefulSet": "statefulsets", "ReplicaSet": "replicasets"}[kind]
    assert status_of(caught.value)["reason"] == "Conflict"
    assert status_of(caught.value)["message"].startswith(f'Operation cannot be fulfilled on {plural}.apps "web"')
    assert server.get("apps/v1", kind, "web")["spec"]["replicas"] == 3


def test_replace_scale_without_resource_version_is_unconditional(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    server.create(workload("Deployment", "web"))
    body = k8s.V1Scale(metadata=k8s.V1ObjectMeta(name="web", namespace=NS), spec=k8s.V1ScaleSpec(replicas=4))
    assert k8s.AppsV1Api(api).replace_namespaced_deployment_scale("web", NS, body).spec.replicas == 4


def test_patch_scale_bumps_generation_and_pods_follow(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    server.create(workload("Deployment", "web", replicas=1))
    apps = k8s.AppsV1Api(api)
    apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 3}})
    deployment = apps.read_namespaced_deployment("web", NS)
    assert deployment.metadata.generation == 2
    assert deployment.status.replicas == 3
    pods = k8s.CoreV1Api(api).list_namespaced_pod(NS, label_selector="app=web")
    assert len(pods.items) == 3


def test_negative_replicas_are_invalid(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    server.create(workload("Deployment", "web"))
    with pytest.raises(ApiException) as caught:
        k8s.AppsV1Api(api).patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": -1}})
    assert caught.value.status == 422
    assert status_of(caught.value)["message"] == (
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
    )


def test_scale_of_a_missing_deployment_is_not_found(api: k8s.ApiClient) -> None:
    with pytest.raises(ApiException) as caught:
        k8s.AppsV1Api(api).read_namespaced_deployment_scale("nope", NS)
    assert caught.value.status == 404
    assert status_of(caught.value)["message"] == 'deployments.apps "nope" not found'
