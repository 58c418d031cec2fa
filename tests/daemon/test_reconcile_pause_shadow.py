"""Pausing and shadow mode through the reconciler, against the emulator, one tick at a time on a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.pause import PAUSED, PAUSED_REPLICAS, Pause
from autoscaler.kube.client import KubeClient
from autoscaler.kube.shadow import ShadowCache
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
from tests.daemon.test_reconcile import assert_replays_to, events, writes
from tests.kube.conftest import NS, Setup
from tests.kube.test_shadow import hpa
from tests.manifests import SCALED_OBJECT_CRD

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


@pytest.fixture
def prom() -> FakePrometheus:
    return FakePrometheus()


def scale_writes(server: Any) -> list[Any]:
    return [r for r in writes(server) if r.subresource == "scale"]


def active(setup: Setup, name: str = "web") -> dict[str, Any]:
    status = setup.get(f"{PAS}/{name}")["status"]
    return next(c for c in status["conditions"] if c["type"] == "ScalingActive")


def annotate(setup: Setup, path: str, annotations: dict[str, str | None]) -> None:
    setup.patch(path, {"metadata": {"annotations": annotations}})


def test_a_pause_on_the_target_holds_then_scaling_resumes(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    setup.workload("deployments", "web", replicas=2)
    annotate(setup, f"{DEPLOYMENTS}/web", {PAUSED: "true"})
    setup.post(PAS, spec_doc("web"))
    prom.values[query_for("web")] = 800  # 8 replicas wanted
    with daemon(kube, reader_for(prom)) as d:
        eventually(lambda: bool((c := d.workloads.scale(NS, "Deployment", "web")) and c.annotations))
        for i in range(4):  # a minute paused
            (outcome,) = d.reconciler.reconcile(
                [resource_target(setup, "web")], now=T0 + timedelta(seconds=15 * i)
            ).outcomes
            assert outcome.decision is not None and not outcome.wrote_scale
            assert outcome.decision.desired_replicas == 2
        assert prom.queries == []  # paused: no metric read
        assert scale_writes(server) == []
        condition = active(setup)
        assert (condition["status"], condition["reason"]) == ("False", "ScalingPaused")
        assert f"{PAUSED} on Deployment web" in condition["message"]
        assert len(events(setup, "ScalingPaused")) == 1  # when pausing starts, not every tick
        assert_replays_to(outcome.snapshot, outcome.decision)
        assert outcome.snapshot is not None and outcome.snapshot.json()["pause"] == {"source": "Deployment web"}

        annotate(setup, f"{DEPLOYMENTS}/web", {PAUSED: None})
        eventually(lambda: not d.workloads.scale(NS, "Deployment", "web").annotations)  # type: ignore[union-attr]
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0 + timedelta(seconds=60)).outcomes
        assert outcome.wrote_scale and outcome.decision is not None and outcome.decision.desired_replicas == 4
        assert len(events(setup, "ScalingResumed")) == 1
        assert active(setup)["reason"] == "ValidMetricFound"


def test_a_paused_count_on_the_spec_is_written_once(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    """paused-replicas on the PrometheusAutoscaler: one guarded scale write to the count, then nothing."""
    setup.workload("deployments", "web", replicas=2)
    doc = spec_doc("web")
    doc["metadata"]["annotations"] = {PAUSED_REPLICAS: "6"}
    setup.post(PAS, doc)
    prom.values[query_for("web")] = 100  # 1 replica wanted
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 2)
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0).outcomes
        assert outcome.wrote_scale
        d.wait_replicas("web", 6)
        for i in range(1, 5):
            (outcome,) = d.reconciler.reconcile(
                [resource_target(setup, "web")], now=T0 + timedelta(seconds=15 * i)
            ).outcomes
            assert not outcome.wrote_scale
        assert len(scale_writes(server)) == 1
        assert [e["message"] for e in events(setup, "SuccessfulRescale")] == [
            "New size: 6; reason: paused at 6 replicas by the annotation autoscaler.dev/paused-replicas on "
            f"PrometheusAutoscaler {NS}/web"
        ]


def test_a_bad_annotation_on_the_target_holds_and_says_which(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    setup.workload("deployments", "web", replicas=3)
    annotate(setup, f"{DEPLOYMENTS}/web", {PAUSED_REPLICAS: "three"})
    setup.post(PAS, spec_doc("web"))
    prom.values[query_for("web")] = 900
    with daemon(kube, reader_for(prom)) as d:
        eventually(lambda: bool((c := d.workloads.scale(NS, "Deployment", "web")) and c.annotations))
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=T0).outcomes
        assert not outcome.wrote_scale and scale_writes(server) == []
        condition = active(setup)
        assert (condition["status"], condition["reason"]) == ("False", "InvalidPauseAnnotation")
        (event,) = events(setup, "InvalidPauseAnnotation")
        assert event["type"] == "Warning"
        assert f'Deployment web: annotation {PAUSED_REPLICAS}: "three" is not a replica count' in event["message"]


def test_shadow_mode_compares_with_the_hpa_and_never_writes(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    setup.workload("deployments", "web", replicas=2)
    hpa(setup, "web", 3)
    doc = spec_doc("web")
    doc["spec"]["mode"] = "shadow"
    setup.post(PAS, doc)
    prom.values[query_for("web")] = 400  # 4 replicas wanted
    shadows = ShadowCache(kube, namespace=NS, first_sync_seconds=5)
    try:
        with daemon(kube, reader_for(prom), shadows=shadows) as d:
            d.wait_replicas("web", 2)
            target = resource_target(setup, "web", dry_run=True)  # what make_target gives a spec in shadow mode
            (outcome,) = d.reconciler.reconcile([target], now=T0).outcomes
            assert not outcome.wrote_scale and outcome.decision is not None
            shadow = setup.get(f"{PAS}/web")["status"]["shadow"]
            assert shadow == {
                "desiredReplicas": 4,
                "theirs": 3,
                "difference": 1,
                "observedAt": "2026-03-01T12:00:00Z",
                "source": "HorizontalPodAutoscaler web",
            }
            assert [e["reason"] for e in events(setup, "DryRunRescale")] == ["DryRunRescale"]
            assert_replays_to(outcome.snapshot, outcome.decision)
            assert outcome.snapshot is not None and outcome.snapshot.json()["shadow"]["desiredReplicas"] == 3
            assert scale_writes(server) == []
    finally:
        shadows.stop()


def test_shadow_mode_beside_a_scaled_object_and_when_theirs_is_missing(
    kube: KubeClient, setup: Setup, server: Any, prom: FakePrometheus
) -> None:
    setup.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", SCALED_OBJECT_CRD)
    setup.post(
        f"/apis/keda.sh/v1alpha1/namespaces/{NS}/scaledobjects",
        {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "web"}, "spec": {}},
    )
    setup.workload("deployments", "web", replicas=2)
    doc = spec_doc("web")
    doc["spec"]["mode"] = "shadow"
    doc["spec"]["shadow"] = {"scaledObject": "web"}
    setup.post(PAS, doc)
    prom.values[query_for("web")] = 200
    shadows = ShadowCache(kube, namespace=NS, first_sync_seconds=5)
    try:
        with daemon(kube, reader_for(prom), shadows=shadows) as d:
            d.wait_replicas("web", 2)
            target = resource_target(setup, "web", dry_run=True)
            (outcome,) = d.reconciler.reconcile([target], now=T0).outcomes
            missing = setup.get(f"{PAS}/web")["status"]["shadow"]
            assert missing["error"] == "HorizontalPodAutoscaler keda-hpa-web not found"
            assert "theirs" not in missing and "difference" not in missing
            hpa(setup, "keda-hpa-web", 2)
            eventually(lambda: shadows.read(NS, now=T0, scaled_object="web").desired_replicas == 2)
            (outcome,) = d.reconciler.reconcile([target], now=T0 + timedelta(seconds=15)).outcomes
            assert not outcome.wrote_scale
            shadow = setup.get(f"{PAS}/web")["status"]["shadow"]
            assert (shadow["theirs"], shadow["difference"]) == (2, 0)
            assert shadow["source"] == "ScaledObject web (HorizontalPodAutoscaler keda-hpa-web)"
            assert scale_writes(server) == []
    finally:
        shadows.stop()


def test_the_resource_source_reads_a_pause_annotation_added_later(kube: KubeClient, setup: Setup) -> None:
    """Annotating the PrometheusAutoscaler parses it again (other metadata changes do not): the pause applies,
    a bad value is a spec problem naming the annotation, and removing it resumes."""
    from autoscaler.daemon.sources import ResourceSource, SpecProblem, TargetDefaults
    from autoscaler.kube.status import AutoscalerCache

    setup.post(PAS, spec_doc("web"))
    cache = AutoscalerCache(kube, namespaces=[NS])
    problems: list[SpecProblem] = []
    cache.start()
    try:
        assert cache.wait_for_sync(10)
        source = ResourceSource(cache, defaults=TargetDefaults(), on_problem=problems.append)
        (first,) = source.refresh()
        assert first.autoscaler.pause is None

        def pause_of() -> Any:
            targets = source.refresh()
            return targets[0].autoscaler.pause if targets else "invalid"

        annotate(setup, f"{PAS}/web", {PAUSED_REPLICAS: "3"})
        eventually(lambda: pause_of() is not None)
        assert pause_of() == Pause(f"PrometheusAutoscaler {NS}/web", 3)
        annotate(setup, f"{PAS}/web", {PAUSED_REPLICAS: "lots"})
        eventually(lambda: pause_of() == "invalid")
        assert f'metadata.annotations.{PAUSED_REPLICAS}: annotation {PAUSED_REPLICAS}: "lots"' in problems[-1].message
        annotate(setup, f"{PAS}/web", {PAUSED_REPLICAS: None})
        eventually(lambda: pause_of() is None)
    finally:
        cache.stop()
