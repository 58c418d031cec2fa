"""Discovery documents as the official client and kubectl read them."""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s

from tests.sim.conftest import Raw


def _resources(raw: Raw, path: str) -> dict[str, Any]:
    code, body = raw.request("GET", path)
    assert code == 200 and body["kind"] == "APIResourceList"
    return {r["name"]: r for r in body["resources"]}


def test_version_parses_in_the_client(api: k8s.ApiClient) -> None:
    info = k8s.VersionApi(api).get_code()
    assert (info.major, info.minor) == ("1", "32")


def test_groups(api: k8s.ApiClient) -> None:
    assert k8s.CoreApi(api).get_api_versions().versions == ["v1"]
    groups = {g.name: g.preferred_version.group_version for g in k8s.ApisApi(api).get_api_versions().groups}
    assert groups == {
        "apps": "apps/v1",
        "events.k8s.io": "events.k8s.io/v1",
        "autoscaling": "autoscaling/v2",
        "coordination.k8s.io": "coordination.k8s.io/v1",
        "apiextensions.k8s.io": "apiextensions.k8s.io/v1",
        "autoscaler.dev": "autoscaler.dev/v1alpha1",
        "argoproj.io": "argoproj.io/v1alpha1",
    }


def test_apps_resources_with_short_names_and_subresources(raw: Raw) -> None:
    resources = _resources(raw, "/apis/apps/v1")
    assert {n: r.get("shortNames") for n, r in resources.items() if "/" not in n} == {
        "deployments": ["deploy"],
        "statefulsets": ["sts"],
        "replicasets": ["rs"],
    }
    scale = resources["deployments/scale"]
    assert (scale["group"], scale["version"], scale["kind"], scale["verbs"]) == (
        "autoscaling", "v1", "Scale", ["get", "patch", "update"],
    )  # fmt: skip
    assert resources["deployments/status"]["kind"] == "Deployment"
    assert resources["deployments"]["namespaced"] is True and "watch" in resources["deployments"]["verbs"]


def test_core_short_names(raw: Raw) -> None:
    resources = _resources(raw, "/api/v1")
    assert {n: r.get("shortNames") for n, r in resources.items() if n in ("pods", "configmaps", "events")} == {
        "pods": ["po"],
        "configmaps": ["cm"],
        "events": ["ev"],
    }
    assert "pods/status" in resources and "pods/scale" not in resources


def test_custom_resource_subresources_follow_the_crd(raw: Raw) -> None:
    autoscalers = _resources(raw, "/apis/autoscaler.dev/v1alpha1")
    assert set(autoscalers) == {"prometheusautoscalers", "prometheusautoscalers/status"}
    assert autoscalers["prometheusautoscalers"]["shortNames"] == ["pas"]
    rollouts = _resources(raw, "/apis/argoproj.io/v1alpha1")
    assert set(rollouts) == {"rollouts", "rollouts/status", "rollouts/scale"}


def test_unknown_group_version_is_not_found(raw: Raw) -> None:
    assert raw.request("GET", "/apis/batch/v1")[0] == 404


def test_openapi_v3_declares_server_side_field_validation(raw: Raw) -> None:
    code, index = raw.request("GET", "/openapi/v3")
    assert code == 200 and "apis/apps/v1" in index["paths"]
    code, document = raw.request("GET", index["paths"]["apis/apps/v1"]["serverRelativeURL"])
    patch = document["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
