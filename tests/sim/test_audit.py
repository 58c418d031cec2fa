"""The audit log: every request's verb, resource, code and caller, from Python and over HTTP."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import NS, Raw, workload


def _client(server: EmulatedApiServer, *, agent: str, token: str) -> k8s.ApiClient:
    config = k8s.Configuration(host=server.url)
    config.api_key = {"authorization": token}
    config.api_key_prefix = {"authorization": "Bearer"}
    config.retries = 0
    api = k8s.ApiClient(config)
    api.user_agent = agent
    return api


def test_records_verbs_resources_and_codes(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    server.create(workload("Deployment", "web"))
    apps = k8s.AppsV1Api(api)
    apps.read_namespaced_deployment_scale("web", NS)
    apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 3}})
    k8s.CoreV1Api(api).list_namespaced_pod(NS, label_selector="app=web")
    with pytest.raises(ApiException):
        apps.read_namespaced_deployment("missing", NS)
    seen = [(r.verb, r.resource, r.subresource, r.namespace, r.name, r.code) for r in server.audit.records()]
    assert seen == [
        ("get", "deployments", "scale", NS, "web", 200),
        ("patch", "deployments", "scale", NS, "web", 200),
        ("list", "pods", "", NS, "", 200),
        ("get", "deployments", "", NS, "missing", 404),
    ]
    patch = server.audit.records(verb="patch")[0]
    assert patch.group == "apps" and patch.content_type == "application/strategic-merge-patch+json"
    assert patch.body_json() == {"spec": {"replicas": 3}}
    assert patch.time == server.clock.now()


def test_tells_two_clients_apart(server: EmulatedApiServer) -> None:
    server.create(workload("Deployment", "web"))
    with (
        _client(server, agent="daemon/1", token="t-daemon") as daemon,
        _client(server, agent="tests/1", token="t-tests") as tests,
    ):
        k8s.AppsV1Api(daemon).read_namespaced_deployment_scale("web", NS)
        k8s.AppsV1Api(tests).read_namespaced_deployment("web", NS)
    assert [r.subresource for r in server.audit.records(token="t-daemon")] == ["scale"]
    assert [r.user_agent for r in server.audit.records(token="t-tests")] == ["tests/1"]


def test_watch_and_injected_faults_are_recorded(server: EmulatedApiServer, raw: Raw) -> None:
    server.faults.add(r"/configmaps$", method="POST", status=500)
    raw.request("POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "c"}})
    raw.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&timeoutSeconds=0")
    (create,) = server.audit.records(verb="create")
    assert (create.code, create.injected) == (500, True)
    assert [r.resource for r in server.audit.records(verb="watch")] == ["configmaps"]


def test_queryable_over_http(server: EmulatedApiServer, raw: Raw) -> None:
    raw.request("GET", "/api/v1/namespaces/default/pods/nope", User_Agent="other-process")
    code, body = raw.request("GET", "/_emulator/audit?user_agent=other-process&code=404")
    assert code == 200
    (item,) = body["items"]
    assert (item["verb"], item["resource"], item["name"], item["code"]) == ("get", "pods", "nope", 404)
    assert item["time"] == "2026-01-01T00:00:00.000000Z"
    assert raw.request("DELETE", "/_emulator/audit")[0] == 200
    assert server.audit.records() == []
