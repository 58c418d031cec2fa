"""A scale write that fails after its retry budget (the emulator's fault injector answers 500 to every attempt):
the HPA's FailedRescale, AbleToScale False FailedUpdateScale, nothing else broken, and the next tick succeeds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from autoscaler.core.types import Settings
from autoscaler.daemon.reconciler import Reconciler
from autoscaler.kube.events import EventRecorder
from autoscaler.kube.retry import RetryBudget
from autoscaler.kube.scale import ScaleClient
from autoscaler.kube.status import StatusWriter
from tests.daemon.helpers import PAS, FakePrometheus, daemon, query_for, reader_for, resource_target, spec_doc
from tests.daemon.test_reconcile import assert_replays_to
from tests.kube.conftest import NS, Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SCALE = rf"/apis/apps/v1/namespaces/{NS}/deployments/web/scale$"


def _events(setup: Setup, reason: str) -> list[dict[str, Any]]:
    return [e for e in setup.get(f"/api/v1/namespaces/{NS}/events")["items"] if e["reason"] == reason]


def test_a_failed_scale_write_is_failed_rescale_and_the_next_tick_succeeds(
    kube: Any, setup: Setup, server: Any
) -> None:
    setup.workload("deployments", "web", replicas=4)
    setup.post(PAS, spec_doc("web"))
    setup.workload("deployments", "api", replicas=4)
    setup.post(PAS, spec_doc("api", target="api"))
    prom = FakePrometheus()
    prom.values[query_for("web")] = 800
    prom.values[query_for("api")] = 600
    budget = RetryBudget()
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        d.wait_replicas("api", 4)
        reconciler = Reconciler(
            settings=Settings(),
            reader=reader_for(prom),
            pods=d.pods,
            workloads=d.workloads,
            scales=ScaleClient(kube, budget=budget, sleep=lambda _: None),  # the backoff, without the wait
            events=EventRecorder(kube),
            status=StatusWriter(kube),
            states=d.states,
        )
        fault = server.faults.add(SCALE, method="PUT", status=500, times=budget.attempts)

        def tick(seconds: int) -> Any:
            targets = [resource_target(setup, "web"), resource_target(setup, "api")]
            return reconciler.reconcile(targets, now=T0 + timedelta(seconds=seconds)).outcomes

        web, api = tick(0)
        assert fault.hits == budget.attempts  # every attempt of the budget was answered 500
        assert not web.wrote_scale and web.error_type == "kube" and web.wrote_status
        assert web.decision is not None and web.decision.error is not None
        assert web.decision.error.startswith("failed to rescale Deployment/web: ")
        assert d.replicas("web") == 4
        assert (
            web.snapshot is not None and web.snapshot.json()["scaleWriteError"] == web.decision.error.split(": ", 1)[1]
        )
        assert_replays_to(web.snapshot, web.decision)  # FailedRescale, as the daemon recorded it
        assert api.snapshot is not None
        assert "scaleWriteError" not in api.snapshot.json() and "dryRun" not in api.snapshot.json()
        assert_replays_to(api.snapshot, api.decision)
        status = setup.get(f"{PAS}/web")["status"]
        able = next(c for c in status["conditions"] if c["type"] == "AbleToScale")
        assert (able["status"], able["reason"]) == ("False", "FailedUpdateScale")
        assert "lastScaleTime" not in status and status["behaviorState"]["scaleUpEvents"] == []
        (failed,) = _events(setup, "FailedRescale")
        assert failed["type"] == "Warning" and failed["message"].startswith("New size: 8; reason: ")
        assert not [e for e in _events(setup, "SuccessfulRescale") if e["involvedObject"]["name"] == "web"]
        # Nothing else broken: the other target scaled in the same tick.
        assert api.error == "" and api.wrote_scale
        d.wait_replicas("api", 6)

        web, _ = tick(15)  # the fault is spent: the next tick writes
        assert web.error == "" and web.wrote_scale
        d.wait_replicas("web", 8)
        status = setup.get(f"{PAS}/web")["status"]
        able = next(c for c in status["conditions"] if c["type"] == "AbleToScale")
        assert (able["status"], able["reason"]) == ("True", "SucceededRescale")
        assert status["desiredReplicas"] == 8 and status["lastScaleTime"] == "2026-03-01T12:00:15Z"
        assert len(_events(setup, "FailedRescale")) == 1
