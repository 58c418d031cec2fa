"""Write semantics beyond the basics: namespaces must exist, server-side dry run, patch formats on /scale."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import EmulatedApiServer, default_crds
from autoscaler.sim.apiserver.resources import from_crd
from tests.sim.conftest import NS, Raw, status_of, workload


def test_create_in_a_missing_namespace_is_not_found(api: k8s.ApiClient) -> None:
    body = k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="c"))
    with pytest.raises(ApiException) as caught:
        k8s.CoreV1Api(api).create_namespaced_config_map("nowhere", body)
    assert status_of(caught.value)["message"] == 'namespaces "nowhere" not found'


def test_created_namespace_accepts_objects(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="shop")))
    core.create_namespaced_config_map("shop", k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="c")))
    assert [c.metadata.name for c in core.list_config_map_for_all_namespaces().items] == ["c"]


def test_dry_run_changes_nothing(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(workload("Deployment", "web", replicas=2))
    before = server.store.resource_version
    path = f"/apis/apps/v1/namespaces/{NS}/deployments"
    code, body = raw.request("PATCH", f"{path}/web/scale?dryRun=All", {"spec": {"replicas": 9}},
                             content_type="application/merge-patch+json")  # fmt: skip
    assert (code, body["spec"]["replicas"]) == (200, 9)
    code, body = raw.request("POST", f"{path}?dryRun=All", workload("Deployment", "api"))
    assert code == 201 and "resourceVersion" not in body["metadata"]
    assert raw.request("DELETE", f"{path}/web?dryRun=All")[0] == 200
    assert server.store.resource_version == before
    assert server.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 2


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        pytest.param("application/merge-patch+json", {"spec": {"replicas": 4}}, id="merge patch"),
        pytest.param("application/strategic-merge-patch+json", {"spec": {"replicas": 4}}, id="strategic"),
        pytest.param("application/json-patch+json", [{"op": "replace", "path": "/spec/replicas", "value": 4}],
                     id="json patch"),
    ],
)  # fmt: skip
def test_scale_accepts_every_patch_format(server: EmulatedApiServer, raw: Raw, content_type: str, body: object) -> None:
    server.create(workload("StatefulSet", "db", replicas=1))
    path = f"/apis/apps/v1/namespaces/{NS}/statefulsets/db/scale"
    code, scale = raw.request("PATCH", path, body, content_type=content_type)
    assert (code, scale["kind"], scale["spec"]["replicas"]) == (200, "Scale", 4)


def test_patch_with_a_stale_resource_version_is_a_conflict(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(workload("Deployment", "web"))
    path = f"/apis/apps/v1/namespaces/{NS}/deployments/web/scale"
    body = {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 3}}
    code, status = raw.request("PATCH", path, body, content_type="application/merge-patch+json")
    assert (code, status["reason"]) == (409, "Conflict")


def test_update_keeps_status_and_bumps_generation_on_spec_changes(server: EmulatedApiServer, raw: Raw) -> None:
    created = server.create(workload("Deployment", "web", replicas=1))
    body = workload("Deployment", "web", replicas=1)
    body["metadata"]["labels"] = {"team": "shop"}
    body["status"] = {"replicas": 42}
    code, updated = raw.request("PUT", f"/apis/apps/v1/namespaces/{NS}/deployments/web", body)
    assert code == 200
    assert updated["metadata"]["generation"] == 1, "a label change is not a spec change"
    assert updated["status"]["replicas"] == 1
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "example/app:2"
    assert raw.request("PUT", f"/apis/apps/v1/namespaces/{NS}/deployments/web", body)[1]["metadata"]["generation"] == 2


def test_the_project_crd_is_served_by_default() -> None:
    crds = default_crds()
    served = {(t.group, t.version, t.plural, t.short_names) for c in crds for t in from_crd(c)}
    assert ("autoscaler.dev", "v1alpha1", "prometheusautoscalers", ("pas",)) in served
    server = EmulatedApiServer()
    assert server.registry.by_name("pas") is not None
