"""Custom resources from CRDs: CustomObjectsApi, the /status and /scale subresources, the dynamic client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import NS, ROLLOUT_CRD, autoscaler, status_of

GROUP, VERSION, PLURAL = "autoscaler.dev", "v1alpha1", "prometheusautoscalers"


@pytest.fixture
def custom(api: k8s.ApiClient) -> k8s.CustomObjectsApi:
    objects = k8s.CustomObjectsApi(api)
    objects.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, autoscaler("web"))
    return objects


def test_create_sets_metadata_and_drops_status(api: k8s.ApiClient) -> None:
    body = dict(autoscaler("web"), status={"currentReplicas": 9})
    created = k8s.CustomObjectsApi(api).create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body)
    assert created["metadata"]["generation"] == 1 and created["metadata"]["uid"]
    assert "status" not in created, "with a /status subresource, create ignores the status"


def test_list_and_get(custom: k8s.CustomObjectsApi) -> None:
    listed = custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    assert listed["kind"] == "PrometheusAutoscalerList"
    assert [o["metadata"]["name"] for o in listed["items"]] == ["web"]
    assert listed["items"][0]["apiVersion"] == "autoscaler.dev/v1alpha1"
    got = custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "web")
    assert got["spec"]["maxReplicas"] == 10


def test_merge_patch_bumps_generation_and_keeps_status(custom: k8s.CustomObjectsApi) -> None:
    custom.patch_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "web", {"status": {"currentReplicas": 2}})
    patched = custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "web", {"spec": {"maxReplicas": 5}, "status": {"currentReplicas": 99}}
    )
    assert patched["spec"]["maxReplicas"] == 5
    assert patched["metadata"]["generation"] == 2
    assert patched["status"] == {"currentReplicas": 2}, "the main resource ignores status changes"


def test_status_patch_ignores_spec(custom: k8s.CustomObjectsApi) -> None:
    patched = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, NS, PLURAL, "web", {"spec": {"maxReplicas": 1}, "status": {"desiredReplicas": 4}}
    )
    assert patched["status"] == {"desiredReplicas": 4}
    assert patched["spec"]["maxReplicas"] == 10
    assert patched["metadata"]["generation"] == 1


def test_replace_status_with_stale_resource_version_is_a_conflict(custom: k8s.CustomObjectsApi) -> None:
    current: Any = custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "web")
    custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "web", {"metadata": {"labels": {"a": "b"}}})
    current["status"] = {"currentReplicas": 1}
    with pytest.raises(ApiException) as caught:
        custom.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "web", current)
    assert (caught.value.status, status_of(caught.value)["reason"]) == (409, "Conflict")


def test_crd_created_through_the_api_is_served(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    crd: Any = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Cluster",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }
    k8s.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    objects = k8s.CustomObjectsApi(api)
    objects.create_cluster_custom_object("example.com", "v1", "widgets", {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}
    })  # fmt: skip
    assert objects.get_cluster_custom_object("example.com", "v1", "widgets", "w")["spec"] == {"size": 1}


def _rollout(server: EmulatedApiServer, replicas: int) -> None:
    server.create(
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "shop", "namespace": NS},
         "spec": {"replicas": replicas}}
    )  # fmt: skip
    server.patch_status("argoproj.io/v1alpha1", "Rollout", "shop", {"replicas": replicas, "selector": "app=shop"})


def test_custom_object_scale(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    _rollout(server, 2)
    objects = k8s.CustomObjectsApi(api)
    scale = objects.get_namespaced_custom_object_scale("argoproj.io", "v1alpha1", NS, "rollouts", "shop")
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=shop"}
    objects.patch_namespaced_custom_object_scale(
        "argoproj.io", "v1alpha1", NS, "rollouts", "shop", {"spec": {"replicas": 6}}
    )
    assert server.get("argoproj.io/v1alpha1", "Rollout", "shop")["spec"]["replicas"] == 6


def test_dynamic_client_discovers_and_scales_a_custom_resource(
    server: EmulatedApiServer, api: k8s.ApiClient, tmp_path: Path
) -> None:
    _rollout(server, 1)
    dynamic = DynamicClient(api, cache_file=str(tmp_path / "discovery.json"))
    rollouts = dynamic.resources.get(api_version="argoproj.io/v1alpha1", kind="Rollout")
    scale_resource = rollouts.subresources["scale"]
    scale = scale_resource.get(name="shop", namespace=NS)
    assert scale.spec.replicas == 1 and scale.status.selector == "app=shop"
    patched = scale_resource.patch(
        name="shop", namespace=NS, body={"spec": {"replicas": 3}}, content_type="application/merge-patch+json"
    )
    assert patched.spec.replicas == 3
    with pytest.raises(ApiException) as caught:
        scale_resource.patch(name="shop", namespace=NS, body={"spec": {"replicas": 4}})
    assert caught.value.status == 415, "the dynamic client's default strategic merge patch is refused, as for real"


def test_dynamic_client_lists_deployments_scale_subresource(api: k8s.ApiClient, tmp_path: Path) -> None:
    dynamic = DynamicClient(api, cache_file=str(tmp_path / "discovery.json"))
    deployments = dynamic.resources.get(api_version="apps/v1", kind="Deployment")
    assert deployments.short_names == ["deploy"]
    assert set(deployments.subresources) == {"scale", "status"}
    assert ROLLOUT_CRD["spec"]["names"]["shortNames"] == dynamic.resources.get(kind="Rollout").short_names
