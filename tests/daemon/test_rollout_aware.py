"""Rollout-aware counting against the emulator's rollouts: a Deployment mid-rollout with a surge pod that is
not ready yet, decided by the reconciler as the HPA would (it locks the surge in, kubernetes/kubernetes#72775)
and with `rolloutAware: true` (it keeps the count)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.kube.client import KubeClient
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
from tests.daemon.test_reconcile import assert_replays_to
from tests.kube.conftest import NS, Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NS}/deployments/web"


def _mid_rollout(setup: Setup) -> None:
    """10 ready pods of revision 1, and one surge pod of revision 2 that will not be ready for an hour."""
    setup.workload("deployments", "web", replicas=10)
    setup.patch(
        DEPLOYMENT,
        {
            "metadata": {"annotations": {"sim.autoscaler.dev/ready-delay-seconds": "3600"}},
            "spec": {
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "template": {"spec": {"containers": [{"name": "app", "image": "example/app:2"}]}},
            },
        },
    )


@pytest.mark.parametrize(
    ("aware", "desired", "note"),
    [
        pytest.param(False, 11, "", id="the HPA writes spec.replicas + surge: 1000 / (100 x 11) is within tolerance"),
        pytest.param(True, 10, "rollout-aware: 11 live pods for spec.replicas 10 (1 surge)", id="rollout-aware"),
    ],
)
def test_a_surge_pod_is_not_locked_in(
    kube: KubeClient, setup: Setup, server: Any, aware: bool, desired: int, note: str
) -> None:
    _mid_rollout(setup)
    doc = spec_doc("web", behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})
    doc["spec"]["maxReplicas"] = 20
    if aware:
        doc["spec"]["rolloutAware"] = True
    setup.post(PAS, doc)
    prom = FakePrometheus()
    prom.values[query_for("web")] = 1000  # 100 per replica: exactly 10 replicas' worth
    with daemon(kube, reader_for(prom)) as d:
        eventually(lambda: len(d.pods.pods(NS, "app=web")) == 11)
        cached = d.workloads.scale(NS, "Deployment", "web")
        eventually(
            lambda: (c := d.workloads.scale(NS, "Deployment", "web")) is not None and c.scale.status_replicas == 11
        )
        assert cached is not None and cached.scale.spec_replicas == 10
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0).outcomes
        assert outcome.decision is not None and outcome.error == ""
        assert outcome.decision.desired_replicas == desired
        assert note in outcome.decision.summary
        assert_replays_to(outcome.snapshot, outcome.decision)  # the snapshot carries what the rule reads
        d.wait_replicas("web", desired)
