"""What a real server does when things go wrong, and how each failure comes back typed, never as a number."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from autoscaler.core.types import ExternalReading, MetricSourceType, MetricSpec, ObjectReference, PodsReading, PodValue
from autoscaler.metrics import (
    MetricRequest,
    MetricsError,
    MetricsReader,
    NoDataError,
    PermanentError,
    QueryTimeoutError,
    StaleDataError,
    TransientError,
    UnsafeLabelValueError,
)
from tests.metrics.conftest import Push
from tests.metrics.helpers import context, pod, request, spec
from tests.metrics.proxy import Fault, Proxy
from tests.metrics.server import PrometheusServer, free_port

EXT, PODS, OBJ = MetricSourceType.EXTERNAL, MetricSourceType.PODS, MetricSourceType.OBJECT
Reader = Callable[..., MetricsReader]


def _queue(metric: str = "failures_queue_depth", **selector: str) -> MetricSpec:
    return spec(EXT, metric=metric, selector=selector or None)


def _read_error(reader: MetricsReader, req: MetricRequest) -> MetricsError:
    """The outcome must be a typed error, not a reading."""
    outcome = reader.read([req]).outcomes[0]
    assert isinstance(outcome, MetricsError), f"expected an error, got the reading {outcome!r}"
    return outcome


def test_server_down(make_reader: Reader, base_time: datetime, sleeps: list[float]) -> None:
    """Connection refused is transient, retried within the budget, then reported."""
    reader = make_reader(f"http://127.0.0.1:{free_port()}")
    error = _read_error(reader, request(_queue(), context("f", base_time)))
    assert isinstance(error, TransientError)
    assert "unreachable" in error.message and error.server == "main"
    assert error.promql.startswith("(failures_queue_depth{}) or label_replace(")
    assert len(sleeps) == 2  # three attempts in all


def test_server_slow(proxy: Proxy, make_reader: Reader, base_time: datetime) -> None:
    """A request slower than the timeout is abandoned at the timeout."""
    proxy.faults.append(Fault(delay_seconds=5))
    reader = make_reader(proxy.url, timeoutSeconds=0.3, retry={"maxAttempts": 1})
    started = time.monotonic()
    error = _read_error(reader, request(_queue(), context("f", base_time)))
    assert isinstance(error, QueryTimeoutError) and "no complete answer within 0.3 s" in error.message
    assert error.scope == "request" and error.limit_seconds == 0.3
    assert time.monotonic() - started < 3


def test_fractional_timeout_is_accepted(
    prometheus: PrometheusServer, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """The timeout is also sent to Prometheus, in a form it parses (it refuses "0.5s")."""
    push({"__name__": "failures_quick"}, [(base_time, 2)])
    reader = make_reader(prometheus.url, timeoutSeconds=0.5)
    assert reader.read_one(request(_queue("failures_quick"), context("f", base_time))) == ExternalReading(
        (2000,), base_time
    )


def test_redirect_is_a_config_error(proxy: Proxy, make_reader: Reader, base_time: datetime) -> None:
    proxy.faults.append(Fault(status=301, headers={"Location": "http://127.0.0.1:1/"}))
    error = _read_error(make_reader(proxy.url), request(_queue(), context("f", base_time)))
    assert isinstance(error, PermanentError) and error.status == 301 and "final URL" in error.message


def test_bad_query_is_permanent(proxy: Proxy, make_reader: Reader, base_time: datetime) -> None:
    """Prometheus's 400 bad_data comes back with its errorType and text, and is not retried."""
    reader = make_reader(proxy.url)
    error = _read_error(reader, request(_queue(), context("f", base_time), {"query": "sum(rate(x[1m])"}))
    assert isinstance(error, PermanentError) and error.error_type == "bad_data" and error.status == 400
    assert "parse error" in error.message
    assert len(proxy.queries()) == 1


@pytest.mark.parametrize("status", [502, 503])
def test_5xx_retried_then_answered(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime, sleeps: list[float], status: int
) -> None:
    push({"__name__": "failures_retry", "q": str(status)}, [(base_time, 3)])
    proxy.faults += [Fault(status=status, body=b"upstream busy"), Fault(status=status, body=b"upstream busy")]
    reader = make_reader(proxy.url)
    reading = reader.read_one(request(_queue("failures_retry", q=str(status)), context("f", base_time)))
    assert reading == ExternalReading((3000,), base_time)
    assert len(proxy.queries()) == 3 and len(sleeps) == 2


def test_503_every_time(proxy: Proxy, make_reader: Reader, base_time: datetime) -> None:
    proxy.faults += [Fault(status=503, body=b"no")] * 3
    error = _read_error(make_reader(proxy.url), request(_queue(), context("f", base_time)))
    assert isinstance(error, TransientError) and error.status == 503
    assert len(proxy.queries()) == 3


def test_429_honours_retry_after(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime, sleeps: list[float]
) -> None:
    push({"__name__": "failures_throttled"}, [(base_time, 1)])
    proxy.faults.append(Fault(status=429, headers={"Retry-After": "2"}, body=b"slow down"))
    reader = make_reader(proxy.url)
    reading = reader.read_one(request(_queue("failures_throttled"), context("f", base_time)))
    assert reading == ExternalReading((1000,), base_time)
    assert sleeps and sleeps[0] >= 2


def test_429_retry_after_beyond_budget(
    proxy: Proxy, make_reader: Reader, base_time: datetime, sleeps: list[float]
) -> None:
    """A Retry-After longer than the budget (a third of the sync period) ends the tick's attempts at once."""
    proxy.faults.append(Fault(status=429, headers={"Retry-After": "60"}))
    error = _read_error(make_reader(proxy.url), request(_queue(), context("f", base_time)))
    assert isinstance(error, TransientError) and error.retry_after_seconds == 60
    assert sleeps == [] and len(proxy.queries()) == 1


def test_empty_is_no_data(prometheus: PrometheusServer, make_reader: Reader, base_time: datetime) -> None:
    reader = make_reader(prometheus.url)
    error = _read_error(reader, request(_queue("failures_nothing_here"), context("f", base_time)))
    assert isinstance(error, NoDataError) and error.reason == "empty"
    assert error.metric == "failures_nothing_here"


def test_empty_as_zero_is_opt_in(prometheus: PrometheusServer, make_reader: Reader, base_time: datetime) -> None:
    reader = make_reader(prometheus.url)
    req = request(_queue("failures_nothing_here"), context("f", base_time), {"emptyAsZero": True})
    assert reader.read_one(req) == ExternalReading((0,), base_time)
    pods_req = request(
        spec(PODS, metric="failures_nothing_here"), context("f", base_time, pod("a")), {"emptyAsZero": True}
    )
    assert reader.read_one(pods_req) == PodsReading((PodValue("a", 0, base_time, 60.0),))


@pytest.mark.parametrize(
    ("value", "reason"), [(math.nan, "nan"), (math.inf, "+inf"), (-math.inf, "-inf")], ids=["NaN", "+Inf", "-Inf"]
)
@pytest.mark.parametrize("empty_as_zero", [False, True], ids=["strict", "emptyAsZero"])
def test_nan_and_infinities_are_no_data(
    prometheus: PrometheusServer,
    make_reader: Reader,
    push: Push,
    base_time: datetime,
    value: float,
    reason: str,
    empty_as_zero: bool,
) -> None:
    """NaN and infinities are never numbers, whatever emptyAsZero says; for one pod too."""
    push({"__name__": "failures_odd", "v": reason}, [(base_time, value)])
    push({"__name__": "failures_odd_pods", "namespace": "f", "pod": "a", "v": reason}, [(base_time, value)])
    push({"__name__": "failures_odd_pods", "namespace": "f", "pod": "b", "v": reason}, [(base_time, 1)])
    reader = make_reader(prometheus.url)
    binding = {"emptyAsZero": empty_as_zero}
    error = _read_error(reader, request(_queue("failures_odd", v=reason), context("f", base_time), binding))
    assert isinstance(error, NoDataError) and error.reason == reason
    pods_spec = spec(PODS, metric="failures_odd_pods", selector={"v": reason})
    error = _read_error(reader, request(pods_spec, context("f", base_time, pod("a"), pod("b")), binding))
    assert isinstance(error, NoDataError) and error.reason == reason


def test_two_series_where_one_expected(
    prometheus: PrometheusServer, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    push(
        {"__name__": "failures_two", "namespace": "f", "ingress": "x", "path": "/a"},
        [(base_time, 1)],
        {"__name__": "failures_two", "namespace": "f", "ingress": "x", "path": "/b"},
        [(base_time, 2)],
    )
    reader = make_reader(prometheus.url)
    for metric in (_queue("failures_two"), spec(OBJ, metric="failures_two", described=ObjectReference("Ingress", "x"))):
        error = _read_error(reader, request(metric, context("f", base_time)))
        assert isinstance(error, PermanentError) and error.error_type == "too_many_series"
        assert "failures_two" in str(error)  # the error names the query


def test_stale_sample(prometheus: PrometheusServer, make_reader: Reader, push: Push, base_time: datetime) -> None:
    """A sample inside Prometheus's lookback but older than the budget is an error, with its age."""
    push({"__name__": "failures_stale"}, [(base_time - timedelta(seconds=200), 5)])
    reader = make_reader(prometheus.url)
    error = _read_error(reader, request(_queue("failures_stale"), context("f", base_time), {"stalenessSeconds": 60}))
    assert isinstance(error, StaleDataError) and error.age_seconds == pytest.approx(200)
    # The default budget is twice the sync period plus 60 s: 200 s old is fine with a 90 s sync period.
    ctx = context("f", base_time, sync_period_seconds=90)
    assert reader.read_one(request(_queue("failures_stale"), ctx)) == ExternalReading(
        (5000,), base_time - timedelta(seconds=200)
    )


def test_stale_pods(prometheus: PrometheusServer, make_reader: Reader, push: Push, base_time: datetime) -> None:
    """A pod whose samples are stale reads as missing; when every pod is stale the metric fails."""
    old = base_time - timedelta(seconds=150)
    push(
        {"__name__": "failures_stale_pods", "namespace": "f", "pod": "fresh"},
        [(base_time, 4)],
        {"__name__": "failures_stale_pods", "namespace": "f", "pod": "old"},
        [(old, 9)],
    )
    reader = make_reader(prometheus.url)
    metric = spec(PODS, metric="failures_stale_pods")
    ctx = context("f", base_time, pod("fresh"), pod("old"))
    assert reader.read_one(request(metric, ctx)) == PodsReading((PodValue("fresh", 4000, base_time, 60.0),))
    error = _read_error(reader, request(metric, context("f", base_time, pod("old"))))
    assert isinstance(error, StaleDataError)


@pytest.mark.parametrize(
    ("failed_seconds_ago", "sampled_seconds_ago", "refused"),
    [
        pytest.param(None, 30, False, id="no failed attempt: within the budget, read"),
        pytest.param(40, 30, False, id="the failure before the sample: read"),
        pytest.param(20, 30, True, id="the sample before the failure: refused"),
        pytest.param(-20, 30, False, id="the failure after the time asked (a clock set back): read"),
        pytest.param(120, 150, False, id="the failure older than the budget: the budget decides (150 s: stale)"),
    ],
)
def test_a_sample_from_before_a_failed_attempt(
    prometheus: PrometheusServer,
    proxy: Proxy,
    make_reader: Reader,
    push: Push,
    base_time: datetime,
    failed_seconds_ago: int | None,
    sampled_seconds_ago: int,
    refused: bool,
) -> None:
    """After an outage Prometheus answers with the last sample from before it (inside the lookback and the
    budget); the reader remembers when each query last failed to reach the server, and a sample older than
    that is refused as stale."""
    name = f"failures_outage_{failed_seconds_ago}_{sampled_seconds_ago}".replace("-", "m")
    sampled = base_time - timedelta(seconds=sampled_seconds_ago)
    push({"__name__": name, "namespace": "f"}, [(sampled, 100)])
    reader = make_reader(proxy.url, settings={"stalenessSeconds": 120})
    req = request(_queue(name), context("f", base_time))
    if failed_seconds_ago is not None:
        proxy.faults.append(Fault(status=503, body=b"restarting", repeat=True))
        failed = base_time - timedelta(seconds=failed_seconds_ago)
        assert isinstance(_read_error(reader, replace(req, context=context("f", failed))), TransientError)
        proxy.faults.clear()
    outcome = reader.read([req]).outcomes[0]
    if sampled_seconds_ago > 120:
        assert isinstance(outcome, StaleDataError) and outcome.failed_at is None  # the budget's own refusal
        return
    if not refused:
        assert outcome == ExternalReading((100_000,), sampled)
        return
    assert isinstance(outcome, StaleDataError) and outcome.failed_at is not None
    assert outcome.failed_at - failed < timedelta(seconds=5)  # the failure's time: the time asked, plus the pass's
    assert outcome.age_seconds == pytest.approx(30)
    assert "older than this query's last failed attempt to reach the server" in str(outcome)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param('sum({name}{{namespace="f"}})', id="sum of a selector"),
        pytest.param('max by (namespace) ({name}{{namespace="f"}})', id="max by of a selector"),
    ],
)
def test_a_raw_aggregation_without_freshness_is_checked_too(
    prometheus: PrometheusServer, proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime, query: str
) -> None:
    """A raw query that aggregates one selector (`sum(queue_depth{...})`, what queue specs write) and names no
    `freshness`: its selector's sample times are asked for, so a sample from before a failed attempt is refused
    after it as for a plain selector (without them, the pre-outage queue was read as current)."""
    name = "failures_outage_raw_" + ("sum" if query.startswith("sum") else "max")
    sampled = base_time - timedelta(seconds=30)
    push({"__name__": name, "namespace": "f"}, [(sampled, 100)])
    reader = make_reader(proxy.url, settings={"stalenessSeconds": 120})
    req = request(_queue(name), context("f", base_time), {"query": query.format(name=name)})
    assert reader.read_one(req) == ExternalReading((100_000,), sampled)  # its sample time, not the time asked
    proxy.faults.append(Fault(status=503, body=b"restarting", repeat=True))
    failed = base_time - timedelta(seconds=20)
    assert isinstance(_read_error(reader, replace(req, context=context("f", failed))), TransientError)
    proxy.faults.clear()
    outcome = reader.read([req]).outcomes[0]
    assert isinstance(outcome, StaleDataError) and outcome.failed_at is not None


def test_a_raw_per_pod_aggregation_is_checked_only_when_it_keeps_namespace_and_pod(
    prometheus: PrometheusServer, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """A Pods metric's sample times are matched to its values by namespace and pod: `max by (namespace, pod)`
    keeps both and gets its selector's sample times (a pod sampled 150 s ago is past the 90 s budget); `max by
    (pod)` drops the namespace, so no sample time could be matched and none is asked for (as before)."""
    push({"__name__": "failures_raw_pods", "namespace": "f", "pod": "a"}, [(base_time - timedelta(seconds=150), 3)])
    reader = make_reader(prometheus.url)
    metric = spec(PODS, metric="failures_raw_pods")
    keeps = request(
        metric,
        context("f", base_time, pod("a")),
        {"query": 'max by (namespace, pod) (failures_raw_pods{namespace="f"})'},
    )
    drops = request(
        metric, context("f", base_time, pod("a")), {"query": 'max by (pod) (failures_raw_pods{namespace="f"})'}
    )
    planned = reader.plan([keeps, drops])
    assert [getattr(plan, "has_timestamps", None) for plan in planned] == [True, False]
    assert isinstance(_read_error(reader, keeps), StaleDataError)
    assert reader.read_one(drops) == PodsReading((PodValue("a", 3000, base_time, 60.0),))


def test_a_raw_count_with_empty_as_zero_and_no_series_reads_zero(
    prometheus: PrometheusServer, make_reader: Reader, base_time: datetime
) -> None:
    """The selector's sample times do not change what an empty answer means: no series, emptyAsZero: 0."""
    reader = make_reader(prometheus.url)
    binding = {"query": 'count(failures_no_such_series{namespace="f"})', "emptyAsZero": True}
    outcome = reader.read_one(request(_queue("failures_no_such_series"), context("f", base_time), binding))
    assert isinstance(outcome, ExternalReading) and outcome.values == (0,)


def test_pods_sampled_before_a_failed_attempt_read_as_missing(
    prometheus: PrometheusServer, proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """Per-pod metrics: a pod sampled before the query's last failed attempt reads as missing, as a pod past
    the budget does (the HPA's conservative missing-pod rule then applies); every pod so: the metric fails."""
    push(
        {"__name__": "failures_outage_pods", "namespace": "f", "pod": "after"},
        [(base_time - timedelta(seconds=5), 4)],
        {"__name__": "failures_outage_pods", "namespace": "f", "pod": "before"},
        [(base_time - timedelta(seconds=40), 9)],
    )
    reader = make_reader(proxy.url)
    metric = spec(PODS, metric="failures_outage_pods")
    both = context("f", base_time, pod("after"), pod("before"))
    proxy.faults.append(Fault(status=503, body=b"restarting", repeat=True))
    _read_error(reader, request(metric, context("f", base_time - timedelta(seconds=20), pod("after"), pod("before"))))
    proxy.faults.clear()
    assert reader.read_one(request(metric, both)) == PodsReading(
        (PodValue("after", 4000, base_time - timedelta(seconds=5), 60.0),)
    )
    error = _read_error(reader, request(metric, context("f", base_time, pod("before"))))
    assert isinstance(error, StaleDataError) and error.failed_at is not None


def test_a_query_never_sent_is_no_failure_of_the_server(
    prometheus: PrometheusServer, make_reader: Reader, base_time: datetime
) -> None:
    """A query the pass had no time to send says nothing about Prometheus: no failure is remembered."""
    reader = make_reader(prometheus.url, settings={"passDeadlineSeconds": 1e-9})
    req = request(_queue("failures_not_sent"), context("f", base_time - timedelta(seconds=20)))
    error = _read_error(reader, req)
    assert isinstance(error, QueryTimeoutError) and "not sent" in error.message
    assert reader._failed == {}  # nothing remembered: the next pass reads the sample


def test_past_lookback_is_no_data(
    prometheus: PrometheusServer, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    push({"__name__": "failures_gone"}, [(base_time - timedelta(minutes=6), 5)])
    error = _read_error(make_reader(prometheus.url), request(_queue("failures_gone"), context("f", base_time)))
    assert isinstance(error, NoDataError) and error.reason == "empty"


def test_label_values_are_escaped(proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime) -> None:
    """Quotes, backslashes and newlines in a selector select exactly the series that carries them."""
    weird = 'we"ird\\queue\nname'
    push(
        {"__name__": "failures_weird", "queue": weird},
        [(base_time, 7)],
        {"__name__": "failures_weird", "queue": "we"},
        [(base_time, 100)],
        {"__name__": "failures_weird", "queue": "a.b"},
        [(base_time, 9)],
        {"__name__": "failures_weird", "queue": "axb"},
        [(base_time, 1000)],
    )
    reader = make_reader(proxy.url)
    assert reader.read_one(request(_queue("failures_weird", queue=weird), context("f", base_time))) == ExternalReading(
        (7000,), base_time
    )
    assert 'queue="we\\"ird\\\\queue\\nname"' in proxy.queries()[-1]
    # Regex operators (In) match literally: "a.b" must not match "axb".
    from autoscaler.core.types import LabelSelector, LabelSelectorRequirement

    metric = spec(EXT, metric="failures_weird")
    metric = type(metric)(
        type=metric.type,
        target=metric.target,
        metric_name=metric.metric_name,
        metric_selector=LabelSelector(match_expressions=(LabelSelectorRequirement("queue", "In", ("a.b",)),)),
    )
    assert reader.read_one(request(metric, context("f", base_time))) == ExternalReading((9000,), base_time)


def test_unsafe_values_are_refused(proxy: Proxy, make_reader: Reader, base_time: datetime) -> None:
    """What PromQL cannot quote safely is refused before anything is sent."""
    reader = make_reader(proxy.url)
    for bad in (_queue(queue="bell\x07"), _queue(**{"app.kubernetes.io/name": "x"}), _queue("not-a-metric")):
        error = _read_error(reader, request(bad, context("f", base_time)))
        assert isinstance(error, UnsafeLabelValueError)
    assert proxy.queries() == []


def test_matrix_result_is_refused(
    prometheus: PrometheusServer, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    push({"__name__": "failures_matrix"}, [(base_time, 1)])
    error = _read_error(
        make_reader(prometheus.url), request(_queue(), context("f", base_time), {"query": "failures_matrix[1m]"})
    )
    assert isinstance(error, PermanentError) and error.error_type == "unexpected_result_type"


def test_error_body_not_json(proxy: Proxy, make_reader: Reader, base_time: datetime) -> None:
    proxy.faults.append(
        Fault(status=422, body=json.dumps({"status": "error", "errorType": "execution", "error": "boom"}).encode())
    )
    error = _read_error(make_reader(proxy.url), request(_queue(), context("f", base_time)))
    assert isinstance(error, PermanentError) and error.error_type == "execution" and "boom" in error.message
