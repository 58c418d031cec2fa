"""Golden Status bodies from the Kubernetes API conventions: shape, reason, code and the real server's wording."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import NS, Raw, autoscaler, workload

DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


def test_not_found_has_the_exact_shape_of_the_real_server(raw: Raw) -> None:
    code, body = raw.request("GET", f"{DEPLOYMENTS}/x")
    assert code == 404
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'deployments.apps "x" not found',
        "reason": "NotFound",
        "details": {"name": "x", "group": "apps", "kind": "deployments"},
        "code": 404,
    }


def test_not_found_in_the_core_group_names_no_group(raw: Raw) -> None:
    code, body = raw.request("GET", f"/api/v1/namespaces/{NS}/pods/p")
    assert (code, body["message"], body["details"]) == (404, 'pods "p" not found', {"name": "p", "kind": "pods"})


def test_create_twice_is_already_exists(raw: Raw) -> None:
    assert raw.request("POST", DEPLOYMENTS, workload("Deployment", "web"))[0] == 201
    code, body = raw.request("POST", DEPLOYMENTS, workload("Deployment", "web"))
    assert code == 409
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'deployments.apps "web" already exists'
    assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}


def test_stale_update_is_conflict_not_already_exists(raw: Raw) -> None:
    _, created = raw.request("POST", DEPLOYMENTS, workload("Deployment", "web"))
    raw.request("PATCH", f"{DEPLOYMENTS}/web", {"metadata": {"labels": {"a": "b"}}},
                content_type="application/merge-patch+json")  # fmt: skip
    code, body = raw.request("PUT", f"{DEPLOYMENTS}/web", created)
    assert code == 409
    assert body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_custom_resource_update_without_resource_version_is_invalid(raw: Raw) -> None:
    path = f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers"
    raw.request("POST", path, autoscaler("web"))
    code, body = raw.request("PUT", f"{path}/web", autoscaler("web"))
    assert code == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'PrometheusAutoscaler.autoscaler.dev "web" is invalid: '
        "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    )
    assert raw.request("PUT", f"{path}/web/status", autoscaler("web"))[0] == 422, "the same holds for /status"


def test_strategic_merge_patch_on_a_custom_resource_is_unsupported_media_type(raw: Raw) -> None:
    path = f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers"
    raw.request("POST", path, autoscaler("web"))
    code, body = raw.request(
        "PATCH", f"{path}/web", {"spec": {"maxReplicas": 3}}, content_type="application/strategic-merge-patch+json"
    )
    assert code == 415
    assert body["reason"] == "UnsupportedMediaType"
    assert "application/merge-patch+json" in body["message"]


def test_post_to_a_named_object_is_method_not_allowed(raw: Raw) -> None:
    code, body = raw.request("POST", f"{DEPLOYMENTS}/web", workload("Deployment", "web"))
    assert (code, body["reason"]) == (405, "MethodNotAllowed")


def test_unknown_resource_is_not_found(raw: Raw) -> None:
    code, body = raw.request("GET", "/apis/apps/v1/namespaces/default/widgets")
    assert (code, body["reason"], body["message"]) == (
        404,
        "NotFound",
        "the server could not find the requested resource",
    )


@pytest.mark.parametrize(
    ("query", "reason", "text"),
    [
        pytest.param("resourceVersionMatch=Exact", "Invalid", "forbidden unless resourceVersion is provided",
                     id="match without a version"),
        pytest.param("resourceVersion=0&resourceVersionMatch=Exact", "Invalid", 'forbidden for resourceVersion "0"',
                     id="exact match of version 0"),
        pytest.param("resourceVersion=1&resourceVersionMatch=Newest", "Invalid", "Unsupported value",
                     id="unknown match"),
        pytest.param("resourceVersion=abc", "BadRequest", "invalid resource version", id="not a number"),
        pytest.param("fieldSelector=spec.color%3Dred", "BadRequest", "field label not supported: spec.color",
                     id="unsupported field"),
    ],
)  # fmt: skip
def test_bad_list_options(raw: Raw, query: str, reason: str, text: str) -> None:
    code, body = raw.request("GET", f"/api/v1/namespaces/{NS}/pods?{query}")
    assert body["reason"] == reason, body
    assert code == (422 if reason == "Invalid" else 400)
    assert text in body["message"]


def test_namespace_mismatch_is_bad_request(raw: Raw) -> None:
    manifest: dict[str, Any] = workload("Deployment", "web")
    manifest["metadata"]["namespace"] = "other"
    code, body = raw.request("POST", DEPLOYMENTS, manifest)
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == "the namespace of the provided object does not match the namespace sent on the request"


def test_deployment_selector_must_match_template(raw: Raw) -> None:
    manifest: dict[str, Any] = workload("Deployment", "web")
    manifest["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    code, body = raw.request("POST", DEPLOYMENTS, manifest)
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "spec.template.metadata.labels"


def test_delete_answers_a_success_status_and_then_not_found(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(workload("Deployment", "web"))
    code, body = raw.request("DELETE", f"{DEPLOYMENTS}/web")
    assert code == 200
    assert body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"]["name"] == "web" and body["details"]["kind"] == "deployments"
    assert raw.request("DELETE", f"{DEPLOYMENTS}/web")[0] == 404


def test_delete_with_a_stale_precondition_is_a_conflict(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(workload("Deployment", "web"))
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"resourceVersion": "1"}}
    code, body = raw.request("DELETE", f"{DEPLOYMENTS}/web", options)
    assert (code, body["reason"]) == (409, "Conflict")
    assert body["message"].startswith("Precondition failed: ResourceVersion in precondition: 1")
