"""The fault injector: injected statuses, delays and dropped connections, none of which change state."""

from __future__ import annotations

import json
import urllib.request

import pytest
import urllib3
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import EmulatedApiServer
from tests.sim.conftest import NS, Raw, reported, status_of, workload

SCALE = r"/deployments/web/scale$"


@pytest.fixture
def apps(server: EmulatedApiServer, api: k8s.ApiClient) -> k8s.AppsV1Api:
    server.create(workload("Deployment", "web", replicas=2))
    return k8s.AppsV1Api(api)


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        pytest.param(409, "Conflict", id="conflict"),
        pytest.param(429, "TooManyRequests", id="throttled"),
        pytest.param(500, "InternalError", id="internal error"),
        pytest.param(503, "ServiceUnavailable", id="unavailable"),
    ],
)
def test_injected_status_leaves_state_untouched(
    server: EmulatedApiServer, apps: k8s.AppsV1Api, code: int, reason: str
) -> None:
    before = server.get("apps/v1", "Deployment", "web")
    server.faults.add(SCALE, method="PATCH", status=code, retry_after_seconds=2 if code == 429 else None)
    with pytest.raises(ApiException) as caught:
        apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 5}})
    assert caught.value.status == code
    assert status_of(caught.value)["reason"] == reason
    assert status_of(caught.value)["code"] == code
    assert server.get("apps/v1", "Deployment", "web") == before
    assert apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 5}}).spec.replicas == 5


def test_throttling_carries_retry_after(apps: k8s.AppsV1Api, server: EmulatedApiServer) -> None:
    server.faults.add(SCALE, status=429, retry_after_seconds=3)
    with pytest.raises(ApiException) as caught:
        apps.read_namespaced_deployment_scale("web", NS)
    assert caught.value.headers["Retry-After"] == "3"
    assert status_of(caught.value)["details"] == {"retryAfterSeconds": 3}


def test_injected_conflict_names_the_object(apps: k8s.AppsV1Api, server: EmulatedApiServer) -> None:
    server.faults.add(SCALE, method="PUT", status=409)
    scale = apps.read_namespaced_deployment_scale("web", NS)
    with pytest.raises(ApiException) as caught:
        apps.replace_namespaced_deployment_scale("web", NS, scale)
    assert status_of(caught.value)["message"].startswith('Operation cannot be fulfilled on deployments.apps "web"')


def test_fault_counts_down_and_matches_only_its_method(apps: k8s.AppsV1Api, server: EmulatedApiServer) -> None:
    fault = server.faults.add(SCALE, method="PATCH", status=500, times=2)
    assert apps.read_namespaced_deployment_scale("web", NS).spec.replicas == 2  # GET is not matched
    for _ in range(2):
        with pytest.raises(ApiException):
            apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 3}})
    assert apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 3}}).spec.replicas == 3
    assert fault.hits == 2 and server.faults.active() == []


def test_glob_patterns(apps: k8s.AppsV1Api, server: EmulatedApiServer) -> None:
    server.faults.add("/apis/apps/v1/namespaces/*/deployments/*", glob=True, status=503, times=None)
    with pytest.raises(ApiException) as caught:
        apps.read_namespaced_deployment("web", NS)
    assert caught.value.status == 503
    server.faults.clear()
    assert apps.read_namespaced_deployment("web", NS).metadata.name == "web"


def test_delay_outlasts_a_client_timeout_without_changing_state(apps: k8s.AppsV1Api, server: EmulatedApiServer) -> None:
    server.faults.add(SCALE, method="PATCH", delay_seconds=1.0, status=503)
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 9}}, _request_timeout=0.2)
    assert server.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 2


def test_delay_alone_serves_the_request_late(apps: k8s.AppsV1Api, server: EmulatedApiServer) -> None:
    server.faults.add(SCALE, method="PATCH", delay_seconds=0.2)
    assert apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 4}}).spec.replicas == 4
    (record,) = server.audit.records(verb="patch", subresource="scale")
    assert record.injected and record.code == 200


def test_dropped_connection(apps: k8s.AppsV1Api, server: EmulatedApiServer) -> None:
    server.faults.add(SCALE, method="PATCH", drop=True)
    with pytest.raises(urllib3.exceptions.ProtocolError):
        apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 7}})
    assert server.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 2


def test_faults_over_http_for_other_processes(apps: k8s.AppsV1Api, server: EmulatedApiServer, raw: Raw) -> None:
    code, fault = raw.request("POST", "/_emulator/faults", {"path": SCALE, "method": "GET", "status": 500})
    assert code == 201 and fault["remaining"] == 1
    assert raw.request("GET", "/_emulator/faults")[1]["items"][0]["status"] == 500
    with pytest.raises(ApiException):
        apps.read_namespaced_deployment_scale("web", NS)
    request = urllib.request.Request(server.url + "/_emulator/faults", method="DELETE")
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.loads(response.read()) == {"items": []}


def test_query_pattern_narrows_a_fault_to_watches(apps: k8s.AppsV1Api, server: EmulatedApiServer, raw: Raw) -> None:
    server.faults.add(r"/deployments$", query=r"watch=(true|1)", status=503)
    assert apps.list_namespaced_deployment(NS).items[0].metadata.name == "web"
    code, body = raw.request("GET", f"/apis/apps/v1/namespaces/{NS}/deployments?watch=true&timeoutSeconds=1")
    assert (code, body["reason"]) == (503, "ServiceUnavailable")


def test_a_fault_with_a_probability_answers_about_that_share_and_passes_the_rest_on() -> None:
    from autoscaler.sim.apiserver.faults import FaultInjector

    injector = FaultInjector(seed=7)
    fault = injector.add(SCALE, status=500, times=None, probability=0.3)
    answered = sum(injector.take("PUT", "/apis/apps/v1/namespaces/default/deployments/web/scale") is fault
                   for _ in range(2000))  # fmt: skip
    assert 500 <= answered <= 700, answered  # 600 expected; the seed makes the count repeatable
    assert fault.hits == answered and injector.active() == [fault], "times=None: never used up"
    again = FaultInjector(seed=7)
    again.add(SCALE, status=500, times=None, probability=0.3)
    assert sum(again.take("PUT", "/apis/apps/v1/namespaces/default/deployments/web/scale") is not None
               for _ in range(2000)) == answered  # fmt: skip


@pytest.mark.parametrize("probability", [pytest.param(0.0, id="zero"), pytest.param(1.5, id="above one")])
def test_a_probability_outside_0_to_1_is_refused(probability: float) -> None:
    from autoscaler.sim.apiserver.faults import FaultInjector

    with pytest.raises(ValueError, match="probability"):
        FaultInjector().add(SCALE, status=500, probability=probability)


def test_a_probability_is_taken_over_http(server: EmulatedApiServer) -> None:
    body = json.dumps({"path": SCALE, "status": 500, "times": None, "probability": 0.5}).encode()
    request = urllib.request.Request(f"{server.url}/_emulator/faults", data=body, method="POST")
    urllib.request.urlopen(request, timeout=5).close()
    assert [f.probability for f in server.faults.active()] == [0.5]


def test_a_client_gone_mid_answer_is_not_reported_as_a_server_error(server: EmulatedApiServer) -> None:
    """A client that closed its connection before the answer (it gave up on a slow or faulty request) prints
    nothing; any other failure of a request is still printed, as socketserver does."""
    httpd = server._httpd
    assert httpd is not None
    for error, printed in ((BrokenPipeError(32, "Broken pipe"), False), (ValueError("a bug"), True)):
        text = reported(httpd, error)
        assert ("ValueError: a bug" in text) == printed, text
        assert ("Broken pipe" in text) is False


def test_a_connection_aborted_mid_request_prints_nothing(
    server: EmulatedApiServer, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A connection the client side destroyed while the server writes (`ss -K` on a watch: ECONNABORTED) is a
    client gone, like a broken pipe or a reset, not a bug of the emulator's: no traceback."""
    import contextlib
    import http.client

    from autoscaler.sim.apiserver import handler

    def aborted(*args: object, **kwargs: object) -> None:
        raise ConnectionAbortedError(103, "Software caused connection abort")

    monkeypatch.setattr(handler.Handler, "_dispatch", aborted)
    with contextlib.suppress(http.client.HTTPException, OSError):
        urllib.request.urlopen(f"{server.url}/api/v1/namespaces/{NS}/pods", timeout=5).close()
    assert "Traceback" not in capfd.readouterr().err
