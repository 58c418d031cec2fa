"""Set-up shared by the benchmarks: a real Prometheus loaded by backfill and an emulator seeded with N
Deployments of ready pods, both on 127.0.0.1, both fast enough for N = 10,000 (100,000 pods).

Prometheus: per pod, cAdvisor's `container_cpu_usage_seconds_total{namespace, pod, container="app"}` and a
request counter `http_requests_total{namespace, pod}`, 5 samples 15 s apart ending at `at`, written as
OpenMetrics and turned into blocks with `promtool tsdb create-blocks-from openmetrics` before the server
starts (no scraping, no remote write). Pod `p` of target `t` uses `0.1 + (t % 7) / 20 + p / 1000` cores and
serves `1 + t % 5` requests per second, so answers differ per pod and per target.

The emulator: N Deployments (`t<i>` in namespace `ns-<i % K>`, 10 replicas, CPU request 500m) with their
ReplicaSet and 10 Running, Ready pods each, put straight into the store (as a restored etcd would hold them;
the lifecycle model sees them as already converged), plus the namespaces.

The binaries come from `.tools/prometheus/usr/bin` (make deps) or the PATH.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from autoscaler.core.types import (
    Container,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Pod,
    PodPhase,
)
from autoscaler.metrics import MetricRequest, MetricsSettings, PrometheusBinding, ReadContext
from autoscaler.sim.apiserver.server import EmulatedApiServer
from tests.metrics import server

REPO = Path(__file__).resolve().parents[1]
PODS_PER_TARGET = 10
SAMPLES = 5
STEP_SECONDS = 15
RPS_TEMPLATE = "rps"


@dataclass(frozen=True)
class Layout:
    """N targets of `pods` pods each, spread round-robin over `namespaces` namespaces."""

    targets: int
    namespaces: int = 50
    pods: int = PODS_PER_TARGET

    def namespace(self, target: int) -> str:
        return f"ns-{target % self.namespaces}"

    def pod_names(self, target: int) -> list[str]:
        return [f"t{target}-{replica}" for replica in range(self.pods)]


def binary(name: str) -> str:
    """A Prometheus tool (`prometheus`, `promtool`), as the tests find it; exits naming it when there is none."""
    found = server.find_binary(name)
    if found is None:
        raise SystemExit(f"no {name} binary: run `make deps` or put it on the PATH")
    return found


free_port = server.free_port


@dataclass(frozen=True)
class Span:
    """When the samples are: `before` samples up to `at` and `after` more past it, `step` seconds apart (a
    daemon that reads at the wall clock needs samples until the benchmark ends)."""

    before: int = SAMPLES
    after: int = 0
    step: int = STEP_SECONDS

    def stamps(self, at: datetime) -> list[int]:
        end = int(at.timestamp())
        return [end + self.step * k for k in range(1 - self.before, self.after + 1)]


def write_openmetrics(
    path: Path,
    layout: Layout,
    at: datetime,
    *,
    span: Span = Span(),
    pods: Sequence[Sequence[str]] | None = None,
) -> int:
    """The benchmark's series as OpenMetrics text (timestamps in seconds, ending in `# EOF`); lines written.

    `pods`: each target's pod names (the emulator's), else `layout.pod_names`.
    """
    stamps = span.stamps(at)
    names = pods if pods is not None else [layout.pod_names(t) for t in range(layout.targets)]
    lines = 0
    with path.open("w") as out:
        out.write("# TYPE container_cpu_usage_seconds counter\n")
        for target in range(layout.targets):
            namespace = layout.namespace(target)
            for replica, pod in enumerate(names[target]):
                cores = 0.1 + (target % 7) / 20 + replica / 1000
                labels = f'container_cpu_usage_seconds_total{{container="app",namespace="{namespace}",pod="{pod}"}}'
                out.writelines(f"{labels} {1000 + cores * (t - stamps[0]):.6f} {t}\n" for t in stamps)
                lines += len(stamps)
        out.write("# TYPE http_requests counter\n")
        for target in range(layout.targets):
            namespace = layout.namespace(target)
            rate = 1 + target % 5
            for pod in names[target]:
                labels = f'http_requests_total{{namespace="{namespace}",pod="{pod}"}}'
                out.writelines(f"{labels} {500 + rate * (t - stamps[0])} {t}\n" for t in stamps)
                lines += len(stamps)
        out.write("# EOF\n")
    return lines


@dataclass
class Prometheus(server.ServerProcess):
    """A running, backfilled Prometheus."""

    version: str = ""


@contextmanager
def prometheus(
    layout: Layout,
    at: datetime,
    *,
    workdir: Path | None = None,
    span: Span = Span(),
    pods: Sequence[Sequence[str]] | None = None,
) -> Iterator[Prometheus]:
    """A Prometheus on 127.0.0.1 holding the layout's series around `at` (see the module docstring and Span)."""
    with tempfile.TemporaryDirectory(prefix="bench-prometheus-", dir=workdir) as tmp:
        root = Path(tmp)
        data, tsdb = root / "series.om", root / "tsdb"
        write_openmetrics(data, layout, at, span=span, pods=pods)
        subprocess.run(
            [binary("promtool"), "tsdb", "create-blocks-from", "openmetrics", str(data), str(tsdb)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        data.unlink()
        (root / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\n")
        port = free_port()
        argv = [
            binary("prometheus"),
            f"--web.listen-address=127.0.0.1:{port}",
            f"--storage.tsdb.path={tsdb}",
            f"--config.file={root / 'prometheus.yml'}",
            "--storage.tsdb.retention.time=3650d",
        ]
        version = subprocess.run([argv[0], "--version"], capture_output=True, text=True).stdout.split("\n")[0]
        log = root / "prometheus.log"
        try:
            process, url = server.spawn(
                "prometheus", argv, port=port, log_path=log, ready=server.answers("/-/ready"), deadline_seconds=120.0
            )
        except RuntimeError as err:
            raise SystemExit(str(err)) from None
        running = Prometheus(process, url, log, version)
        try:
            yield running
        finally:
            running.stop()


def settings(url: str, *, max_concurrent_queries: int = 8) -> MetricsSettings:
    """Metrics settings for one server `main` and the request-rate template `rps`."""
    return MetricsSettings.model_validate(
        {
            "servers": {"main": {"url": url, "timeoutSeconds": 30}},
            "templates": {
                RPS_TEMPLATE: {
                    "query": "sum by (${by}) (rate(http_requests_total{${matchers}}[${window}]))",
                    "freshness": "http_requests_total{${matchers}}",
                }
            },
            "maxConcurrentQueries": max_concurrent_queries,
            "passDeadlineSeconds": 60,
        }
    )


def requests(layout: Layout, now: datetime) -> list[MetricRequest]:
    """Two metrics per target, as the daemon would ask: CPU utilization (Resource) and requests per second
    per pod (Pods, through the `rps` template)."""
    started = now - timedelta(hours=1)
    cpu = MetricSpec(
        type=MetricSourceType.RESOURCE,
        target=MetricTarget(MetricTargetType.UTILIZATION, average_utilization=70),
        resource_name="cpu",
    )
    rps = MetricSpec(
        type=MetricSourceType.PODS,
        target=MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=3000),
        metric_name="http_requests",
    )
    binding = PrometheusBinding.model_validate({"template": RPS_TEMPLATE})
    template = Pod(
        name="",
        phase=PodPhase.RUNNING,
        ready="True",
        labels={},
        containers=(Container("app", {"cpu": 500}),),
        start_time=started,
        ready_transition=started,
    )
    out = []
    for target in range(layout.targets):
        namespace = layout.namespace(target)
        pods = tuple(
            replace(template, name=name, namespace=namespace, labels={"app": f"t{target}"})
            for name in layout.pod_names(target)
        )
        context = ReadContext(namespace=namespace, pods=pods, selector=f"app=t{target}", now=now)
        out.append(MetricRequest(spec=cpu, context=context, key=(target, 0)))
        out.append(MetricRequest(spec=rps, context=context, binding=binding, key=(target, 1)))
    return out


def evaluation_time() -> datetime:
    """A whole minute, ten minutes ago: the newest samples' time and the pass's `now`."""
    return datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=10)


# -- the emulator -------------------------------------------------------------------------------------------


class ShiftedClock:
    """The system clock moved back by `offset` (set to zero once the cluster is seeded): pods created while
    seeding were created, started and made ready an hour before the benchmark's now."""

    def __init__(self, offset: timedelta) -> None:
        self.offset = offset

    def now(self) -> datetime:
        return datetime.now(UTC) - self.offset


def deployment(layout: Layout, target: int) -> dict[str, Any]:
    """Target `target`'s Deployment: `layout.pods` replicas, one container requesting 500m CPU."""
    labels = {"app": f"t{target}"}
    container = {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "500m"}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"t{target}", "namespace": layout.namespace(target), "labels": labels},
        "spec": {
            "replicas": layout.pods,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


@contextmanager
def emulator(layout: Layout, *, history_size: int = 10_000) -> Iterator[EmulatedApiServer]:
    """A running emulator (pods moved along every 0.1 s) holding the layout's Deployments, each with its
    ReplicaSet and ready pods, created through the emulator's own controllers (no start or readiness delay)
    an hour before now."""
    clock = ShiftedClock(timedelta(hours=1))
    namespaces = ("default", "kube-system", *(f"ns-{i}" for i in range(layout.namespaces)))
    server = EmulatedApiServer(
        clock=clock, tick_interval_seconds=0.1, history_size=history_size, emit_events=False, namespaces=namespaces
    )
    for target in range(layout.targets):
        server.create(deployment(layout, target))
    server.lifecycle.tick(everything=True)  # Pending -> Running and Ready at once (no delays)
    clock.offset = timedelta(0)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def pod_names(server: EmulatedApiServer, layout: Layout) -> list[list[str]]:
    """Each target's pod names as the emulator's ReplicaSet controller made them (`t<i>-<hash>-<suffix>`)."""
    names: list[list[str]] = [[] for _ in range(layout.targets)]
    for namespace in range(layout.namespaces):
        for pod in server.list("v1", "Pod", namespace=f"ns-{namespace}"):
            app = pod["metadata"]["labels"]["app"]
            names[int(app[1:])].append(pod["metadata"]["name"])
    return names
