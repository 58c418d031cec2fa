"""The emulator's pod lifecycle, read through the Kubernetes layer and grouped by the core as the HPA does:
after a scale-up the new pods count as unready while they start (CPU's readiness rules), then as ready."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from autoscaler.core.calculator import PodMetric, group_pods
from autoscaler.core.types import ObjectReference, Settings
from autoscaler.kube.pods import PodLister
from autoscaler.kube.scale import ScaleClient
from autoscaler.sim.apiserver import EmulatedApiServer, FakeClock
from tests.kube.conftest import client_for

START = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
WEB = ObjectReference(kind="Deployment", name="web", api_version="apps/v1")
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "web", "resources": {"requests": {"cpu": "500m"}}}]},
        },
    },
}


def test_scaled_up_pods_are_unready_while_starting_then_ready() -> None:
    clock = FakeClock(START)
    settings = Settings(cpu_initialization_period_seconds=300, initial_readiness_delay_seconds=30)
    with EmulatedApiServer(clock=clock, start_delay_seconds=10, ready_delay_seconds=20, emit_events=False) as srv:
        srv.create(DEPLOYMENT)
        srv.advance(400)  # the first two pods have been ready for minutes
        kube = client_for(srv.url)
        try:
            written = ScaleClient(kube).write_scale("default", WEB, lambda scale: scale.spec_replicas + 2)
            assert (written.previous_replicas, written.scale.spec_replicas) == (2, 4)
            srv.advance(15)  # the two new pods are running, not ready yet
            pods = PodLister(kube).list_pods("default", written.scale.selector)
            first_minute = START + timedelta(minutes=1)
            old = {p.name for p in pods if p.start_time is not None and p.start_time < first_minute}
            # Every pod reports a fresh CPU sample, as a metrics pipeline would.
            samples = {p.name: PodMetric(100, clock.now(), 30.0) for p in pods}
            ready, unready, missing, ignored = group_pods(pods, samples, "cpu", settings=settings, now=clock.now())
            assert (ready, unready, missing, ignored) == (2, {p.name for p in pods} - old, set(), set())

            srv.advance(60)  # ready for 45 s: one metric window has passed since the readiness transition
            pods = PodLister(kube).list_pods("default", written.scale.selector)
            samples = {p.name: PodMetric(100, clock.now(), 30.0) for p in pods}
            ready, unready, missing, ignored = group_pods(pods, samples, "cpu", settings=settings, now=clock.now())
            assert (ready, unready, missing, ignored) == (4, set(), set(), set())
        finally:
            kube.close()
