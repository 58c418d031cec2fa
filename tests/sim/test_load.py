"""The load model end to end: the emulator's pods on the real clock, a real Prometheus scraping the model every
second, and the built-in CPU template read through the metric-source layer."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.core.types import Container, MetricSourceType, MetricTargetType, Pod, PodPhase, ResourceReading
from autoscaler.metrics import MetricsError, MetricsReader, MetricsSettings
from autoscaler.metrics.registry import SourceRegistry
from autoscaler.metrics.settings import ResourceTemplates
from autoscaler.sim.apiserver import EmulatedApiServer
from autoscaler.sim.load import LoadGenerator, Series, Workload, WorkloadRef
from tests.metrics import server
from tests.metrics.helpers import context, request, spec
from tests.sim.conftest import NS, reported, workload

WINDOW = 5  # seconds of rate window: five scrapes at 1 s
TOLERANCE = 0.15


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatedApiServer]:
    with EmulatedApiServer(crds=[], start_delay_seconds=0.2, ready_delay_seconds=0.2) as srv:
        yield srv


@pytest.fixture(scope="module")
def generator(emulator: EmulatedApiServer) -> Iterator[LoadGenerator]:
    with LoadGenerator([], api_url=emulator.url, port=server.free_port(), poll_interval_seconds=0.2) as gen:
        yield gen


@pytest.fixture(scope="module")
def prometheus(generator: LoadGenerator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[server.ServerProcess]:
    """A Prometheus scraping the load model every second; its absence FAILS the tests."""
    binary = server.find_binary()
    if binary is None:
        pytest.fail("no prometheus binary: run scripts/install-prometheus.sh (make deps)", pytrace=False)
    workdir = tmp_path_factory.mktemp("prometheus-load")
    config = workdir / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"scrape_configs:\n- job_name: load\n  static_configs: [{{targets: ['127.0.0.1:{generator.port}']}}]\n"
    )
    port = server.free_port()
    argv = [binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{port}",
            f"--storage.tsdb.path={workdir / 'tsdb'}"]  # fmt: skip
    try:
        process, url = server.spawn(
            "prometheus", argv, port=port, log_path=workdir / "log", ready=server.answers("/-/ready"),
            deadline_seconds=30,
        )  # fmt: skip
    except (RuntimeError, OSError) as err:
        pytest.fail(f"prometheus failed to start: {err}", pytrace=False)
    running = server.ServerProcess(process, url, workdir / "log")
    yield running
    running.stop()


class Demand:
    """A curve a test changes while the model runs."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self, t: float) -> float:
        return self.value


def deploy(emulator: EmulatedApiServer, name: str, replicas: int, *, limit: str | None = None) -> None:
    manifest = workload("Deployment", name, replicas=replicas)
    if limit is not None:
        manifest["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": limit}
    emulator.create(manifest)


def scale(emulator: EmulatedApiServer, name: str, replicas: int) -> None:
    current = emulator.get("apps/v1", "Deployment", name, namespace=NS)
    current["spec"]["replicas"] = replicas
    emulator.apply(current)


def query(prometheus: server.ServerProcess, promql: str) -> dict[str, float]:
    """An instant query's values by their `pod` (or `queue`) label."""
    url = f"{prometheus.url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.loads(response.read())
    return {
        r["metric"].get("pod") or r["metric"].get("queue", ""): float(r["value"][1]) for r in body["data"]["result"]
    }


def cpu_rates(prometheus: server.ServerProcess, name: str) -> dict[str, float]:
    return query(
        prometheus,
        f'rate(container_cpu_usage_seconds_total{{namespace="{NS}", pod=~"{name}-.*", container="app"}}[{WINDOW}s])',
    )


def ready_pods(emulator: EmulatedApiServer, name: str) -> list[str]:
    pods = emulator.list("v1", "Pod", namespace=NS, label_selector=f"app={name}")
    return sorted(
        p["metadata"]["name"]
        for p in pods
        if any(c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", []))
    )


def ready(emulator: EmulatedApiServer, name: str, count: int) -> list[str]:
    """The workload's ready pods, asserting there are `count` of them."""
    pods = ready_pods(emulator, name)
    assert len(pods) == count, pods
    return pods


def eventually(check: Callable[[], Any], *, deadline_seconds: float = 40.0) -> Any:
    """Poll `check` until it returns without an AssertionError; after the deadline, raise its last failure."""
    end = time.monotonic() + deadline_seconds
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > end:
                raise
        time.sleep(0.25)  # polling interval, not a wait for time to pass


def near(value: float, expected: float) -> bool:
    return abs(value - expected) <= TOLERANCE * max(expected, 0.05)


def expect_rates(prometheus: server.ServerProcess, name: str, expected: dict[str, float]) -> None:
    got = cpu_rates(prometheus, name)
    assert set(got) == set(expected), got
    assert all(near(got[pod], value) for pod, value in expected.items()), (got, expected)


def test_cpu_per_ready_pod_is_the_load_over_ready_pods_and_saturates_at_the_limit(
    emulator: EmulatedApiServer, generator: LoadGenerator, prometheus: server.ServerProcess
) -> None:
    deploy(emulator, "split", 2, limit="500m")
    demand = Demand(0.6)
    generator.add(Workload(WorkloadRef(NS, "Deployment", "split"), demand))
    pods = eventually(lambda: ready(emulator, "split", 2))
    eventually(lambda: expect_rates(prometheus, "split", dict.fromkeys(pods, 0.3)))
    demand.value = 3.0  # 1.5 cores asked of each pod: the 500m limit caps it
    eventually(lambda: expect_rates(prometheus, "split", dict.fromkeys(pods, 0.5)))


def test_scaling_spreads_the_load_and_unready_pods_get_nothing(
    emulator: EmulatedApiServer, generator: LoadGenerator, prometheus: server.ServerProcess
) -> None:
    deploy(emulator, "spread", 2)
    generator.add(Workload(WorkloadRef(NS, "Deployment", "spread"), Demand(1.2)))
    first = eventually(lambda: ready(emulator, "spread", 2))
    eventually(lambda: expect_rates(prometheus, "spread", dict.fromkeys(first, 0.6)))

    emulator.lifecycle.set_delays(
        "Deployment", "spread", namespace=NS, start_delay_seconds=0.2, ready_delay_seconds=3600
    )
    scale(emulator, "spread", 4)  # two pods that start but never become ready

    def two_unready_at_zero() -> list[str]:
        got = cpu_rates(prometheus, "spread")
        assert len(got) == 4, got
        unready = sorted(set(got) - set(first))
        expect_rates(prometheus, "spread", dict.fromkeys(first, 0.6) | dict.fromkeys(unready, 0.0))
        return unready

    unready = eventually(two_unready_at_zero)
    assert len(unready) == 2 and not set(unready) & set(ready_pods(emulator, "spread"))

    emulator.lifecycle.set_delays(
        "Deployment", "spread", namespace=NS, start_delay_seconds=0.2, ready_delay_seconds=0.2
    )
    scale(emulator, "spread", 6)  # two more that become ready: four ready pods share 1.2 cores
    added = eventually(lambda: sorted(set(ready(emulator, "spread", 4)) - set(first)))
    expected = dict.fromkeys([*first, *added], 0.3) | dict.fromkeys(unready, 0.0)
    eventually(lambda: expect_rates(prometheus, "spread", expected))


def test_the_queue_grows_when_processing_is_short_and_drains_when_pods_are_added(
    emulator: EmulatedApiServer, generator: LoadGenerator, prometheus: server.ServerProcess
) -> None:
    deploy(emulator, "worker", 1)
    ref = WorkloadRef(NS, "Deployment", "worker")
    generator.add(Workload(ref, Demand(5.0), series=frozenset({Series.QUEUE, Series.CPU}), capacity=2.0, cost=0.1))
    depth = f'queue_depth{{namespace="{NS}", queue="worker"}}'

    def grown() -> None:
        assert query(prometheus, depth).get("worker", 0) > 20  # grows at 3 items/s with one pod

    eventually(grown)
    scale(emulator, "worker", 4)  # 8 items/s: drains at 3 items/s

    def drained() -> None:
        assert query(prometheus, depth) == {"worker": 0.0}
        assert generator.model.ready_pods(ref) == 4

    eventually(drained, deadline_seconds=60)


def test_the_builtin_cpu_template_reads_the_model_unchanged(
    emulator: EmulatedApiServer, generator: LoadGenerator, prometheus: server.ServerProcess
) -> None:
    """The default Resource cpu PromQL (only its window shortened) gives each pod load/ready x cost cores."""
    deploy(emulator, "tmpl", 3)
    generator.add(Workload(WorkloadRef(NS, "Deployment", "tmpl"), Demand(0.45), series=frozenset({Series.CPU})))
    names = eventually(lambda: ready(emulator, "tmpl", 3))
    builtin = ResourceTemplates().cpu
    settings = MetricsSettings.model_validate({
        "servers": {"main": {"url": prometheus.url}},
        "resourceTemplates": {"cpu": {"query": builtin.query, "freshness": builtin.freshness, "windowSeconds": WINDOW}},
    })  # fmt: skip
    reader = MetricsReader(settings, registry=SourceRegistry.builtin())
    pods = [
        Pod(n, PodPhase.RUNNING, {"app": "tmpl"}, "True", namespace=NS, containers=(Container("app", {"cpu": 250}),))
        for n in names
    ]

    def utilization() -> None:
        metric = spec(MetricSourceType.RESOURCE, MetricTargetType.UTILIZATION, resource="cpu")
        try:
            reading = reader.read_one(request(metric, context(NS, datetime.now(UTC), *pods)))
        except MetricsError as err:  # no sample of the new pods yet: poll again
            raise AssertionError(str(err)) from err
        assert isinstance(reading, ResourceReading)
        used = {u.pod: sum(c.usage["cpu"] for c in u.containers) for u in reading.pods}
        assert set(used) == set(names), "one reading per pod, the pod-level cgroup series left out"
        assert all(near(m / 250, 0.6) for m in used.values()), used  # 150m of a 250m request: 60 %

    try:
        eventually(utilization)
    finally:
        reader.close()


def test_the_exposition_parses(generator: LoadGenerator) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    names = {f.name for f in text_string_to_metric_families(generator.exposition().decode())}
    assert {"container_cpu_usage_seconds", "http_requests", "queue_depth", "load_model_demand"} <= names


def test_a_scraper_gone_mid_answer_prints_nothing(generator: LoadGenerator) -> None:
    """A scrape that timed out and closed its connection (BrokenPipe, reset, aborted) is not the exporter's
    error; anything else is still printed, as socketserver does."""
    httpd = generator._httpd
    assert httpd is not None
    for error, printed in (
        (BrokenPipeError(32, "Broken pipe"), False),
        (ConnectionAbortedError(103, "Software caused connection abort"), False),
        (ValueError("a bug"), True),
    ):
        text = reported(httpd, error)
        assert ("ValueError: a bug" in text) == printed, text
        assert "Traceback" not in text or printed
