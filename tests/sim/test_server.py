"""The server's own life: keep-alive, concurrent writers, and a stop that ends open watches."""

from __future__ import annotations

import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import EmulatedApiServer, FakeClock
from tests.sim.conftest import NS, workload


def test_keep_alive_serves_many_requests_on_one_connection(server: EmulatedApiServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for _ in range(50):
            connection.request("GET", "/api/v1/namespaces/default/pods")
            response = connection.getresponse()
            assert response.status == 200 and json.loads(response.read())["kind"] == "PodList"
    finally:
        connection.close()


def test_concurrent_writers_from_one_read_see_exactly_one_success(
    server: EmulatedApiServer, api: k8s.ApiClient
) -> None:
    """Optimistic concurrency: writers racing from the same resourceVersion; one wins, the rest get 409."""
    server.create(workload("Deployment", "web", replicas=1))
    apps = k8s.AppsV1Api(api)
    read = apps.read_namespaced_deployment_scale("web", NS)

    def write(replicas: int) -> int:
        body = k8s.V1Scale(
            metadata=k8s.V1ObjectMeta(name="web", resource_version=read.metadata.resource_version),
            spec=k8s.V1ScaleSpec(replicas=replicas),
        )
        try:
            apps.replace_namespaced_deployment_scale("web", NS, body)
        except ApiException as err:
            return int(err.status)
        return 200

    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(write, range(2, 10)))
    assert sorted(codes) == [200] + [409] * 7


def test_stop_ends_open_watches() -> None:
    srv = EmulatedApiServer(crds=[], clock=FakeClock()).start()
    ended = threading.Event()

    def watch_forever() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        try:
            connection.request("GET", "/api/v1/namespaces/default/configmaps?watch=true")
            connection.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass  # a closed connection ends the watch just as well
        finally:
            connection.close()
            ended.set()

    watcher = threading.Thread(target=watch_forever)
    watcher.start()
    deadline = time.monotonic() + 5  # the watch may still be connecting: poll until the server has seen it
    while not srv.audit.records(verb="watch") and time.monotonic() < deadline:
        ended.wait(0.01)
    assert srv.audit.records(verb="watch")
    srv.stop()
    assert ended.wait(5), "the watch outlived the server"
    watcher.join(5)


def test_an_emulator_bug_answers_500_instead_of_dropping_the_connection(
    server: EmulatedApiServer, api: k8s.ApiClient, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(server.operations, "get", broken)
    try:
        k8s.CoreV1Api(api).read_namespaced_pod("p", NS)
    except ApiException as err:
        assert err.status == 500
        assert json.loads(err.body)["message"] == "Internal error occurred: RuntimeError: boom"
    else:
        raise AssertionError("expected a 500")
    assert "RuntimeError: boom" in capsys.readouterr().err
