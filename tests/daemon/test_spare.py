"""Sparing busy pods (scaleDown.podDeletionCost): the reconciler against the emulator sets every pod's
pod-deletion-cost from its per-pod metric before it lowers the replicas, the emulator's ReplicaSet removes the
least busy pods, and nothing about the costs ever stops a scale-down."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from structlog.testing import capture_logs

from autoscaler.core.deletion_cost import ANNOTATION
from autoscaler.kube.client import USER_AGENT, KubeClient
from autoscaler.metrics import Answer, Series, TransientError
from tests.daemon.helpers import (
    PAS,
    FakePrometheus,
    daemon,
    eventually,
    query_for,
    reader_for,
    resource_target,
    spec_doc,
)
from tests.kube.conftest import NS, Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
COST_QUERY = 'sum by (namespace, pod) (inflight_jobs{namespace="${namespace}"})'
NO_WINDOW = {"scaleDown": {"stabilizationWindowSeconds": 0}}


class BusyPrometheus(FakePrometheus):
    """Answers the scaling query with one value and the in-flight query with one series per pod."""

    def __init__(self) -> None:
        super().__init__()
        self.inflight: dict[str, float] = {}
        self.inflight_down = False

    def query(self, promql: str, *, time: datetime, budget_seconds: float, deadline_seconds: float) -> Answer:
        if "inflight_jobs" not in promql:
            return super().query(promql, time=time, budget_seconds=budget_seconds, deadline_seconds=deadline_seconds)
        self.queries.append(promql)
        if self.inflight_down:
            raise TransientError("connection refused", status=None)
        series = tuple(
            Series({"namespace": NS, "pod": pod}, repr(v), time.timestamp()) for pod, v in self.inflight.items()
        )
        return Answer("vector", series)


@pytest.fixture
def prom() -> BusyPrometheus:
    return BusyPrometheus()


def _worker(setup: Setup, *, replicas: int = 4) -> None:
    setup.workload("deployments", "web", replicas=replicas)
    doc = spec_doc("web", behavior=NO_WINDOW)
    doc["spec"]["scaleDown"] = {
        "podDeletionCost": {"metric": {"name": "inflight_jobs"}, "prometheus": {"query": COST_QUERY}}
    }
    setup.post(PAS, doc)


def _pods(setup: Setup) -> dict[str, str | None]:
    items = setup.get(f"/api/v1/namespaces/{NS}/pods?labelSelector=app%3Dweb")["items"]
    return {p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(ANNOTATION) for p in items}


def _ours(server: Any) -> list[Any]:
    return [r for r in server.audit.records() if r.user_agent.startswith(USER_AGENT) and r.method in ("PATCH", "PUT")]


def test_busy_pods_survive_a_scale_down(kube: KubeClient, setup: Setup, server: Any, prom: BusyPrometheus) -> None:
    _worker(setup)
    names = sorted(_pods(setup))
    prom.inflight = dict(zip(names, [5, 0, 9, 1], strict=True))
    prom.values[query_for("web")] = 200  # 100 per replica: 2 replicas
    with daemon(kube, reader_for(prom)) as d:
        eventually(lambda: len(d.pods.pods(NS, "app=web")) == 4)
        server.audit.clear()
        with capture_logs() as logs:
            (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0).outcomes
        assert outcome.error == "" and outcome.wrote_scale and outcome.decision is not None
        assert outcome.decision.desired_replicas == 2
        writes = [(r.resource, r.subresource, r.name) for r in _ours(server) if r.resource != "prometheusautoscalers"]
        # Every pod's cost first, then the scale: the ReplicaSet controller sees the costs when it picks.
        assert sorted(writes[:4]) == sorted(("pods", "", name) for name in names)
        assert writes[4:] == [("deployments", "scale", "web")]
        assert [e for e in logs if e["event"] == "pod_deletion_costs"] == [
            {"event": "pod_deletion_costs", "log_level": "info", "target": f"{NS}/web", "patched": 4,
             "unchanged": 0, "unsampled": 0, "failed": 0, "error": ""}
        ]  # fmt: skip
        # The emulator's ReplicaSet removed the two least busy pods (costs 0 and 1).
        assert _pods(setup) == {names[0]: "5", names[2]: "9"}

        # The next scale-down patches only the pod whose value changed, and the busier one stays.
        prom.inflight = {names[0]: 5, names[2]: 3}
        prom.values[query_for("web")] = 100
        eventually(lambda: len(d.pods.pods(NS, "app=web")) == 2 and d.replicas("web") == 2)
        eventually(lambda: all(p.deletion_cost is not None for p in d.pods.pods(NS, "app=web")))
        server.audit.clear()
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0 + timedelta(minutes=1)).outcomes
        assert outcome.decision is not None and outcome.decision.desired_replicas == 1
        pod_patches = [r.name for r in _ours(server) if r.resource == "pods"]
        assert pod_patches == [names[2]]
        assert _pods(setup) == {names[0]: "5"}


def test_no_costs_are_written_without_a_scale_down(
    kube: KubeClient, setup: Setup, server: Any, prom: BusyPrometheus
) -> None:
    _worker(setup, replicas=2)
    prom.inflight = {name: 3 for name in _pods(setup)}
    prom.values[query_for("web")] = 400  # a scale-up to 4
    with daemon(kube, reader_for(prom)) as d:
        eventually(lambda: len(d.pods.pods(NS, "app=web")) == 2)
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0).outcomes
        assert outcome.decision is not None and outcome.decision.desired_replicas == 4
        assert [r for r in _ours(server) if r.resource == "pods"] == []
        assert any("inflight_jobs" in q for q in prom.queries)  # read in the tick's one metric pass all the same


@pytest.mark.parametrize(
    ("break_it", "level", "failed", "error"),
    [
        pytest.param("metric", "warning", 0, "connection refused", id="the per-pod metric fails: nothing patched"),
        pytest.param("patch", "warning", 4, "(500 InternalError)", id="every patch fails"),
    ],
)
def test_a_failure_of_the_costs_never_blocks_the_scale_down(
    kube: KubeClient,
    setup: Setup,
    server: Any,
    prom: BusyPrometheus,
    break_it: str,
    level: str,
    failed: int,
    error: str,
) -> None:
    _worker(setup)
    names = sorted(_pods(setup))
    prom.inflight = dict(zip(names, [5, 0, 9, 1], strict=True))
    prom.values[query_for("web")] = 200
    if break_it == "metric":
        prom.inflight_down = True
    else:
        server.faults.add(r"/api/v1/namespaces/[^/]+/pods/", method="PATCH", status=500, times=None)
    with daemon(kube, reader_for(prom), sleep=lambda _: None) as d:  # no real waits between the retries
        eventually(lambda: len(d.pods.pods(NS, "app=web")) == 4)
        with capture_logs() as logs:
            (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0).outcomes
        assert outcome.error == "" and outcome.wrote_scale
        assert outcome.decision is not None and outcome.decision.desired_replicas == 2
        (line,) = [e for e in logs if e["event"] == "pod_deletion_costs"]
        assert (line["log_level"], line["failed"]) == (level, failed)
        assert error in line["error"]
        assert len(_pods(setup)) == 2 and set(_pods(setup).values()) == {None}
