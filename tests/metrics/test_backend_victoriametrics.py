"""The metric-source layer against each backend the docs call tested: the same series written into a real
Prometheus (Debian's 2.42) and a real VictoriaMetrics (Debian's 1.79), the same readings out of both.

Every test runs once per backend. Where the two answer differently (NaN, a bad query) the expectation names
the backend, and docs/compatibility.md says the same. A missing or broken victoria-metrics binary FAILS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest

from autoscaler.core.types import (
    ContainerUsage,
    ExternalReading,
    MetricSourceType,
    MetricSpec,
    MetricTargetType,
    ObjectReading,
    ObjectReference,
    PodsReading,
    PodUsage,
    PodValue,
    Reading,
    ResourceReading,
)
from autoscaler.metrics import MetricsError, MetricsReader, NoDataError, PermanentError, StaleDataError
from autoscaler.metrics.registry import SourceRegistry
from autoscaler.metrics.settings import MetricsSettings
from tests.metrics import remote_write, victoriametrics
from tests.metrics.helpers import context, pod, request, spec

NS = "backends"
RES, PODS = MetricSourceType.RESOURCE, MetricSourceType.PODS
OBJ, EXT = MetricSourceType.OBJECT, MetricSourceType.EXTERNAL
U, V, AV = MetricTargetType.UTILIZATION, MetricTargetType.VALUE, MetricTargetType.AVERAGE_VALUE
CPU, MEMORY = "container_cpu_usage_seconds_total", "container_memory_working_set_bytes"


@pytest.fixture(scope="session")
def victoria_metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[victoriametrics.VictoriaMetricsServer]:
    """A running VictoriaMetrics; its absence or failure to start FAILS the tests (never a skip)."""
    binary = victoriametrics.find_binary()
    if binary is None:
        pytest.fail(
            "no victoria-metrics binary: run scripts/install-victoria-metrics.sh (make deps) or put it on the PATH",
            pytrace=False,
        )
    try:
        running = victoriametrics.start(binary, tmp_path_factory.mktemp("victoria-metrics"))
    except (RuntimeError, OSError) as err:
        pytest.fail(f"victoria-metrics failed to start: {err}", pytrace=False)
    yield running
    running.stop()


def _counter(labels: dict[str, str], t: datetime, per_second: float) -> remote_write.TimeSeries:
    """A counter sampled every 15 s over the minute before `t`, growing at `per_second`."""
    points = [((t - timedelta(seconds=60 - 15 * i)).timestamp(), 100 + per_second * 15 * i) for i in range(5)]
    return remote_write.TimeSeries({"namespace": NS, **labels}, points)


def _gauge(labels: dict[str, str], t: datetime, value: float, age_seconds: float = 0) -> remote_write.TimeSeries:
    return remote_write.TimeSeries(
        {"namespace": NS, **labels}, [((t - timedelta(seconds=age_seconds)).timestamp(), value)]
    )


def _series(t: datetime) -> list[remote_write.TimeSeries]:
    """Every series of this module (metric names start with backend_ where the name is free)."""
    return [
        _counter({"__name__": CPU, "pod": "web-1", "container": "app"}, t, 0.25),
        _counter({"__name__": CPU, "pod": "web-1", "container": "sidecar"}, t, 0.05),
        _counter({"__name__": CPU, "pod": "web-2", "container": "app"}, t, 0.5),
        _counter({"__name__": CPU, "pod": "web-2", "container": "POD"}, t, 0.01),  # the pause container
        _counter({"__name__": CPU, "pod": "web-2", "container": ""}, t, 0.6),  # the pod-level cgroup
        _counter({"__name__": CPU, "pod": "other-1", "container": "app"}, t, 1.0),  # not a target pod
        _gauge({"__name__": MEMORY, "pod": "web-1", "container": "app"}, t, 104857600, 5),
        _gauge({"__name__": MEMORY, "pod": "web-2", "container": "app"}, t, 52428800.5, 75),
        _gauge({"__name__": "backend_requests_per_second", "pod": "web-1"}, t, 12.5, 10),
        _gauge({"__name__": "backend_requests_per_second", "pod": "web-2"}, t, 7.25, 70),
        _counter({"__name__": "backend_requests_total", "pod": "web-1", "code": "200"}, t, 3),
        _counter({"__name__": "backend_requests_total", "pod": "web-1", "code": "500"}, t, 1),
        _counter({"__name__": "backend_requests_total", "pod": "web-2", "code": "200"}, t, 2),
        _gauge({"__name__": "backend_ingress_rps", "ingress": "main"}, t, 42.5, 10),
        _gauge({"__name__": "backend_ingress_rps", "ingress": "admin"}, t, 1, 10),
        _gauge({"__name__": "backend_queue_ready", "queue": "orders"}, t, 1234, 20),
        _gauge({"__name__": "backend_queue_ready", "queue": "mail"}, t, 3, 20),
        _gauge({"__name__": "backend_odd", "v": "nan"}, t, float("nan")),
        _gauge({"__name__": "backend_odd", "v": "inf"}, t, float("inf")),
        _gauge({"__name__": "backend_odd", "v": "-inf"}, t, float("-inf")),
        _gauge({"__name__": "backend_odd_pods", "pod": "a"}, t, float("nan")),
        _gauge({"__name__": "backend_odd_pods", "pod": "b"}, t, 1),
        _gauge({"__name__": "backend_two", "path": "/a"}, t, 1),
        _gauge({"__name__": "backend_two", "path": "/b"}, t, 2),
        _gauge({"__name__": "backend_old"}, t, 5, 200),
    ]


@dataclass(frozen=True)
class Backend:
    """One server under test, with this module's series written into it."""

    name: str
    url: str
    t: datetime


@pytest.fixture(scope="module", params=["prometheus", "victoriametrics"])
def backend(request: pytest.FixtureRequest, base_time: datetime) -> Backend:
    push: Callable[[Iterable[remote_write.TimeSeries]], None]
    if request.param == "prometheus":
        url = request.getfixturevalue("prometheus").url
        push = partial(remote_write.push, url)
    else:
        server = request.getfixturevalue("victoria_metrics")
        url, push = server.url, server.push
    push(_series(base_time))
    return Backend(request.param, url, base_time)


@pytest.fixture
def reader(backend: Backend, make_reader: Callable[..., MetricsReader]) -> MetricsReader:
    template = {
        "query": 'sum by (${by}) (rate(backend_requests_total{${matchers}, code!~"5.."}[${window}]))',
        "freshness": "backend_requests_total{${matchers}}",
        "windowSeconds": 60,
    }
    return make_reader(backend.url, settings={"templates": {"requests": template}})


def _ago(t: datetime, seconds: float) -> datetime:
    return t - timedelta(seconds=seconds)


# (id, metric spec, target pods, binding, the reading expected from every backend, given the evaluation time)
READINGS: list[Any] = [
    pytest.param(
        spec(RES, U, resource="cpu"),
        (pod("web-1", "app", "sidecar"), pod("web-2", "app")),
        None,
        lambda t: ResourceReading(
            pods=(
                PodUsage(
                    "web-1", t, 60.0, (ContainerUsage("app", {"cpu": 250}), ContainerUsage("sidecar", {"cpu": 50}))
                ),
                PodUsage("web-2", t, 60.0, (ContainerUsage("app", {"cpu": 500}),)),
            )
        ),
        id="Resource cpu: per-container rates, the pause container, pod cgroup and other pods left out",
    ),
    pytest.param(
        spec(RES, AV, resource="memory"),
        (pod("web-1"), pod("web-2")),
        None,
        lambda t: ResourceReading(
            pods=(
                # 5 s old: within the lean query's minute, read as sampled at the time asked
                PodUsage("web-1", t, 60.0, (ContainerUsage("app", {"memory": 104857600000}),)),
                PodUsage("web-2", _ago(t, 75), 60.0, (ContainerUsage("app", {"memory": 52428800500}),)),
            )
        ),
        id="Resource memory: bytes in milli-units, the sample's own time when older than a minute",
    ),
    pytest.param(
        spec(PODS, AV, metric="backend_requests_per_second"),
        (pod("web-1"), pod("web-2")),
        None,
        lambda t: PodsReading((PodValue("web-1", 12500, t, 60.0), PodValue("web-2", 7250, _ago(t, 70), 60.0))),
        id="Pods: default template",
    ),
    pytest.param(
        spec(PODS, AV, metric="requests"),
        (pod("web-1"), pod("web-2")),
        {"template": "requests"},
        lambda t: PodsReading((PodValue("web-1", 3000, t, 60.0), PodValue("web-2", 2000, t, 60.0))),
        id="Pods: a named template with a rate and a freshness selector",
    ),
    pytest.param(
        spec(PODS, AV, metric="rps"),
        (pod("web-1"), pod("web-2")),
        {"query": 'sum by (namespace, pod) (rate(backend_requests_total{namespace="${namespace}"}[1m]))'},
        lambda t: PodsReading((PodValue("web-1", 4000, t, 60.0), PodValue("web-2", 2000, t, 60.0))),
        id="Pods: a raw query with a placeholder",
    ),
    pytest.param(
        spec(OBJ, V, metric="backend_ingress_rps", described=ObjectReference("Ingress", "main")),
        (pod("web-1"),),
        None,
        lambda t: ObjectReading(value=42500, timestamp=_ago(t, 10)),
        id="Object: the described Ingress by its kind's label",
    ),
    pytest.param(
        spec(EXT, AV, metric="backend_queue_ready", selector={"queue": "orders"}),
        (pod("web-1"),),
        None,
        lambda t: ExternalReading(values=(1234000,), timestamp=_ago(t, 20)),
        id="External: a queue's depth by metric selector",
    ),
]


@pytest.mark.parametrize(("metric", "pods", "binding", "expected"), READINGS)
def test_readings(
    reader: MetricsReader,
    backend: Backend,
    metric: MetricSpec,
    pods: tuple[Any, ...],
    binding: dict[str, Any] | None,
    expected: Callable[[datetime], Reading],
) -> None:
    reading = reader.read_one(request(metric, context(NS, backend.t, *pods), binding))
    assert reading == expected(backend.t)


def _error(reader: MetricsReader, backend: Backend, metric: MetricSpec, binding: dict[str, Any] | None) -> MetricsError:
    outcome = reader.read([request(metric, context(NS, backend.t, pod("a"), pod("b")), binding)]).outcomes[0]
    assert isinstance(outcome, MetricsError), f"expected an error, got the reading {outcome!r}"
    return outcome


# (metric spec, binding, {backend: (error class, attribute, value)}; "*" for every backend)
ERRORS: list[Any] = [
    pytest.param(spec(EXT, metric="backend_nothing"), None, {"*": (NoDataError, "reason", "empty")}, id="empty"),
    pytest.param(
        spec(EXT, metric="backend_odd", selector={"v": "inf"}), None, {"*": (NoDataError, "reason", "+inf")}, id="+Inf"
    ),
    pytest.param(
        spec(EXT, metric="backend_odd", selector={"v": "-inf"}), None, {"*": (NoDataError, "reason", "-inf")}, id="-Inf"
    ),
    pytest.param(
        spec(EXT, metric="backend_odd", selector={"v": "nan"}),
        None,
        # VictoriaMetrics leaves NaN out of every answer: the series is simply not there.
        {"prometheus": (NoDataError, "reason", "nan"), "victoriametrics": (NoDataError, "reason", "empty")},
        id="NaN",
    ),
    pytest.param(
        spec(EXT, metric="backend_two"),
        None,
        {"*": (PermanentError, "error_type", "too_many_series")},
        id="two series where one is expected",
    ),
    pytest.param(
        spec(EXT, metric="backend_old"),
        {"stalenessSeconds": 60},
        {"*": (StaleDataError, "age_seconds", 200.0)},
        id="a sample older than the staleness budget",
    ),
    pytest.param(
        spec(EXT, metric="broken"),
        {"query": "sum(rate(x[1m])"},
        # Prometheus answers 400 bad_data, VictoriaMetrics 422 with errorType "422": both permanent.
        {"prometheus": (PermanentError, "status", 400), "victoriametrics": (PermanentError, "status", 422)},
        id="a query that does not parse",
    ),
]


@pytest.mark.parametrize(("metric", "binding", "expected"), ERRORS)
def test_errors(
    reader: MetricsReader,
    backend: Backend,
    metric: MetricSpec,
    binding: dict[str, Any] | None,
    expected: dict[str, tuple[type[MetricsError], str, object]],
) -> None:
    """Each failure comes back as the same typed error, never as a number."""
    error_class, attribute, value = expected.get(backend.name) or expected["*"]
    error = _error(reader, backend, metric, binding)
    assert isinstance(error, error_class), repr(error)
    assert getattr(error, attribute) == (pytest.approx(value) if isinstance(value, float) else value)


def test_nan_for_one_pod(reader: MetricsReader, backend: Backend) -> None:
    """Prometheus: the metric fails (NaN). VictoriaMetrics drops the NaN series: that pod is missing, and
    the core treats it as any pod without a sample (the HPA's missing-pod rule), not as a failed metric."""
    outcome = reader.read([request(spec(PODS, metric="backend_odd_pods"), context(NS, backend.t, pod("a"), pod("b")))])
    got = outcome.outcomes[0]
    if backend.name == "prometheus":
        assert isinstance(got, NoDataError) and got.reason == "nan"
    else:
        assert got == PodsReading((PodValue("b", 1000, backend.t, 60.0),))


def test_nan_with_empty_as_zero(reader: MetricsReader, backend: Backend) -> None:
    """emptyAsZero never turns a NaN into 0 on Prometheus; on VictoriaMetrics the NaN is already an empty
    answer by the time it arrives, so emptyAsZero reads it as 0 (docs/compatibility.md warns of this)."""
    req = request(spec(EXT, metric="backend_odd", selector={"v": "nan"}), context(NS, backend.t), {"emptyAsZero": True})
    got = reader.read([req]).outcomes[0]
    if backend.name == "prometheus":
        assert isinstance(got, NoDataError) and got.reason == "nan"
    else:
        assert got == ExternalReading((0,), backend.t)


def test_near_the_present_a_default_server_refuses_what_the_budget_refuses(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A VictoriaMetrics with its default flags evaluates a query asked within `-search.latencyOffset` (30 s) of
    the present at the present minus that offset, and stamps the answer with the time asked: its `time()` is not
    the time asked. The lean sample-time query's bound is therefore a number (the time asked minus a minute): a
    pod last sampled 75 s ago is marked and refused by a 60 s budget, as the exact form refuses it (with
    `time() - 60` it was left unmarked and read as current)."""
    binary = victoriametrics.find_binary()
    if binary is None:
        pytest.fail("no victoria-metrics binary: run scripts/install-victoria-metrics.sh (make deps)", pytrace=False)
    server = victoriametrics.start(binary, tmp_path_factory.mktemp("vm-defaults"), server_defaults=True)
    try:
        asked = datetime.now(UTC).replace(microsecond=0)
        name = "backend_near_now"
        last = {"fresh": 10, "mid": 75}  # seconds before the time asked of each pod's last sample
        server.push(
            remote_write.TimeSeries(
                {"__name__": name, "namespace": NS, "pod": one},
                [((asked - timedelta(seconds=age + 15 * i)).timestamp(), 5.0) for i in range(6)],
            )
            for one, age in last.items()
        )
        reader = MetricsReader(
            MetricsSettings.model_validate({"servers": {"main": {"url": server.url}}, "stalenessSeconds": 60}),
            registry=SourceRegistry.builtin(),
        )
        with reader:
            reading = reader.read_one(
                request(spec(PODS, AV, metric=name), context(NS, asked, pod("fresh"), pod("mid")))
            )
        assert isinstance(reading, PodsReading)
        assert [item.pod for item in reading.items] == ["fresh"]
    finally:
        server.stop()
