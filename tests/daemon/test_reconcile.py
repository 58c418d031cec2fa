"""The reconciler against the emulator (official client) with a fake Prometheus client: one tick at a time,
with a fake clock `now` and the HPA's production durations (the 300 s downscale window)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from autoscaler.daemon.model import TargetKey
from autoscaler.kube.client import USER_AGENT, KubeClient
from tests.daemon.helpers import (
    PAS,
    FakePrometheus,
    daemon,
    eventually,
    file_target,
    query_for,
    reader_for,
    resource_target,
    spec_doc,
)
from tests.kube.conftest import NS, Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def ours(server: Any, **where: Any) -> list[Any]:
    """The daemon's own requests (its User-Agent) in the emulator's audit log."""
    return [r for r in server.audit.records(**where) if r.user_agent.startswith(USER_AGENT)]


def writes(server: Any) -> list[Any]:
    return [r for r in ours(server) if r.method in ("POST", "PUT", "PATCH", "DELETE")]


def events(setup: Setup, reason: str) -> list[Any]:
    items = setup.get(f"/api/v1/namespaces/{NS}/events")["items"]
    return [e for e in items if e["reason"] == reason]


def assert_replays_to(snapshot: Any, decision: Any) -> None:
    """Replaying the tick's snapshot gives the decision the daemon recorded: desired, conditions, events."""
    from autoscaler.replay import replay_data

    replayed = replay_data(snapshot.json())
    assert (replayed["desiredReplicas"], replayed["rescale"]) == (decision.desired_replicas, decision.rescale)
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in replayed["conditions"]] == [
        (c.type, c.status, c.reason, c.message) for c in decision.conditions
    ]
    assert [(e["type"], e["reason"], e["message"]) for e in replayed["events"]] == [
        (str(e.type), str(e.reason), e.message) for e in decision.events
    ]


@pytest.fixture
def prom() -> FakePrometheus:
    return FakePrometheus()


def _web(setup: Setup, *, replicas: int = 4, name: str = "web", **doc: Any) -> None:
    setup.workload("deployments", name, replicas=replicas)
    setup.post(PAS, spec_doc(name, target=name, **doc))


def test_scales_up_on_load_and_down_only_after_the_window(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    _web(setup)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        prom.values[query_for("web")] = 800
        report = d.reconciler.reconcile([resource_target(setup, "web")], now=T0)
        (outcome,) = report.outcomes
        assert outcome.error == "" and outcome.wrote_scale and outcome.decision is not None
        assert outcome.decision.desired_replicas == 8
        d.wait_replicas("web", 8)
        stored = setup.get(f"{PAS}/web")["status"]
        assert stored["reference"] == "Deployment/web"
        assert stored["targets"] == "200/100 (avg)"  # the per-pod average, over 4 replicas
        assert stored["desiredReplicas"] == 8 and stored["behaviorState"]["recommendations"]

        prom.values[query_for("web")] = 100
        for seconds in (15, 150, 299):
            report = d.reconciler.reconcile([resource_target(setup, "web")], now=T0 + timedelta(seconds=seconds))
            assert not report.outcomes[0].wrote_scale, seconds
            assert d.replicas("web") == 8
        report = d.reconciler.reconcile([resource_target(setup, "web")], now=T0 + timedelta(seconds=316))
        assert report.outcomes[0].wrote_scale
        d.wait_replicas("web", 1)
    assert len(events(setup, "SuccessfulRescale")) == 2


def test_prometheus_down_holds_with_a_warning(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    _web(setup, replicas=6)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 6)
        prom.values[query_for("web")] = 600
        d.reconciler.reconcile([resource_target(setup, "web")], now=T0)
        prom.down = True  # the load falls while Prometheus is away: a stale or zero reading would scale down
        for minutes in (6, 12):
            report = d.reconciler.reconcile([resource_target(setup, "web")], now=T0 + timedelta(minutes=minutes))
            decision = report.outcomes[0].decision
            assert decision is not None and decision.desired_replicas == 6 and not decision.rescale
        assert d.replicas("web") == 6
        status = setup.get(f"{PAS}/web")["status"]
        active = next(c for c in status["conditions"] if c["type"] == "ScalingActive")
        assert (active["status"], active["reason"]) == ("False", "FailedGetExternalMetric")
        assert status["targets"] == "<unknown>/100 (avg)"
        assert events(setup, "FailedGetExternalMetric") and events(setup, "FailedComputeMetricsReplicas")
        prom.down = False
        prom.values[query_for("web")] = 900
        report = d.reconciler.reconcile([resource_target(setup, "web")], now=T0 + timedelta(minutes=13))
        assert report.outcomes[0].wrote_scale
        d.wait_replicas("web", 9)


def test_a_conflict_is_decided_again_on_the_fresh_scale(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    _web(setup)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        d.workloads.stop()  # the cache keeps replicas 2 while a user scales to 9 behind its back
        setup.patch(f"/apis/apps/v1/namespaces/{NS}/deployments/web", {"spec": {"replicas": 9}})
        prom.values[query_for("web")] = 800
        report = d.reconciler.reconcile([resource_target(setup, "web")], now=T0)
        decision = report.outcomes[0].decision
        # Decided again on 9 replicas with the same reading: 8 is a scale-down, held by the window.
        assert decision is not None and decision.current_replicas == 9 and decision.desired_replicas == 9
        assert not report.outcomes[0].wrote_scale
    puts = ours(server, method="PUT", subresource="scale")
    assert [p.code for p in puts] == [409]
    assert setup.get(f"/apis/apps/v1/namespaces/{NS}/deployments/web")["spec"]["replicas"] == 9
    assert not events(setup, "SuccessfulRescale")


def test_no_scale_write_when_may_write_is_false(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    _web(setup)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        prom.values[query_for("web")] = 800
        d.allowed[0] = False  # the lease was lost between the decision and the write
        report = d.reconciler.reconcile([resource_target(setup, "web")], now=T0)
        assert not report.outcomes[0].wrote_scale and report.outcomes[0].error_type == "fenced"
    assert writes(server) == []


def test_dry_run_reports_but_never_scales(kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus) -> None:
    _web(setup)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        prom.values[query_for("web")] = 800
        report = d.reconciler.reconcile([resource_target(setup, "web", dry_run=True)], now=T0)
        outcome = report.outcomes[0]
        assert outcome.dry_run and not outcome.wrote_scale and outcome.wrote_status
        assert outcome.decision is not None and outcome.decision.desired_replicas == 8
        assert outcome.snapshot is not None and outcome.snapshot.json()["dryRun"] is True
        assert_replays_to(outcome.snapshot, outcome.decision)
    assert ours(server, subresource="scale", method="PUT") == []
    assert setup.get(f"/apis/apps/v1/namespaces/{NS}/deployments/web")["spec"]["replicas"] == 4
    status = setup.get(f"{PAS}/web")["status"]
    able = next(c for c in status["conditions"] if c["type"] == "AbleToScale")
    assert (able["status"], able["reason"]) == ("True", "DryRun")
    assert status["desiredReplicas"] == 8 and status["currentReplicas"] == 4 and "lastScaleTime" not in status
    assert status["behaviorState"]["scaleUpEvents"] == []
    assert [e["message"] for e in events(setup, "DryRunRescale")] == [
        "New size: 8; reason: external metric queue_depth(<nil>) above target; dry run: not written"
    ]
    assert not events(setup, "SuccessfulRescale")


def test_plan_writes_nothing_at_all(kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus) -> None:
    _web(setup)
    setup.workload("deployments", "api", replicas=4)
    doc = spec_doc("file-api", target="api")
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        d.wait_replicas("api", 4)
        prom.values[query_for("web")] = 800
        prom.values[query_for("api")] = 500
        server.audit.clear()
        report = d.reconciler.reconcile([resource_target(setup, "web"), file_target(doc)], now=T0, write=False)
        assert [o.decision.desired_replicas for o in report.outcomes if o.decision] == [8, 5]
    assert writes(server) == []


def test_one_target_raising_leaves_the_others_decided(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    _web(setup)
    _web(setup, name="api")
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        d.wait_replicas("api", 4)
        prom.values[query_for("web")] = 800
        prom.values[query_for("api")] = 500
        broken = resource_target(setup, "api")
        # A stored status the reconciler cannot read as a mapping: a bug's stand-in, raised inside the tick.
        broken = type(broken)(**{**{f: getattr(broken, f) for f in broken.__slots__}, "stored": 42})  # type: ignore[arg-type]
        report = d.reconciler.reconcile([broken, resource_target(setup, "web")], now=T0)
        failed, good = report.outcomes
        assert failed.error_type == "internal" and failed.decision is None
        assert good.error == "" and good.wrote_scale
        d.wait_replicas("web", 8)
    assert d.replicas("api") == 4


BEHAVIOR = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}
}


def _rate_limited_web(setup: Setup, prom: FakePrometheus, origin: str) -> Callable[[], Any]:
    """A Deployment of 2 under load (900), its spec limited to 2 pods per 60 s, from a custom resource or a
    file; returns how to read its Target as the daemon would."""
    setup.workload("deployments", "web", replicas=2)
    doc = spec_doc("web", behavior=BEHAVIOR)
    if origin == "resource":
        setup.post(PAS, doc)
    prom.values[query_for("web")] = 900
    return lambda: resource_target(setup, "web") if origin == "resource" else file_target(doc)


@pytest.mark.parametrize("origin", ["resource", "file"])
def test_a_restart_keeps_the_history(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus, origin: str
) -> None:
    """2 pods per 60 s: a new daemon 30 s after a scale-up still counts it (the HPA would scale again)."""
    target = _rate_limited_web(setup, prom, origin)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 2)
        assert d.reconciler.reconcile([target()], now=T0).outcomes[0].wrote_scale
        d.wait_replicas("web", 4)
    with daemon(kube, reader_for(prom)) as restarted:
        restarted.wait_replicas("web", 4)
        report = restarted.reconciler.reconcile([target()], now=T0 + timedelta(seconds=30))
        decision = report.outcomes[0].decision
        assert decision is not None and decision.desired_replicas == 4, decision.summary
        report = restarted.reconciler.reconcile([target()], now=T0 + timedelta(seconds=61))
        assert report.outcomes[0].decision is not None and report.outcomes[0].decision.desired_replicas == 6
    if origin == "file":
        (cm,) = [
            c
            for c in setup.get("/api/v1/namespaces/ops/configmaps")["items"]
            if c["metadata"]["name"].startswith("autoscaler-state.")
        ]
        assert cm["metadata"]["name"] == f"autoscaler-state.{NS}.web"
        assert cm["metadata"]["labels"]["autoscaler.dev/state"] == "true"


@pytest.mark.parametrize("origin", ["resource", "file"])
def test_a_fenced_tick_leaves_no_scale_in_memory(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus, origin: str
) -> None:
    """2 pods per 60 s: a scale-up fenced at 61 s never happened, so at 76 s the HPA scales 4 -> 6."""
    target = _rate_limited_web(setup, prom, origin)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 2)
        assert d.reconciler.reconcile([target()], now=T0).outcomes[0].wrote_scale
        d.wait_replicas("web", 4)
        d.allowed[0] = False
        (fenced,) = d.reconciler.reconcile([target()], now=T0 + timedelta(seconds=61)).outcomes
        assert fenced.error_type == "fenced" and not fenced.wrote_scale
        assert fenced.decision is not None and not fenced.decision.rescale
        assert fenced.decision.summary.endswith("(not written)") and fenced.snapshot is not None
        assert fenced.snapshot.json()["scaleNotWritten"] is True  # so its replay gives the decision as made
        assert_replays_to(fenced.snapshot, fenced.decision)
        d.allowed[0] = True
        (outcome,) = d.reconciler.reconcile([target()], now=T0 + timedelta(seconds=76)).outcomes
        assert outcome.decision is not None and outcome.wrote_scale, outcome.decision and outcome.decision.summary
        assert outcome.decision.desired_replicas == 6
        d.wait_replicas("web", 6)


def test_forget_reads_the_state_back_from_storage(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    setup.workload("deployments", "web", replicas=2)
    doc = spec_doc("web", behavior=BEHAVIOR)
    prom.values[query_for("web")] = 900
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 2)
        d.reconciler.reconcile([file_target(doc)], now=T0)
        d.wait_replicas("web", 4)
        d.reconciler.forget(TargetKey(NS, "web"))
        report = d.reconciler.reconcile([file_target(doc)], now=T0 + timedelta(seconds=30))
        assert report.outcomes[0].decision is not None and report.outcomes[0].decision.desired_replicas == 4


def test_ambiguous_selectors_refuse_both(kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus) -> None:
    setup.workload("deployments", "web", replicas=2, app="shared")
    setup.workload("deployments", "web2", replicas=2, app="shared")
    setup.post(PAS, spec_doc("web", target="web"))
    setup.post(PAS, spec_doc("web2", target="web2"))
    prom.values[query_for("web")] = prom.values[query_for("web2")] = 800
    with daemon(kube, reader_for(prom)) as d:
        eventually(lambda: len(d.pods.pods(NS, "app=shared")) == 4)
        report = d.reconciler.reconcile([resource_target(setup, "web"), resource_target(setup, "web2")], now=T0)
        for outcome in report.outcomes:
            assert outcome.decision is not None and not outcome.decision.rescale
            status = setup.get(f"{PAS}/{outcome.key.name}")["status"]
            active = next(c for c in status["conditions"] if c["type"] == "ScalingActive")
            assert active["reason"] == "AmbiguousSelector"
            assert active["message"] == (
                f"pods by selector app=shared are controlled by multiple HPAs: [{NS}/web {NS}/web2]"
            )
    assert prom.queries == []  # refused before any metric is read
    assert len(events(setup, "AmbiguousSelector")) == 2 and len(events(setup, "FailedComputeMetricsReplicas")) == 2
    assert ours(server, subresource="scale", method="PUT") == []


def test_a_target_whose_scale_reads_fail_keeps_its_selector(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    """`a` and `b` both scale Deployment web; `a`'s scale then fails to read for 10 minutes (its target is
    gone from the cache). The HPA keeps `a`'s selector until `a` is deleted: `b` stays refused all along."""
    setup.workload("deployments", "web", replicas=2)
    a, b = file_target(spec_doc("a", target="web")), file_target(spec_doc("b", target="web"))
    prom.values[query_for("web")] = 800
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 2)
        a_broken = file_target(spec_doc("a", target="gone"))
        for seconds in range(0, 601, 15):
            first = a if seconds == 0 else a_broken
            _, outcome = d.reconciler.reconcile([first, b], now=T0 + timedelta(seconds=seconds)).outcomes
            assert outcome.decision is not None and not outcome.decision.rescale, seconds
            active = next(c for c in outcome.decision.conditions if c.type == "ScalingActive")
            assert active.reason == "AmbiguousSelector", seconds
        d.reconciler.forget(a.key)  # `a` is removed: `b` alone owns the pods
        _, outcome = d.reconciler.reconcile([a_broken, b], now=T0 + timedelta(seconds=615)).outcomes
        assert outcome.decision is not None and outcome.decision.rescale and outcome.wrote_scale


def test_a_tick_costs_no_read_per_target(kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus) -> None:
    names = [f"app{i}" for i in range(6)]
    for name in names:
        _web(setup, name=name)
        prom.values[query_for(name)] = 400  # 4 replicas: steady, nothing to scale
    with daemon(kube, reader_for(prom)) as d:
        for name in names:
            d.wait_replicas(name, 4)
        targets = [resource_target(setup, n) for n in names]
        d.reconciler.reconcile(targets, now=T0)
        server.audit.clear()
        targets = [resource_target(setup, n) for n in names]
        server.audit.clear()
        report = d.reconciler.reconcile(targets, now=T0 + timedelta(seconds=15))
        assert all(o.error == "" for o in report.outcomes)
        assert report.metric_queries == len(names)
    calls = ours(server)
    assert [c for c in calls if c.verb in ("get", "list") and c.resource in ("deployments", "pods")] == []
    # Steady targets: only the recommendations' timestamps moved, which waits for each target's refresh: only
    # app0, app1 and app4, whose refresh times (1.4, 7.8 and 9.5 s past each minute) passed, store their status.
    assert sorted((c.verb, c.subresource, c.name) for c in calls) == [
        ("update", "status", "app0"),
        ("update", "status", "app1"),
        ("update", "status", "app4"),
    ]


def test_every_outcome_snapshot_replays_to_the_decision_made(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    """The flight recorder's input: each tick's snapshot, replayed, decides what the tick decided."""
    from autoscaler.replay import replay_data

    _web(setup)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        checked = 0
        for seconds, value in ((0, 800), (15, 800), (30, 100), (200, 100), (316, 100), (330, 100)):
            prom.values[query_for("web")] = value
            (outcome,) = d.reconciler.reconcile(
                [resource_target(setup, "web")], now=T0 + timedelta(seconds=seconds)
            ).outcomes
            assert outcome.decision is not None and outcome.snapshot is not None, seconds
            replayed = replay_data(outcome.snapshot.json())
            assert replayed["desiredReplicas"] == outcome.decision.desired_replicas, seconds
            assert replayed["rescale"] == outcome.decision.rescale, seconds
            assert [c["reason"] for c in replayed["conditions"]] == [c.reason for c in outcome.decision.conditions]
            checked += 1
        assert checked == 6


def test_an_ambiguous_decision_replays_from_its_snapshot(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    """The snapshot carries the selector index's answer (`controllers`), so replay refuses the target too."""
    from autoscaler.replay import replay_data

    setup.workload("deployments", "web", replicas=2)
    setup.post(PAS, spec_doc("a", target="web"))
    setup.post(PAS, spec_doc("b", target="web"))
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 2)
        report = d.reconciler.reconcile([resource_target(setup, "a"), resource_target(setup, "b")], now=T0)
        for outcome in report.outcomes:
            assert outcome.snapshot is not None
            snapshot = outcome.snapshot.json()
            assert snapshot["controllers"] == [f"{NS}/a", f"{NS}/b"]
            replayed = replay_data(snapshot)
            reasons = {c["type"]: c["reason"] for c in replayed["conditions"]}
            assert reasons["ScalingActive"] == "AmbiguousSelector"


def test_each_outcome_is_handed_on_once_as_soon_as_it_is_final(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    """The daemon's flight recorder gets each target's outcome from the reconciler as the target finishes (so
    its previous entry goes during the tick); a handler that fails is logged and ends nothing; a plan hands
    nothing on."""
    _web(setup, replicas=4)
    _web(setup, replicas=2, name="api")
    _web(setup, replicas=3, name="db")
    handed: list[tuple[str, datetime]] = []

    def handler(outcome: Any, now: datetime) -> None:
        handed.append((outcome.key.name, now))
        if outcome.key.name == "api":
            raise RuntimeError("the recorder broke")

    with daemon(kube, reader_for(prom), on_outcome=handler) as d:
        d.wait_replicas("db", 3)
        prom.values[query_for("web")] = 800  # web scales (a write on the pool); api and db hold
        targets = [resource_target(setup, name) for name in ("web", "api", "db")]
        report = d.reconciler.reconcile(targets, now=T0)
        assert report.recorded
        assert [o.key.name for o in report.outcomes] == ["web", "api", "db"]
        assert sorted(handed) == [("api", T0), ("db", T0), ("web", T0)]
        assert report.outcomes[0].wrote_scale and all(o.decision is not None for o in report.outcomes)
        handed.clear()
        plan = d.reconciler.reconcile(targets, now=T0 + timedelta(seconds=15), write=False)
        assert not plan.recorded and handed == [] and len(plan.outcomes) == 3


def test_what_the_hook_gives_back_is_what_the_report_keeps(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    """The daemon's hook reports each outcome at once and gives back what the tick's report keeps of it (no
    decision): the report holds that, and the tick lets each decision go as its target finishes; a hook that
    gives back None leaves the outcome as it was (the test above)."""
    _web(setup, replicas=4)
    _web(setup, replicas=2, name="api")
    full: dict[str, Any] = {}

    def hand_on(outcome: Any, now: datetime) -> Any:
        full[outcome.key.name] = outcome
        return replace(outcome, decision=None, snapshot=None)

    with daemon(kube, reader_for(prom), on_outcome=hand_on) as d:
        d.wait_replicas("api", 2)
        prom.values[query_for("web")] = 800  # web scales (a write on the pool); api holds
        report = d.reconciler.reconcile([resource_target(setup, n) for n in ("web", "api")], now=T0)
        assert [o.key.name for o in report.outcomes] == ["web", "api"]
        assert all(o.decision is None and o.snapshot is None for o in report.outcomes)
        assert report.outcomes[0].wrote_scale and full["web"].decision is not None and full["web"].decision.rescale
        assert full["api"].decision is not None and not full["api"].decision.rescale
