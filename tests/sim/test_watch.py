"""Watches through kubernetes.watch.Watch: resourceVersion, selectors, bookmarks, timeouts and 410 Expired."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from kubernetes import client as k8s
from kubernetes import watch

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import NS, workload


def _configmap(name: str, **labels: str) -> k8s.V1ConfigMap:
    return k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name=name, labels=labels), data={"k": "v"})


def _events(core: k8s.CoreV1Api, count: int, **kwargs: Any) -> list[tuple[str, str]]:
    """The first `count` events of a watch, as (type, name); the watch's timeout bounds the wait."""
    out: list[tuple[str, str]] = []
    stream = watch.Watch()
    for event in stream.stream(core.list_namespaced_config_map, NS, timeout_seconds=5, **kwargs):
        out.append((event["type"], event["object"].metadata.name))
        if len(out) == count:
            stream.stop()
    return out


def test_watch_from_a_list_resource_version_sees_only_later_changes(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_config_map(NS, _configmap("before"))
    listed = core.list_namespaced_config_map(NS)
    core.create_namespaced_config_map(NS, _configmap("after"))
    core.patch_namespaced_config_map("before", NS, {"data": {"k": "w"}})
    core.delete_namespaced_config_map("after", NS)
    events = _events(core, 3, resource_version=listed.metadata.resource_version)
    assert events == [("ADDED", "after"), ("MODIFIED", "before"), ("DELETED", "after")]


def test_watch_without_resource_version_starts_with_the_current_state(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_config_map(NS, _configmap("a"))
    core.create_namespaced_config_map(NS, _configmap("b"))
    assert _events(core, 2) == [("ADDED", "a"), ("ADDED", "b")]


def test_label_selector_turns_relabelling_into_added_and_deleted(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_config_map(NS, _configmap("c", team="a"))
    start = core.list_namespaced_config_map(NS).metadata.resource_version
    core.patch_namespaced_config_map("c", NS, {"metadata": {"labels": {"team": "b"}}})
    core.patch_namespaced_config_map("c", NS, {"metadata": {"labels": {"team": "a"}}})
    events = _events(core, 2, resource_version=start, label_selector="team=b")
    assert events == [("ADDED", "c"), ("DELETED", "c")]


def test_watch_from_a_compacted_resource_version_is_expired(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    """The real server answers 200 and one ERROR event carrying a 410 Expired Status."""
    core = k8s.CoreV1Api(api)
    core.create_namespaced_config_map(NS, _configmap("a"))
    old = core.list_namespaced_config_map(NS).metadata.resource_version
    core.create_namespaced_config_map(NS, _configmap("b"))
    server.compact()
    url = f"{server.url}/api/v1/namespaces/{NS}/configmaps?watch=true&resourceVersion={old}&timeoutSeconds=5"
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        lines = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0]["type"] == "ERROR"
    status = lines[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith(f"too old resource version: {old}")


def test_exact_list_of_a_past_resource_version(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_config_map(NS, _configmap("a"))
    then = core.list_namespaced_config_map(NS).metadata.resource_version
    core.create_namespaced_config_map(NS, _configmap("b"))
    core.delete_namespaced_config_map("a", NS)
    past = core.list_namespaced_config_map(NS, resource_version=then, resource_version_match="Exact")
    assert [c.metadata.name for c in past.items] == ["a"]
    assert past.metadata.resource_version == then
    server.compact()
    code = 0
    try:
        core.list_namespaced_config_map(NS, resource_version=then, resource_version_match="Exact")
    except k8s.exceptions.ApiException as err:
        code = err.status
    assert code == 410


def test_bookmarks_carry_the_latest_resource_version(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    start = core.list_namespaced_config_map(NS).metadata.resource_version
    core.create_namespaced_pod(
        NS, k8s.V1Pod(metadata=k8s.V1ObjectMeta(name="p"), spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c")]))
    )
    response = core.list_namespaced_config_map(
        NS, watch=True, resource_version=start, allow_watch_bookmarks=True, timeout_seconds=2, _preload_content=False
    )
    first = json.loads(next(response.stream(amt=None)).splitlines()[0])
    response.release_conn()
    assert first["type"] == "BOOKMARK"
    assert int(first["object"]["metadata"]["resourceVersion"]) > int(start)


def test_watch_ends_after_timeout_seconds(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    events = list(watch.Watch().stream(core.list_namespaced_config_map, NS, timeout_seconds=1))
    assert events == []


def test_deployment_watch_sees_scaling(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    server.create(workload("Deployment", "web", replicas=1))
    apps = k8s.AppsV1Api(api)
    start = apps.list_namespaced_deployment(NS).metadata.resource_version
    apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 2}})
    stream = watch.Watch()
    for event in stream.stream(apps.list_namespaced_deployment, NS, resource_version=start, timeout_seconds=5):
        if event["object"].status.replicas == 2:
            stream.stop()
    assert event["object"].spec.replicas == 2


def test_watch_list_sends_initial_events_then_a_marked_bookmark(server: EmulatedApiServer) -> None:
    """sendInitialEvents=true (KEP-3157): the state as ADDED, then a BOOKMARK marking the end of it."""
    server.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    query = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    url = f"{server.url}/api/v1/namespaces/{NS}/configmaps?{query}&timeoutSeconds=1"
    with urllib.request.urlopen(url, timeout=10) as response:
        lines = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert [e["type"] for e in lines[:2]] == ["ADDED", "BOOKMARK"]
    assert lines[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_resource_version_match_on_a_watch_needs_send_initial_events(server: EmulatedApiServer) -> None:
    url = f"{server.url}/api/v1/namespaces/{NS}/configmaps?watch=true&resourceVersionMatch=NotOlderThan"
    try:
        urllib.request.urlopen(url, timeout=10)
    except urllib.error.HTTPError as err:
        assert err.code == 422
        assert "unless sendInitialEvents is provided" in json.loads(err.read())["message"]
    else:
        raise AssertionError("expected 422")
