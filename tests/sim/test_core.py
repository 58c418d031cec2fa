"""core/v1 pods, configmaps and events, and events.k8s.io/v1, through the official client."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import NS, status_of


def _pod(name: str, **labels: str) -> k8s.V1Pod:
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name=name, labels=labels),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="app", image="example/app:1")]),
    )


@pytest.fixture
def pods(api: k8s.ApiClient) -> k8s.CoreV1Api:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_pod(NS, _pod("web-1", app="web", track="stable"))
    core.create_namespaced_pod(NS, _pod("web-2", app="web", track="canary"))
    core.create_namespaced_pod(NS, _pod("api-1", app="api"))
    return core


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        pytest.param("app=web", ["web-1", "web-2"], id="equals"),
        pytest.param("app==web,track!=canary", ["web-1"], id="double equals and not equals"),
        pytest.param("app in (api,web),track notin (stable)", ["api-1", "web-2"], id="in and notin"),
        pytest.param("track", ["web-1", "web-2"], id="exists"),
        pytest.param("!track", ["api-1"], id="does not exist"),
    ],
)
def test_list_pods_by_label_selector(pods: k8s.CoreV1Api, selector: str, names: list[str]) -> None:
    listed = pods.list_namespaced_pod(NS, label_selector=selector)
    assert sorted(p.metadata.name for p in listed.items) == names


def test_invalid_label_selector_is_bad_request(pods: k8s.CoreV1Api) -> None:
    with pytest.raises(ApiException) as caught:
        pods.list_namespaced_pod(NS, label_selector="app in web")
    assert caught.value.status == 400
    assert status_of(caught.value)["reason"] == "BadRequest"


def test_created_pod_is_pending_with_defaults(pods: k8s.CoreV1Api) -> None:
    """A pod created through the API has no kubelet: it stays Pending, its given status dropped."""
    pod = pods.read_namespaced_pod("web-1", NS)
    assert pod.status.phase == "Pending"
    assert pod.status.qos_class == "BestEffort"
    assert pod.spec.restart_policy == "Always"
    assert pod.metadata.uid and pod.metadata.creation_timestamp


def test_pod_status_is_written_through_the_status_subresource(pods: k8s.CoreV1Api) -> None:
    pods.patch_namespaced_pod_status("web-1", NS, {"status": {"phase": "Running"}})
    assert pods.read_namespaced_pod("web-1", NS).status.phase == "Running"
    listed = pods.list_namespaced_pod(NS, field_selector="status.phase=Running")
    assert [p.metadata.name for p in listed.items] == ["web-1"]


def test_list_pages_with_limit_and_continue(pods: k8s.CoreV1Api) -> None:
    first = pods.list_namespaced_pod(NS, limit=2)
    assert len(first.items) == 2 and first.metadata._continue
    assert first.metadata.remaining_item_count == 1
    rest = pods.list_namespaced_pod(NS, limit=2, _continue=first.metadata._continue)
    assert [p.metadata.name for p in first.items + rest.items] == ["api-1", "web-1", "web-2"]
    assert rest.metadata._continue is None
    assert rest.metadata.resource_version == first.metadata.resource_version


def test_configmaps_round_trip(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    body = k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="settings"), data={"a": "1"})
    core.create_namespaced_config_map(NS, body)
    core.patch_namespaced_config_map("settings", NS, {"data": {"b": "2"}})
    assert core.read_namespaced_config_map("settings", NS).data == {"a": "1", "b": "2"}
    core.delete_namespaced_config_map("settings", NS)
    assert core.list_namespaced_config_map(NS).items == []


def _core_event(name: str, involved: str, kind: str = "Deployment") -> k8s.CoreV1Event:
    return k8s.CoreV1Event(
        metadata=k8s.V1ObjectMeta(name=name),
        involved_object=k8s.V1ObjectReference(kind=kind, name=involved, namespace=NS, api_version="apps/v1"),
        reason="SuccessfulRescale",
        message="New size: 3",
        type="Normal",
        count=1,
        first_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        last_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        source=k8s.V1EventSource(component="autoscaler"),
    )


def test_core_events_by_involved_object_field_selector(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_event(NS, _core_event("web.1", "web"))
    core.create_namespaced_event(NS, _core_event("api.1", "api"))
    core.create_namespaced_event(NS, _core_event("web.2", "web", kind="StatefulSet"))
    selector = f"involvedObject.name=web,involvedObject.namespace={NS},involvedObject.kind=Deployment"
    listed = core.list_namespaced_event(NS, field_selector=selector)
    assert [e.metadata.name for e in listed.items] == ["web.1"]


def test_events_v1_and_core_events_are_one_store(api: k8s.ApiClient) -> None:
    """An events.k8s.io Event is a core Event too, as in the real server: kubectl describe reads core/v1."""
    events = k8s.EventsV1Api(api)
    body = k8s.EventsV1Event(
        metadata=k8s.V1ObjectMeta(name="web.abc"),
        event_time=datetime(2026, 1, 1, tzinfo=UTC),
        reporting_controller="autoscaler.dev/controller",
        reporting_instance="autoscaler-0",
        action="Scale",
        reason="SuccessfulRescale",
        regarding=k8s.V1ObjectReference(kind="Deployment", name="web", namespace=NS, api_version="apps/v1"),
        note="New size: 3",
        type="Normal",
    )
    events.create_namespaced_event(NS, body)
    read = events.list_namespaced_event(NS, field_selector="regarding.name=web").items
    assert [(e.metadata.name, e.note, e.regarding.kind) for e in read] == [("web.abc", "New size: 3", "Deployment")]
    core = k8s.CoreV1Api(api).list_namespaced_event(NS, field_selector="involvedObject.name=web").items
    assert [(e.message, e.reporting_component, e.reason) for e in core] == [
        ("New size: 3", "autoscaler.dev/controller", "SuccessfulRescale")
    ]


def test_events_v1_requires_its_fields(api: k8s.ApiClient) -> None:
    body = k8s.EventsV1Event(metadata=k8s.V1ObjectMeta(name="bad"), event_time=datetime(2026, 1, 1, tzinfo=UTC))
    with pytest.raises(ApiException) as caught:
        k8s.EventsV1Api(api).create_namespaced_event(NS, body)
    assert caught.value.status == 422
    fields = {c["field"] for c in status_of(caught.value)["details"]["causes"]}
    assert fields == {"reportingController", "reportingInstance", "action", "reason"}


def test_generate_name(server: EmulatedApiServer, api: k8s.ApiClient) -> None:
    body = k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(generate_name="cfg-"))
    created = k8s.CoreV1Api(api).create_namespaced_config_map(NS, body)
    assert created.metadata.name.startswith("cfg-") and len(created.metadata.name) == 9
