"""Building a reconciler over the emulator, with a fake Prometheus client, and the targets it reconciles."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from autoscaler.core.types import Settings
from autoscaler.daemon.model import Origin, Target, TargetKey, TargetOutcome
from autoscaler.daemon.reconciler import Reconciler
from autoscaler.kube.cache import PodCache, WorkloadCache
from autoscaler.kube.client import KubeClient
from autoscaler.kube.events import EventRecorder
from autoscaler.kube.pods import PodAnnotator
from autoscaler.kube.scale import ScaleClient
from autoscaler.kube.shadow import ShadowCache
from autoscaler.kube.state import ConfigMapStateStore
from autoscaler.kube.status import StatusWriter
from autoscaler.metrics import Answer, MetricsReader, MetricsSettings, Series, SourceRegistry, TransientError
from autoscaler.metrics.evaluate import QueryClient
from autoscaler.metrics.promql import TIMESTAMP_MARKER, TIMESTAMP_MARKER_VALUE
from autoscaler.spec.objects import load_autoscaler
from tests.kube.conftest import NS, Setup

PAS = f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers"
STATE_NS = "ops"


def query_for(target: str) -> str:
    return f'sum(queue_depth{{app="{target}"}})'


def spec_doc(name: str, *, target: str = "web", behavior: dict[str, Any] | None = None) -> dict[str, Any]:
    """A PrometheusAutoscaler on Deployment `target`: one External metric, 100 per replica (min 1, max 10)."""
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "External",
                "external": {
                    "metric": {"name": "queue_depth"},
                    "target": {"type": "AverageValue", "averageValue": "100"},
                },
                "prometheus": {"query": query_for(target)},
            }
        ],
    }
    if behavior is not None:
        spec["behavior"] = behavior
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def resource_target(setup: Setup, name: str, *, dry_run: bool = False) -> Target:
    """The custom resource as the cluster stores it now, as a target (what ResourceSource gives)."""
    obj = setup.get(f"{PAS}/{name}")
    meta = obj["metadata"]
    return Target(
        key=TargetKey(NS, name),
        origin=Origin.RESOURCE,
        autoscaler=load_autoscaler(obj, scale_to_zero=False),
        source=f"PrometheusAutoscaler {NS}/{name}",
        sync_period_seconds=15,
        dry_run=dry_run,
        uid=meta.get("uid", ""),
        generation=meta.get("generation"),
        stored=obj,
    )


def file_target(doc: dict[str, Any], *, dry_run: bool = False) -> Target:
    name = doc["metadata"]["name"]
    return Target(
        key=TargetKey(NS, name),
        origin=Origin.FILE,
        autoscaler=load_autoscaler(doc, scale_to_zero=False),
        source=f"specs/{name}.yaml: document 1",
        sync_period_seconds=15,
        dry_run=dry_run,
    )


class FakePrometheus:
    """A QueryClient answering each query with the value set for it, stamped at the time asked; a query the
    reader wrapped for its sample times (`promql.with_sample_timestamps`) gets its marker series too, sampled at
    the time asked, as a Prometheus that scraped just then answers."""

    def __init__(self) -> None:
        self.values: dict[str, float] = {}
        self.down = False
        self.queries: list[str] = []

    def query(self, promql: str, *, time: datetime, budget_seconds: float, deadline_seconds: float) -> Answer:
        self.queries.append(promql)
        if self.down:
            raise TransientError("connection refused", status=None)
        value_query, marked = unwrap_sample_timestamps(promql)
        series = (Series({}, repr(self.values[value_query]), time.timestamp()),)
        if marked:
            marker = {TIMESTAMP_MARKER: TIMESTAMP_MARKER_VALUE}
            series += (Series(marker, repr(time.timestamp()), time.timestamp()),)
        return Answer("vector", series)

    def close(self) -> None:
        pass


def unwrap_sample_timestamps(promql: str) -> tuple[str, bool]:
    """The value query inside a query wrapped by `promql.with_sample_timestamps`, and whether it was wrapped."""
    head, found, _ = promql.partition(") or label_replace(min by (")
    return (head[1:], True) if found and head.startswith("(") else (promql, False)


def reader_for(client: QueryClient) -> MetricsReader:
    settings = MetricsSettings.model_validate({"servers": {"main": {"url": "http://127.0.0.1:9"}}})
    return MetricsReader(settings, registry=SourceRegistry.builtin(), clients={"main": client}, sleep=lambda _: None)


def eventually(check: Callable[[], bool], *, timeout: float = 10.0) -> None:
    """Wait for a watch-fed cache to show a change (polling a state, not waiting for time)."""
    deadline = time.monotonic() + timeout
    event = threading.Event()
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        event.wait(0.01)


@dataclass
class Daemon:
    """A reconciler over the emulator with its caches, as the daemon builds it."""

    reconciler: Reconciler
    pods: PodCache
    workloads: WorkloadCache
    states: ConfigMapStateStore
    allowed: list[bool] = field(default_factory=lambda: [True])

    def replicas(self, name: str) -> int | None:
        cached = self.workloads.scale(NS, "Deployment", name)
        return cached.scale.spec_replicas if cached else None

    def wait_replicas(self, name: str, count: int) -> None:
        eventually(lambda: self.replicas(name) == count)


@contextmanager
def daemon(
    kube: KubeClient,
    reader: MetricsReader,
    *,
    settings: Settings | None = None,
    sleep: Callable[[float], None] = time.sleep,
    shadows: ShadowCache | None = None,
    on_outcome: Callable[[TargetOutcome, datetime], None] | None = None,
) -> Iterator[Daemon]:
    """The reconciler over fresh caches; `sleep` is the state store's backoff between retries; `shadows` reads
    HPAs and ScaledObjects for shadow mode."""
    pods, workloads = PodCache(kube), WorkloadCache(kube)
    pods.start()
    workloads.start()
    try:
        assert pods.wait_for_sync(10) and workloads.wait_for_sync(10)
        states = ConfigMapStateStore(kube, namespace=STATE_NS, sleep=sleep)
        allowed = [True]
        reconciler = Reconciler(
            settings=settings or Settings(),
            reader=reader,
            pods=pods,
            workloads=workloads,
            scales=ScaleClient(kube),
            events=EventRecorder(kube),
            status=StatusWriter(kube),
            states=states,
            write_concurrency=4,
            may_write=lambda: allowed[0],
            shadows=shadows,
            annotator=PodAnnotator(kube, concurrency=4, sleep=sleep),
            on_outcome=on_outcome,
        )
        yield Daemon(reconciler, pods, workloads, states, allowed)
    finally:
        pods.stop()
        workloads.stop()
