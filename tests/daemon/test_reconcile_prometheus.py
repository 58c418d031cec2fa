"""The reconciler with a real Prometheus (the metric layer's session fixture) and the emulator."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from autoscaler.kube.client import KubeClient
from autoscaler.metrics import MetricsReader, MetricsSettings, SourceRegistry
from tests.daemon.helpers import PAS, daemon, resource_target, spec_doc
from tests.kube.conftest import NS, Setup
from tests.metrics.conftest import Push
from tests.metrics.server import PrometheusServer


def test_scales_up_on_load_read_from_prometheus(
    kube: KubeClient, setup: Setup, server: Any, prometheus: PrometheusServer, push: Push, base_time: datetime
) -> None:
    setup.workload("deployments", "rp-web", replicas=4)
    setup.post(PAS, spec_doc("rp-web", target="rp-web"))
    samples = [(base_time - timedelta(seconds=s), 700) for s in (45, 30, 15, 0)]
    push({"__name__": "queue_depth", "app": "rp-web"}, samples)
    settings = MetricsSettings.model_validate({"servers": {"main": {"url": prometheus.url}}})
    with MetricsReader(settings, registry=SourceRegistry.builtin()) as reader, daemon(kube, reader) as d:
        d.wait_replicas("rp-web", 4)
        report = d.reconciler.reconcile([resource_target(setup, "rp-web")], now=base_time)
        outcome = report.outcomes[0]
        assert outcome.error == "", outcome.error
        assert outcome.decision is not None and outcome.decision.desired_replicas == 7, outcome.decision
        assert outcome.wrote_scale and report.metric_queries == 1
        d.wait_replicas("rp-web", 7)
    status = setup.get(f"{PAS}/rp-web")["status"]
    assert status["targets"] == "175/100 (avg)" and status["reference"] == "Deployment/rp-web"
    assert setup.get(f"/apis/apps/v1/namespaces/{NS}/deployments/rp-web")["spec"]["replicas"] == 7
