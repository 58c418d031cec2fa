"""The HTTP endpoints over a real socket: /metrics, /healthz, /readyz, /debug/snapshots, 404."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from datetime import UTC, datetime

import pytest

from autoscaler.daemon.app import Daemon
from autoscaler.daemon.observe import Observer
from autoscaler.daemon.recorder import FlightRecorder
from autoscaler.daemon.server import Check, Endpoints, HttpServer, address_family
from tests.daemon.fakes import FakeClock, FakeReconciler, StaticSource, target


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_endpoints_of_a_daemon() -> None:
    mono = Monotonic()
    daemon = Daemon(
        reconciler=FakeReconciler(), sources=[StaticSource([target("web")])], observer=Observer(),
        recorder=FlightRecorder(3), tick_seconds=1.0, shutdown_grace_seconds=1.0, http_address="127.0.0.1:0",
        clock=FakeClock(datetime(2026, 3, 1, tzinfo=UTC)), monotonic=mono,
    )  # fmt: skip
    assert daemon.http is not None
    daemon.http.start()
    try:
        url = daemon.http.url
        assert get(url + "/readyz")[0] == 503
        daemon.tick()
        assert get(url + "/healthz") == (200, "ok: 1 ticks, the last 0.0s ago\n")
        assert get(url + "/readyz") == (200, "ok: running (no leader election)\n")
        code, body = get(url + "/metrics")
        assert code == 200 and 'autoscaler_target_replicas{kind="desired",name="web",namespace="shop"} 5.0' in body
        code, body = get(url + "/debug/snapshots?target=shop/web")
        assert code == 200 and json.loads(body)["shop/web"][0]["decision"]["desiredReplicas"] == 5
        for query, answer in [
            ("garbage", (400, "target must be namespace/name, not 'garbage'\n")),
            ("shop/", (400, "target must be namespace/name, not 'shop/'\n")),
            ("a/b/c", (400, "target must be namespace/name, not 'a/b/c'\n")),
            ("shop/nope", (404, "no target shop/nope: not among the specs this daemon runs\n")),
        ]:
            assert get(url + "/debug/snapshots?target=" + query) == answer, query
        assert get(url + "/nothing")[0] == 404
        mono.now += 3.5  # more than 3 ticks (+ the last tick's 0 s) without a tick
        code, body = get(url + "/healthz")
        assert code == 503 and body.startswith("not ticking: the last tick ended 3.5s ago")
        code, body = get(url + "/readyz")
        assert code == 503 and "not ticking" in body
    finally:
        daemon.http.stop()


def test_a_failing_answer_is_a_500_and_the_server_keeps_serving() -> None:
    def broken() -> Check:
        raise RuntimeError("bug")

    server = HttpServer(
        "127.0.0.1:0",
        Endpoints(metrics=lambda: (b"", "text/plain"), healthz=broken, readyz=lambda: Check(True, "ok"),
                  snapshots=lambda target: {}),
    )  # fmt: skip
    server.start()
    try:
        assert get(server.url + "/healthz")[0] == 500
        assert get(server.url + "/readyz") == (200, "ok\n")
    finally:
        server.stop()


@pytest.mark.parametrize("text", ["8080", "host:port", "127.0.0.1:70000"])
def test_a_bad_listen_address_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not host:port"):
        HttpServer(text, Endpoints(lambda: (b"", ""), lambda: Check(True, ""), lambda: Check(True, ""), lambda t: {}))


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize(
    ("host", "family"),
    [
        pytest.param("::1", socket.AF_INET6, id="ipv6-loopback"),
        pytest.param("::", socket.AF_INET6, id="ipv6-any"),
        pytest.param("127.0.0.1", socket.AF_INET, id="ipv4"),
        pytest.param("0.0.0.0", socket.AF_INET, id="ipv4-any"),
        pytest.param("localhost", socket.AF_INET, id="name"),
    ],
)
def test_the_address_family_follows_the_host(host: str, family: socket.AddressFamily) -> None:
    assert address_family(host) == family


def test_an_ipv6_listen_address_serves() -> None:
    if not _ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback (the family choice is tested above)")
    server = HttpServer(
        "[::1]:0",
        Endpoints(metrics=lambda: (b"", "text/plain"), healthz=lambda: Check(True, "ok"),
                  readyz=lambda: Check(True, "ok"), snapshots=lambda target: {}),
    )  # fmt: skip
    server.start()
    try:
        host, port = server.address
        assert host == "::1" and server.url == f"http://[::1]:{port}"
        assert get(server.url + "/healthz") == (200, "ok\n")
    finally:
        server.stop()
