"""Every metric type and target type end to end: known series in a real Prometheus, exact readings out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from autoscaler.core.types import (
    ContainerUsage,
    ExternalReading,
    MetricSourceType,
    MetricTargetType,
    ObjectReading,
    ObjectReference,
    PodsReading,
    PodUsage,
    PodValue,
    ResourceReading,
)
from autoscaler.metrics import MetricsReader
from tests.metrics import remote_write
from tests.metrics.helpers import context, pod, request, spec
from tests.metrics.server import PrometheusServer

NS = "readings"
RES, PODS = MetricSourceType.RESOURCE, MetricSourceType.PODS
OBJ, EXT = MetricSourceType.OBJECT, MetricSourceType.EXTERNAL
U, V, AV = MetricTargetType.UTILIZATION, MetricTargetType.VALUE, MetricTargetType.AVERAGE_VALUE


def _counter(labels: dict[str, str], t: datetime, per_second: float) -> remote_write.TimeSeries:
    """A counter sampled every 15 s over the last minute, growing at `per_second`."""
    points = [((t - timedelta(seconds=60 - 15 * i)).timestamp(), 100 + per_second * 15 * i) for i in range(5)]
    return remote_write.TimeSeries(labels, points)


def _gauge(labels: dict[str, str], t: datetime, value: float, age_seconds: float = 0) -> remote_write.TimeSeries:
    return remote_write.TimeSeries(labels, [((t - timedelta(seconds=age_seconds)).timestamp(), value)])


@pytest.fixture(scope="module")
def data(prometheus: PrometheusServer, base_time: datetime) -> datetime:
    """The series of this module, written once; returns the evaluation time."""
    t = base_time
    cpu = "container_cpu_usage_seconds_total"
    mem = "container_memory_working_set_bytes"

    def labels(name: str, pod_name: str, container: str, namespace: str = NS) -> dict[str, str]:
        return {"__name__": name, "namespace": namespace, "pod": pod_name, "container": container}

    remote_write.push(
        prometheus.url,
        [
            _counter(labels(cpu, "web-1", "app"), t, 0.25),
            _counter(labels(cpu, "web-1", "sidecar"), t, 0.05),
            _counter(labels(cpu, "web-2", "app"), t, 0.5),
            _counter(labels(cpu, "web-2", "POD"), t, 0.01),  # the pause container: never counted
            _counter(labels(cpu, "web-2", ""), t, 0.6),  # the pod-level cgroup: never counted
            _counter(labels(cpu, "other-1", "app"), t, 1.0),  # not one of the target's pods
            _counter(labels(cpu, "web-1", "app", namespace="elsewhere"), t, 2.0),
            _gauge(labels(mem, "web-1", "app"), t, 104857600, age_seconds=5),
            _gauge(labels(mem, "web-2", "app"), t, 52428800.5, age_seconds=5),
            _gauge({"__name__": "http_requests_per_second", "namespace": NS, "pod": "web-1"}, t, 12.5, 10),
            _gauge({"__name__": "http_requests_per_second", "namespace": NS, "pod": "web-2"}, t, 7.25, 10),
            _counter({"__name__": "http_requests_total", "namespace": NS, "pod": "web-1", "code": "200"}, t, 3),
            _counter({"__name__": "http_requests_total", "namespace": NS, "pod": "web-1", "code": "500"}, t, 1),
            _counter({"__name__": "http_requests_total", "namespace": NS, "pod": "web-2", "code": "200"}, t, 2),
            _gauge({"__name__": "ingress_requests_per_second", "namespace": NS, "ingress": "main"}, t, 42.5, 10),
            _gauge({"__name__": "ingress_requests_per_second", "namespace": NS, "ingress": "admin"}, t, 1, 10),
            _gauge({"__name__": "rabbitmq_queue_messages_ready", "queue": "orders", "vhost": "/"}, t, 1234, 20),
            _gauge({"__name__": "rabbitmq_queue_messages_ready", "queue": "mail", "vhost": "/"}, t, 3, 20),
            _gauge({"__name__": "kafka_consumergroup_lag", "consumergroup": "billing", "partition": "0"}, t, 5, 30),
            _gauge({"__name__": "kafka_consumergroup_lag", "consumergroup": "billing", "partition": "1"}, t, 7, 30),
            _counter({"__name__": "shop_orders_total", "shop": "eu"}, t, 4.5),
        ],
    )
    return t


@pytest.fixture
def reader(prometheus: PrometheusServer, make_reader: Callable[..., MetricsReader]) -> MetricsReader:
    return make_reader(
        prometheus.url,
        settings={
            "templates": {
                "http-rate": {
                    "query": 'sum by (${by}) (rate(http_requests_total{${matchers}, code!~"5.."}[${window}]))',
                    "freshness": "http_requests_total{${matchers}}",
                    "windowSeconds": 60,
                }
            }
        },
    )


@pytest.mark.parametrize(
    "metric_type", [RES, MetricSourceType.CONTAINER_RESOURCE], ids=["Resource", "ContainerResource"]
)
@pytest.mark.parametrize("target", [U, AV], ids=["Utilization", "AverageValue"])
def test_cpu_per_container_rates(
    reader: MetricsReader, data: datetime, metric_type: MetricSourceType, target: MetricTargetType
) -> None:
    """CPU comes back per pod and container in millicores, the pause container and other pods left out."""
    ctx = context(NS, data, pod("web-1", "app", "sidecar"), pod("web-2", "app"))
    reading = reader.read_one(request(spec(metric_type, target, resource="cpu", container="app"), ctx))
    assert reading == ResourceReading(
        pods=(
            PodUsage(
                "web-1", data, 60.0, (ContainerUsage("app", {"cpu": 250}), ContainerUsage("sidecar", {"cpu": 50}))
            ),
            PodUsage("web-2", data, 60.0, (ContainerUsage("app", {"cpu": 500}),)),
        )
    )


def test_memory_working_set(reader: MetricsReader, data: datetime) -> None:
    """Memory is bytes in milli-units, rounded up like Quantity.MilliValue; the timestamp is the sample's when
    it is older than a minute, the time asked otherwise (the lean sample-time query: docs/metrics.md)."""
    for asked, stamp in ((data, data), (data + timedelta(seconds=60), data - timedelta(seconds=5))):
        ctx = context(NS, asked, pod("web-1", "app"), pod("web-2", "app"))
        reading = reader.read_one(request(spec(RES, AV, resource="memory"), ctx))
        assert reading == ResourceReading(
            pods=(
                PodUsage("web-1", stamp, 60.0, (ContainerUsage("app", {"memory": 104857600000}),)),
                PodUsage("web-2", stamp, 60.0, (ContainerUsage("app", {"memory": 52428800500}),)),
            )
        )


def test_pods_default_template(reader: MetricsReader, data: datetime) -> None:
    for asked, stamp in ((data, data), (data + timedelta(seconds=55), data - timedelta(seconds=10))):
        ctx = context(NS, asked, pod("web-1"), pod("web-2"))
        reading = reader.read_one(request(spec(PODS, AV, metric="http_requests_per_second"), ctx))
        assert reading == PodsReading((PodValue("web-1", 12500, stamp, 60.0), PodValue("web-2", 7250, stamp, 60.0)))


def test_pods_named_template(reader: MetricsReader, data: datetime) -> None:
    """A settings template with a rate: 5xx excluded; the freshness selector gives the sample times."""
    ctx = context(NS, data, pod("web-1"), pod("web-2"))
    reading = reader.read_one(request(spec(PODS, AV, metric="http_requests"), ctx, {"template": "http-rate"}))
    assert reading == PodsReading((PodValue("web-1", 3000, data, 60.0), PodValue("web-2", 2000, data, 60.0)))


def test_pods_raw_query(reader: MetricsReader, data: datetime) -> None:
    """A raw query (KEDA style) with a placeholder; without freshness its times are the evaluation time."""
    ctx = context(NS, data, pod("web-1"), pod("web-2"))
    query = 'sum by (namespace, pod) (rate(http_requests_total{namespace="${namespace}"}[1m]))'
    reading = reader.read_one(request(spec(PODS, AV, metric="rps"), ctx, {"query": query, "windowSeconds": 30}))
    assert reading == PodsReading((PodValue("web-1", 4000, data, 30.0), PodValue("web-2", 2000, data, 30.0)))


@pytest.mark.parametrize("target", [V, AV], ids=["Value", "AverageValue"])
def test_object_ingress(reader: MetricsReader, data: datetime, target: MetricTargetType) -> None:
    """The described object is matched by its kind's label; the default template is a plain selector."""
    ctx = context(NS, data, pod("web-1"))
    metric = spec(OBJ, target, metric="ingress_requests_per_second", described=ObjectReference("Ingress", "main"))
    reading = reader.read_one(request(metric, ctx))
    assert reading == ObjectReading(value=42500, timestamp=data - timedelta(seconds=10))


@pytest.mark.parametrize("target", [V, AV], ids=["Value", "AverageValue"])
def test_external_queue_depth(reader: MetricsReader, data: datetime, target: MetricTargetType) -> None:
    ctx = context(NS, data, pod("web-1"))
    metric = spec(EXT, target, metric="rabbitmq_queue_messages_ready", selector={"queue": "orders"})
    reading = reader.read_one(request(metric, ctx))
    assert reading == ExternalReading(values=(1234000,), timestamp=data - timedelta(seconds=20))


def test_external_sum_series(reader: MetricsReader, data: datetime) -> None:
    """Kafka lag per partition: two series, accepted because the binding asks to sum them."""
    ctx = context(NS, data, pod("web-1"))
    metric = spec(EXT, AV, metric="kafka_consumergroup_lag", selector={"consumergroup": "billing"})
    reading = reader.read_one(request(metric, ctx, {"sumSeries": True}))
    assert reading == ExternalReading(values=(5000, 7000), timestamp=data - timedelta(seconds=30))


def test_external_raw_aggregate(reader: MetricsReader, data: datetime) -> None:
    """A raw `sum()` of one selector, no `freshness`: stamped with the selector's sample time (30 s old), not the
    time asked; with a `freshness` of its own, that one's."""
    ctx = context(NS, data, pod("web-1"))
    query = 'sum(kafka_consumergroup_lag{consumergroup="billing"})'
    reading = reader.read_one(request(spec(EXT, V, metric="lag"), ctx, {"query": query}))
    assert reading == ExternalReading(values=(12000,), timestamp=data - timedelta(seconds=30))
    binding = {"query": query, "freshness": 'rabbitmq_queue_messages_ready{queue="orders"}'}
    reading = reader.read_one(request(spec(EXT, V, metric="lag"), ctx, binding))
    assert reading == ExternalReading(values=(12000,), timestamp=data - timedelta(seconds=20))


def test_scalar_business_metric(reader: MetricsReader, data: datetime) -> None:
    """Orders per second as a scalar result, the binding saying so."""
    ctx = context(NS, data, pod("web-1"))
    query = 'scalar(sum(rate(shop_orders_total{shop="eu"}[1m])))'
    binding = {"query": query, "resultType": "scalar"}
    assert reader.read_one(
        request(spec(OBJ, V, metric="orders", described=ObjectReference("Service", "shop")), ctx, binding)
    ) == ObjectReading(4500, data)
    assert reader.read_one(request(spec(EXT, AV, metric="orders"), ctx, binding)) == ExternalReading((4500,), data)


def test_object_label_overrides(reader: MetricsReader, prometheus: PrometheusServer, data: datetime) -> None:
    """ingress-nginx behind a ServiceMonitor: the namespace is `exported_namespace`, the object `ingress`;
    both the docs' raw query and the label options read it."""
    labels = {"__name__": "nginx_ingress_controller_requests", "exported_namespace": NS, "ingress": "storefront"}
    remote_write.push(
        prometheus.url,
        [
            _counter({**labels, "status": "200"}, data, 30),
            _counter({**labels, "status": "404"}, data, 1.5),
            _gauge({"__name__": "lb_connections", "exported_namespace": NS, "backend": "storefront"}, data, 8),
        ],
    )
    ctx = context(NS, data, pod("web-1"))
    metric = spec(OBJ, V, metric="ingress_requests_per_second", described=ObjectReference("Ingress", "storefront"))
    query = (
        'sum(rate(nginx_ingress_controller_requests{exported_namespace="${namespace}", ingress="${object_name}"}[1m]))'
    )
    assert reader.read_one(request(metric, ctx, {"query": query})) == ObjectReading(31500, data)
    by_labels = spec(OBJ, V, metric="lb_connections", described=ObjectReference("Service", "storefront"))
    binding = {"objectLabel": "backend", "namespaceLabel": "exported_namespace"}
    assert reader.read_one(request(by_labels, ctx, binding)) == ObjectReading(8000, data)


def test_container_resource_custom_template(reader: MetricsReader, data: datetime) -> None:
    """A per-spec raw query may narrow to the named container with `${container}`."""
    ctx = context(NS, data, pod("web-1", "app", "sidecar"))
    query = 'sum by (${by}) (rate(container_cpu_usage_seconds_total{${matchers}, container="${container}"}[${window}]))'
    metric = spec(MetricSourceType.CONTAINER_RESOURCE, U, resource="cpu", container="sidecar")
    reading = reader.read_one(request(metric, ctx, {"query": query}))
    assert reading == ResourceReading(pods=(PodUsage("web-1", data, 60.0, (ContainerUsage("sidecar", {"cpu": 50}),)),))


def test_resource_empty_as_zero(reader: MetricsReader, data: datetime) -> None:
    """Opted in, a pod without any series reads as zero usage in each of its containers."""
    ctx = context("readings-empty", data, pod("idle-1", "app", "sidecar"))
    binding = {"emptyAsZero": True}
    reading = reader.read_one(request(spec(RES, U, resource="cpu"), ctx, binding))
    expected = (ContainerUsage("app", {"cpu": 0}), ContainerUsage("sidecar", {"cpu": 0}))
    assert reading == ResourceReading(pods=(PodUsage("idle-1", data, 60.0, expected),))
