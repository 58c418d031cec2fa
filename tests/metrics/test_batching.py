"""De-duplication and batching, asserted on the requests that reached the server: N targets in M
namespaces sharing a template cost M requests per tick for that template, never N."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.types import (
    ContainerUsage,
    ExternalReading,
    MetricSourceType,
    PodsReading,
    PodUsage,
    PodValue,
    Reading,
    ResourceReading,
)
from autoscaler.metrics import Answer, MetricRequest, MetricsReader, QueryPlan
from autoscaler.metrics.sources import ExternalSource
from tests.metrics.conftest import Push
from tests.metrics.helpers import context, pod, request, spec
from tests.metrics.proxy import Proxy

NAMESPACES = ("batch-a", "batch-b", "batch-c")  # M = 3
TARGETS_PER_NAMESPACE = 4  # N = 12
PODS_PER_TARGET = 2


def _write(push: Push, t: datetime) -> None:
    series: list[object] = []
    for namespace in NAMESPACES:
        for target in range(TARGETS_PER_NAMESPACE):
            for replica in range(PODS_PER_TARGET):
                name = f"t{target}-{replica}"
                rate = (target + 1) * 0.1 + replica * 0.01  # distinct per pod
                points = [(t - timedelta(seconds=60 - 15 * i), 50 + rate * 15 * i) for i in range(5)]
                series += [
                    {
                        "__name__": "container_cpu_usage_seconds_total",
                        "namespace": namespace,
                        "pod": name,
                        "container": "app",
                    },
                    points,
                    {"__name__": "batch_inflight_requests", "namespace": namespace, "pod": name},
                    [(t, target * 10 + replica)],
                ]
    series += [{"__name__": "batch_queue_depth", "queue": "jobs"}, [(t, 99)]]
    push(*series)


def _requests(t: datetime) -> list[MetricRequest]:
    """Three metrics per target: CPU (Resource), in-flight requests (Pods), a shared queue (External)."""
    out = []
    for namespace in NAMESPACES:
        for target in range(TARGETS_PER_NAMESPACE):
            pods = [pod(f"t{target}-{r}", "app") for r in range(PODS_PER_TARGET)]
            ctx = context(namespace, t, *pods)
            out += [
                request(spec(MetricSourceType.RESOURCE, resource="cpu"), ctx),
                request(spec(MetricSourceType.PODS, metric="batch_inflight_requests"), ctx),
                request(spec(MetricSourceType.EXTERNAL, metric="batch_queue_depth", selector={"queue": "jobs"}), ctx),
            ]
    return out


def test_one_query_per_namespace_per_template(
    proxy: Proxy, make_reader: Callable[..., MetricsReader], push: Push, base_time: datetime
) -> None:
    t = base_time - timedelta(minutes=2)
    _write(push, t)
    reader = make_reader(proxy.url)
    requests = _requests(t)
    for tick in range(2):
        now = t + timedelta(seconds=tick)  # a later tick asks again: nothing is cached across ticks
        contexts = {id(r.context): context(r.context.namespace, now, *r.context.pods) for r in requests}
        tick_requests = [request(r.spec, contexts[id(r.context)], None) for r in requests]  # one context per target
        proxy.clear()
        result = reader.read(tick_requests)
        per_template = Counter(
            "cpu" if "container_cpu" in q else "pods" if "batch_inflight" in q else "external" for q in proxy.queries()
        )
        assert per_template == {"cpu": len(NAMESPACES), "pods": len(NAMESPACES), "external": 1}
        assert result.queries_planned == len(requests) == 36
        assert result.queries_sent == len(proxy.queries()) == 7
        # Each target got exactly its own pods back, from the shared answers.
        for index, outcome in enumerate(result.outcomes):
            target = (index // 3) % TARGETS_PER_NAMESPACE
            names = [f"t{target}-{r}" for r in range(PODS_PER_TARGET)]
            if index % 3 == 0:
                assert isinstance(outcome, ResourceReading)
                # Sampled at t, asked at now (within a minute): read as sampled at the time asked.
                expected = tuple(
                    PodUsage(n, now, 60.0, (ContainerUsage("app", {"cpu": round((target + 1) * 100 + r * 10)}),))
                    for r, n in enumerate(names)
                )
                assert outcome == ResourceReading(expected)
                assert outcome.one_container_columns() is not None  # read as columns: no object per pod
            elif index % 3 == 1:
                assert isinstance(outcome, PodsReading) and outcome.columns() is not None
                assert outcome == PodsReading(
                    tuple(PodValue(n, (target * 10 + r) * 1000, now, 60.0) for r, n in enumerate(names))
                )
            else:
                assert outcome == ExternalReading((99000,), t)
        # A target's per-pod readings share one names column (every pod measured): one tuple, not one per metric.
        for index in range(0, len(requests), 3):
            cpu, inflight = result.outcomes[index], result.outcomes[index + 1]
            assert isinstance(cpu, ResourceReading) and isinstance(inflight, PodsReading)
            cpu_columns, inflight_columns = cpu.one_container_columns(), inflight.columns()
            assert cpu_columns is not None and inflight_columns is not None
            assert cpu_columns[1].names is inflight_columns.names


def test_concurrency_is_bounded(proxy: Proxy, make_reader: Callable[..., MetricsReader], base_time: datetime) -> None:
    """Distinct queries run in parallel, never more at once than maxConcurrentQueries."""
    proxy.delay_seconds = 0.05
    reader = make_reader(proxy.url, settings={"maxConcurrentQueries": 3})
    ctx = context("batch-a", base_time)
    requests = [request(spec(MetricSourceType.EXTERNAL, metric=f"batch_absent_{i}"), ctx) for i in range(9)]
    result = reader.read(requests)
    assert result.queries_sent == 9 and len(proxy.queries()) == 9
    assert proxy.max_in_flight == 3


def test_answers_waiting_to_be_read_are_bounded(
    proxy: Proxy, make_reader: Callable[..., MetricsReader], base_time: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query is sent only while fewer than maxConcurrentQueries answers are out or waiting to be read: threads
    that fetch faster than the pass reads do not pile decoded answers up (at 10,000 targets they were ~120 MiB)."""
    reader = make_reader(proxy.url, settings={"maxConcurrentQueries": 2})
    ctx = context("batch-a", base_time)
    requests = [request(spec(MetricSourceType.EXTERNAL, metric=f"batch_absent_{i}"), ctx) for i in range(8)]
    received_at_read: list[int] = []
    parse = ExternalSource.parse

    def slow_parse(self: ExternalSource, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        received_at_read.append(len(proxy.queries()))
        time.sleep(0.05)  # reading takes longer than fetching (an absent metric answers at once)
        return parse(self, request, plan, answer)

    monkeypatch.setattr(ExternalSource, "parse", slow_parse)
    result = reader.read(requests)
    assert result.queries_sent == len(proxy.queries()) == 8
    # When the k-th answer (from 0) is read, k answers were read before it and at most 2 more are out or waiting.
    assert len(received_at_read) == 8
    assert all(received <= k + 2 for k, received in enumerate(received_at_read)), received_at_read


def test_shared_failure_reaches_every_metric(
    proxy: Proxy, make_reader: Callable[..., MetricsReader], base_time: datetime
) -> None:
    """One failing query fails every metric that needed it (each with its own error object), retried once
    for all of them, not once per metric."""
    from autoscaler.metrics import TransientError
    from tests.metrics.proxy import Fault

    proxy.faults += [Fault(status=503, body=b"busy")] * 3
    reader = make_reader(proxy.url)
    requests = [
        request(spec(MetricSourceType.PODS, metric="batch_busy"), context("batch-a", base_time, pod("x"))),
        request(spec(MetricSourceType.PODS, metric="batch_busy"), context("batch-a", base_time, pod("y"))),
    ]
    first, second = reader.read(requests).outcomes
    assert isinstance(first, TransientError) and isinstance(second, TransientError)
    assert first is not second and first.status == second.status == 503
    assert len(proxy.queries()) == 3  # one query, three attempts


def test_plan_sends_nothing(proxy: Proxy, make_reader: Callable[..., MetricsReader], base_time: datetime) -> None:
    """`plan` shows each metric's query (for `autoscaler plan`/`check`) without asking the server."""
    reader = make_reader(proxy.url)
    plans = reader.plan(_requests(base_time))
    assert len({p.query for p in plans if not isinstance(p, Exception)}) == 7
    cpu = plans[0]
    assert not isinstance(cpu, Exception)
    # The lean form: only samples older than a minute are marked (docs/metrics.md, "Staleness") ...
    assert cpu.query.promql == (
        '(sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{namespace="batch-a", '
        'container!="", container!="POD"}[60s]))) or label_replace(min by (namespace, pod, container) '
        '(timestamp(container_cpu_usage_seconds_total{namespace="batch-a", container!="", container!="POD"}) '
        f'< {base_time.timestamp() - 60:.3f}), "autoscaler_sample", "timestamp", "", "")'
    )
    # The bound is the time asked minus the minute, a number: not `time()`, which a server may evaluate
    # elsewhere (VictoriaMetrics near the present). The failure memory keys it by the exact form.
    # ... and the exact one, every sample marked, for when a target or a recent failure needs every time.
    assert cpu.exact is not None and cpu.exact.promql == (
        '(sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{namespace="batch-a", '
        'container!="", container!="POD"}[60s]))) or label_replace(min by (namespace, pod, container) '
        '(timestamp(container_cpu_usage_seconds_total{namespace="batch-a", container!="", container!="POD"})), '
        '"autoscaler_sample", "timestamp", "", "")'
    )
    assert cpu.query.remembered_as == cpu.exact.promql
    external = plans[2]
    assert not isinstance(external, Exception) and external.exact is None  # one series: nothing to save
    assert proxy.requests == []


def test_a_slow_server_cannot_stall_the_pass(
    proxy: Proxy, make_reader: Callable[..., MetricsReader], base_time: datetime
) -> None:
    """Queries still running at the pass deadline are cut off, and those not started are not sent: each is a
    typed timeout, and the pass ends by its deadline instead of queueing behind slow ones."""
    from autoscaler.metrics import QueryTimeoutError

    proxy.delay_seconds = 0.2
    reader = make_reader(proxy.url, settings={"maxConcurrentQueries": 1, "passDeadlineSeconds": 0.5})
    ctx = context("batch-a", base_time)
    requests = [request(spec(MetricSourceType.EXTERNAL, metric=f"batch_slow_{i}"), ctx) for i in range(8)]
    result = reader.read(requests)
    late = [o for o in result.outcomes if isinstance(o, QueryTimeoutError)]
    not_sent = [o for o in late if o.message.startswith("not sent")]
    assert 0 < len(late) < 8 and all(o.scope == "pass" for o in late)
    assert len(not_sent) > 0 and len(proxy.queries()) == 8 - len(not_sent)
    assert result.duration_seconds < 0.5 + 1.0  # the deadline, plus a generous margin
    assert late[0].metric.startswith("batch_slow_") and late[0].server == "main"


def test_an_answer_is_read_while_slower_queries_are_still_under_way(
    proxy: Proxy, make_reader: Callable[..., MetricsReader], base_time: datetime, push: Push, monkeypatch: Any
) -> None:
    """The pass reads each answer as it arrives: the fast metric is parsed before the slow query has answered
    (so the client's reading overlaps Prometheus's work, and answers are not all held at once); both read."""
    import time

    from autoscaler.metrics.sources import ExternalSource
    from tests.metrics.proxy import Fault

    _write(push, base_time)
    events: list[tuple[str, float]] = []
    parse = ExternalSource.parse

    def recording(self: ExternalSource, request: MetricRequest, plan: Any, answer: Any) -> Any:
        events.append((f"parsed {request.spec.metric_name}", time.monotonic()))
        return parse(self, request, plan, answer)

    monkeypatch.setattr(ExternalSource, "parse", recording)
    proxy.faults.append(Fault(delay_seconds=1.0, match="batch_inflight_requests"))
    reader = make_reader(proxy.url, settings={"maxConcurrentQueries": 2})
    ctx = context("batch-a", base_time)
    one_pod = {"pod": "t0-0", "namespace": "batch-a"}
    slow = spec(MetricSourceType.EXTERNAL, metric="batch_inflight_requests", selector=one_pod)
    fast = spec(MetricSourceType.EXTERNAL, metric="batch_queue_depth", selector={"queue": "jobs"})
    reader._on_query = lambda server, seconds, outcome: events.append(("answered", time.monotonic()))
    result = reader.read([request(slow, ctx), request(fast, ctx)])
    assert [type(o) for o in result.outcomes] == [ExternalReading, ExternalReading]
    order = [what for what, _ in sorted(events, key=lambda e: e[1])]
    assert order == ["answered", "parsed batch_queue_depth", "answered", "parsed batch_inflight_requests"], order
