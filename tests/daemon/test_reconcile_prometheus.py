"""The reconciler with a real Prometheus (the metric layer's session fixture) and the emulator."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from autoscaler.kube.client import KubeClient
from autoscaler.metrics import MetricsReader, MetricsSettings, SourceRegistry
from tests.daemon.helpers import PAS, daemon, resource_target, spec_doc
from tests.kube.conftest import NS, Setup
from tests.metrics.conftest import Push
from tests.metrics.proxy import Fault, Proxy
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


def test_no_decision_on_a_sample_from_before_an_outage(
    kube: KubeClient, setup: Setup, server: Any, prometheus: PrometheusServer, push: Push, base_time: datetime
) -> None:
    """After Prometheus was unreachable, its first answer is the last sample from before the outage (inside its
    lookback and the staleness budget): the target holds until a sample newer than the failed read, then
    decides on that one."""
    setup.workload("deployments", "rp-out", replicas=4)
    doc = spec_doc("rp-out", target="rp-out")
    doc["spec"]["metrics"][0]["prometheus"]["freshness"] = 'queue_depth{app="rp-out"}'
    setup.post(PAS, doc)
    failed_at, after = base_time - timedelta(seconds=30), base_time + timedelta(seconds=15)
    push({"__name__": "queue_depth", "app": "rp-out"}, [(failed_at - timedelta(seconds=10), 900)])
    proxy = Proxy(prometheus.url).start()
    try:
        settings = MetricsSettings.model_validate({"servers": {"main": {"url": proxy.url}}, "stalenessSeconds": 120})
        with (
            MetricsReader(settings, registry=SourceRegistry.builtin(), sleep=lambda _: None) as reader,
            daemon(kube, reader) as d,
        ):
            d.wait_replicas("rp-out", 4)
            proxy.faults.append(Fault(status=503, body=b"unavailable", repeat=True))
            down = d.reconciler.reconcile([resource_target(setup, "rp-out")], now=failed_at).outcomes[0]
            assert down.decision is not None and not down.wrote_scale
            assert "503" in str(down.decision.metrics[0].error), down.decision.metrics
            proxy.faults.clear()
            back = d.reconciler.reconcile([resource_target(setup, "rp-out")], now=base_time).outcomes[0]
            assert back.decision is not None and back.decision.desired_replicas == 4 and not back.wrote_scale
            assert back.decision.summary == "hold: no metric could be computed"
            assert "older than this query's last failed attempt" in str(back.decision.metrics[0].error)
            # A sample scraped after the failure (before the refused tick: a refusal moves nothing) is read.
            push({"__name__": "queue_depth", "app": "rp-out"}, [(failed_at + timedelta(seconds=5), 700)])
            fresh = d.reconciler.reconcile([resource_target(setup, "rp-out")], now=after).outcomes[0]
            assert fresh.decision is not None and fresh.decision.desired_replicas == 7 and fresh.wrote_scale
            d.wait_replicas("rp-out", 7)
    finally:
        proxy.stop()
