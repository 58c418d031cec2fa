"""The real `autoscaler run` spares busy pods: before it lowers a Deployment's replicas it sets each pod's
pod-deletion-cost from a per-pod metric that a real Prometheus scrapes, and the emulator's ReplicaSet
removes the idle pods."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from autoscaler.core.deletion_cost import ANNOTATION
from autoscaler.kube.client import USER_AGENT
from tests.e2e.conftest import Stack, spec_document, write_spec
from tests.e2e.stack import scale_writes, wait_for
from tests.sim.conftest import NS

COST_QUERY = 'sum by (namespace, pod) (inflight_jobs{namespace="${namespace}"})'


class InflightExporter:
    """A per-pod `inflight_jobs` gauge on its own /metrics, as a worker's exporter would publish it."""

    def __init__(self) -> None:
        self.values: dict[str, float] = {}
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                lines = ["# TYPE inflight_jobs gauge"] + [
                    f'inflight_jobs{{namespace="{NS}",pod="{pod}"}} {value}' for pod, value in exporter.values.items()
                ]
                body = ("\n".join(lines) + "\n").encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def exporter(stack: Stack) -> Iterator[InflightExporter]:
    found = InflightExporter()
    stack.prometheus.scrape(f"127.0.0.1:{stack.generator.port}", found.address)
    try:
        yield found
    finally:
        stack.prometheus.scrape(f"127.0.0.1:{stack.generator.port}")  # the session's own target list again
        found.close()


def _pods(stack: Stack, name: str) -> dict[str, str | None]:
    return {
        p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(ANNOTATION)
        for p in stack.emulator.list("v1", "Pod", namespace=NS, label_selector=f"app={name}")
        if not p["metadata"].get("deletionTimestamp")
    }


def test_busy_pods_survive_a_scale_down(stack: Stack, exporter: InflightExporter) -> None:
    demand = stack.deploy("spare", replicas=4, load=40)  # 10 requests/s per pod: at target
    names = sorted(_pods(stack, "spare"))
    busy = {names[1]: 8, names[3]: 5}
    exporter.values = {name: busy.get(name, 0) for name in names}
    cost = {"podDeletionCost": {"metric": {"name": "inflight_jobs"}, "prometheus": {"query": COST_QUERY}}}
    write_spec(stack.tmp / "specs", "spare", spec_document("spare", window=2, scaleDown=cost))
    wait_for(
        lambda: len(stack.prometheus.query(f'inflight_jobs{{namespace="{NS}"}}')) == 4,
        deadline_seconds=30,
        what="the in-flight series in Prometheus",
    )
    daemon, _ = stack.daemon("spare", stack.tmp / "specs")
    daemon.start()
    try:
        wait_for(
            lambda: [d for d in daemon.events("decision", target=f"{NS}/spare") if d.get("metrics")],
            deadline_seconds=30,
            what="a decision with a metric reading",
        )
        assert stack.replicas("spare") == 4
        demand.value = 20  # 5 requests/s per pod: 2 pods are enough
        wait_for(lambda: stack.replicas("spare") == 2, deadline_seconds=40, what="the scale-down to 2")
        wait_for(lambda: len(_pods(stack, "spare")) == 2, deadline_seconds=10, what="two pods left")
        assert _pods(stack, "spare") == {names[1]: "8", names[3]: "5"}, daemon.tail()
        lines = daemon.events("pod_deletion_costs", target=f"{NS}/spare")
        assert lines and lines[0]["patched"] == 4 and lines[0]["failed"] == 0, lines
        # The costs were written before the first scale-down.
        ours = [r for r in stack.emulator.audit.records(namespace=NS) if r.user_agent.startswith(USER_AGENT)]
        first_down = min(w.time for w in scale_writes([r for r in ours if r.name == "spare"]))
        patched = [r for r in ours if r.resource == "pods" and r.verb == "patch" and 200 <= r.code < 300]
        assert len({r.name for r in patched}) == 4 and all(r.time <= first_down for r in patched)
    finally:
        daemon.terminate()
