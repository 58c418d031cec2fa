"""A file spec's stored state that cannot be used: unreadable (the target starts afresh, logged once) or
unreachable for a moment (a `kube` outcome without a decision, and the next tick continues from it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from structlog.testing import capture_logs

from autoscaler.kube.retry import RetryBudget
from autoscaler.kube.state import state_name
from tests.daemon.helpers import STATE_NS, FakePrometheus, daemon, file_target, query_for, reader_for, spec_doc
from tests.kube.conftest import NS, Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
BEHAVIOR = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}
}
CONFIGMAPS = f"/api/v1/namespaces/{STATE_NS}/configmaps"


def _stored(setup: Setup) -> Any:
    return setup.get(f"{CONFIGMAPS}/{state_name(NS, 'web')}")["data"]["status"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("{not json", id="not-json"),
        pytest.param("[1, 2]", id="not-an-object"),
        pytest.param('{"behaviorState": {"recommendations": [{"replicas": "2"}]}}', id="bad-behavior-state"),
    ],
)
def test_an_unreadable_stored_state_is_logged_once_and_the_target_starts_afresh(
    kube: Any, setup: Setup, server: Any, text: str
) -> None:
    setup.workload("deployments", "web", replicas=4)
    setup.post(
        CONFIGMAPS, {"metadata": {"name": state_name(NS, "web"), "namespace": STATE_NS}, "data": {"status": text}}
    )
    doc = spec_doc("web")
    prom = FakePrometheus()
    prom.values[query_for("web")] = 800
    with daemon(kube, reader_for(prom)) as d, capture_logs() as logs:
        d.wait_replicas("web", 4)
        for seconds in (0, 15, 30):
            (outcome,) = d.reconciler.reconcile([file_target(doc)], now=T0 + timedelta(seconds=seconds)).outcomes
            assert outcome.error == "" and outcome.decision is not None, outcome.error
        d.wait_replicas("web", 8)
    assert [e["event"] for e in logs if e["event"].startswith("stored_status")] == ["stored_status_unreadable"]
    assert not [e for e in logs if e["event"] == "target_failed"]
    assert json.loads(_stored(setup))["desiredReplicas"] == 8  # the next save replaced it


def test_an_unreachable_stored_state_holds_the_target_for_that_tick(kube: Any, setup: Setup, server: Any) -> None:
    """2 pods per 60 s: a scale-up stored at 0 s must still count at 30 s after the reconciler lost its memory,
    even though the first try to read it back failed (deciding on an empty memory would scale 4 -> 6 at once)."""
    setup.workload("deployments", "web", replicas=2)
    doc = spec_doc("web", behavior=BEHAVIOR)
    prom = FakePrometheus()
    prom.values[query_for("web")] = 900
    with daemon(kube, reader_for(prom), sleep=lambda _: None) as d, capture_logs() as logs:
        d.wait_replicas("web", 2)
        assert d.reconciler.reconcile([file_target(doc)], now=T0).outcomes[0].wrote_scale
        d.wait_replicas("web", 4)
        d.reconciler.forget()
        fault = server.faults.add(
            rf"{CONFIGMAPS}/{state_name(NS, 'web')}$", method="GET", status=503, times=RetryBudget().attempts
        )
        (outcome,) = d.reconciler.reconcile([file_target(doc)], now=T0 + timedelta(seconds=20)).outcomes
        assert fault.hits == RetryBudget().attempts
        assert outcome.error_type == "kube" and outcome.decision is None and not outcome.wrote_scale
        assert outcome.error.startswith("stored state could not be read: ")
        assert d.replicas("web") == 4
        (outcome,) = d.reconciler.reconcile([file_target(doc)], now=T0 + timedelta(seconds=30)).outcomes
        assert outcome.error == "" and outcome.decision is not None
        assert outcome.decision.desired_replicas == 4, outcome.decision.summary  # the stored event still counts
    assert not [e for e in logs if e["event"] == "target_failed"]
    assert [e["event"] for e in logs if e["event"].startswith("stored_status")] == ["stored_status_unreachable"]
