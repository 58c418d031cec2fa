"""The reconciler reads a spec's drainTime and formula inputs in its one metric pass, with the metrics,
sending a query shared by several of them once, and records the inputs in the decision snapshot."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from autoscaler.daemon.observe import Observer
from autoscaler.kube.client import KubeClient
from autoscaler.replay import replay_data
from tests.daemon.helpers import (
    PAS,
    FakePrometheus,
    daemon,
    query_for,
    reader_for,
    resource_target,
    spec_doc,
    unwrap_sample_timestamps,
)
from tests.daemon.test_reconcile import assert_replays_to
from tests.kube.conftest import Setup

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
CONSUMERS = 'sum(consumers{app="queued"})'
RATE = 'sum(rate(jobs_done_total{app="queued"}[1m]))'


def _doc() -> dict[str, Any]:
    doc = spec_doc(
        "queued",
        target="queued",
        behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 20, "periodSeconds": 15}]}},
    )
    backlog = {"prometheus": {"query": query_for("queued")}}  # the External metric's own query
    doc["spec"]["drainTime"] = {
        "backlog": backlog,
        "processingRate": {"prometheus": {"query": RATE}},
        "targetSeconds": 60,
    }
    doc["spec"]["formula"] = {
        "inputs": [{"name": "queue", **backlog}, {"name": "consumers", "prometheus": {"query": CONSUMERS}}],
        "expression": "queue / max(consumers, 1)",
        "target": {"type": "AverageValue", "averageValue": "40"},
    }
    return doc


def test_the_inputs_are_read_in_the_one_pass_once_per_query_and_replay(
    kube: KubeClient, setup: Setup, server: Any
) -> None:
    prom = FakePrometheus()
    prom.values = {query_for("queued"): 800, CONSUMERS: 2, RATE: 40}
    setup.workload("deployments", "queued", replicas=4)
    setup.post(PAS, _doc())
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("queued", 4)
        prom.queries.clear()
        report = d.reconciler.reconcile([resource_target(setup, "queued")], now=T0)
        (outcome,) = report.outcomes
        # one External metric and four inputs, three distinct queries: each sent once
        sent = sorted(unwrap_sample_timestamps(query)[0] for query in prom.queries)
        assert sent == sorted([query_for("queued"), CONSUMERS, RATE])
        assert report.metric_queries == 3
        decision = outcome.decision
        assert outcome.error == "" and decision is not None
        # the metric proposes 800 / 100 = 8, the drain time 800 / (10/s x 60 s) = 2 with 4 ready pods (or holds
        # while they are not ready), the formula (800 / 2) / 40 = 10: the formula wins
        assert [m.proposed_replicas for m in decision.metrics] == [8]
        assert decision.extra_metrics[1].proposed_replicas == 10
        assert (decision.desired_replicas, decision.proposing_metric) == (10, "formula queue / max(consumers, 1)")
        assert decision.extra_metrics[0].error is None and "drain time: backlog 800" in decision.summary
        assert outcome.snapshot is not None
        snapshot = outcome.snapshot.json()
        assert [entry["items"][0]["value"] for entry in snapshot["inputs"]] == ["800", "40", "800", "2"]
        assert_replays_to(outcome.snapshot, decision)
        assert replay_data(snapshot)["summary"] == decision.summary
        d.wait_replicas("queued", 10)
    # The daemon's own metrics show each extra proposal's value against its target.
    observer = Observer()
    observer.report_outcome(outcome, evaluated_at=0.0)
    text = generate_latest(observer.registry).decode()
    series = {
        (sample.name, sample.labels["metric"], sample.labels["target_type"]): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith("autoscaler_target_metric_")
    }
    formula = "formula queue / max(consumers, 1)"
    assert series[("autoscaler_target_metric_value", formula, "AverageValue")] == 100.0  # 400 over 4 replicas
    assert series[("autoscaler_target_metric_target", formula, "AverageValue")] == 40.0
    assert series[("autoscaler_target_metric_target", "drain time", "DrainSeconds")] == 60.0


def test_a_failed_input_holds_and_says_which(kube: KubeClient, setup: Setup, server: Any) -> None:
    prom = FakePrometheus()
    prom.values = {query_for("queued2"): 100}  # the rate and the consumers have no answer: their queries fail
    doc = _doc()
    doc["metadata"]["name"] = "queued2"
    doc["spec"]["scaleTargetRef"]["name"] = "queued2"
    doc["spec"]["metrics"][0]["prometheus"]["query"] = query_for("queued2")
    doc["spec"]["drainTime"]["backlog"]["prometheus"]["query"] = query_for("queued2")
    doc["spec"]["formula"]["inputs"][0]["prometheus"]["query"] = query_for("queued2")
    setup.workload("deployments", "queued2", replicas=4)
    setup.post(PAS, doc)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("queued2", 4)
        report = d.reconciler.reconcile([resource_target(setup, "queued2")], now=T0)
        (outcome,) = report.outcomes
        decision = outcome.decision
        assert decision is not None and (decision.desired_replicas, decision.rescale) == (4, False)
        assert decision.extra_metrics[1].error is not None and "input 'consumers' could not be read" in (
            decision.extra_metrics[1].error
        )
        assert "throughput per replica unknown" in decision.extra_metrics[0].explanation
        assert outcome.snapshot is not None
        assert_replays_to(outcome.snapshot, decision)
