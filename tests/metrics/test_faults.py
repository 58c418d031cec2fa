"""A misbehaving Prometheus (the real one behind a fault-injecting proxy) under the metric-source layer and
the core: every fault comes back as its metric's typed error, the other metric of the pass is still read,
the target is held (never scaled down on a fault), and the pass ends within its time bound."""

from __future__ import annotations

import base64
import gzip
import json
import re
import threading
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from autoscaler.core.types import (
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ResourceReading,
)
from autoscaler.metrics import (
    Answer,
    BadResponseError,
    MetricsError,
    MetricsReader,
    MetricsSettings,
    PermanentError,
    QueryTimeoutError,
    StaleDataError,
    TransientError,
)
from autoscaler.metrics.client import PrometheusClient
from autoscaler.metrics.registry import SourceRegistry
from tests.garbage import cyclic_garbage
from tests.metrics.conftest import Push
from tests.metrics.helpers import context, cpu_samples, decide_tick, running_pods
from tests.metrics.helpers import request as metric_request
from tests.metrics.proxy import Fault, Proxy

Reader = Callable[..., MetricsReader]
CPU = MetricSpec(
    MetricSourceType.RESOURCE, MetricTarget(MetricTargetType.UTILIZATION, average_utilization=60), resource_name="cpu"
)
MARGIN_SECONDS = 1.0  # generous slack over every time bound: closing sockets, threads, a loaded machine
DEFAULT_PASS_DEADLINE = 12.0  # 80 % of the 15 s sync period
DEEP = b'{"status": "success", "data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def _queue(name: str) -> MetricSpec:
    return MetricSpec(
        MetricSourceType.EXTERNAL,
        MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=30_000),
        metric_name=name,
    )


# ---- rewriting Prometheus's real answer -----------------------------------------------------------------


def _json(change: Callable[[dict[str, Any]], object]) -> Callable[[bytes], bytes]:
    """A rewrite that edits the decoded answer in place."""

    def rewrite(body: bytes) -> bytes:
        document = json.loads(body)
        change(document)
        return json.dumps(document).encode()

    return rewrite


def _value(document: dict[str, Any]) -> dict[str, Any]:
    """The value series of an External answer (not the `timestamp()` marker series)."""
    return next(s for s in document["data"]["result"] if "autoscaler_sample" not in s["metric"])


def _marker(document: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in document["data"]["result"] if "autoscaler_sample" in s["metric"])


def _restamp(seconds: float) -> Callable[[dict[str, Any]], None]:
    """Every series stamped `seconds` off the time asked; the marker's sample time left as it was."""

    def change(document: dict[str, Any]) -> None:
        for series in document["data"]["result"]:
            series["value"][0] += seconds

    return change


def _set(path: Callable[[dict[str, Any]], dict[str, Any] | list[Any]], key: Any, value: Any) -> Callable[..., None]:
    def change(document: dict[str, Any]) -> None:
        path(document)[key] = value

    return change


def _pop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda document: _value(document).pop(key)


def _data(data: Any) -> Callable[[dict[str, Any]], None]:
    """Replace `data` with `data(time asked)`, or with `data` itself."""

    def change(document: dict[str, Any]) -> None:
        asked = document["data"]["result"][0]["value"][0]
        document["data"] = data(asked) if callable(data) else data

    return change


# ---- the table ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    """The typed error a fault must come back as: its class, and its kind (`error_type` or `scope`)."""

    error: type[MetricsError]
    kind: str = ""
    words: str = ""
    attempts: int = 1  # requests the faulted query cost (1: not retried)


@dataclass(frozen=True)
class Case:
    fault: Fault | None
    expect: Expect
    value: float = 5.0  # the queue's sample, as pushed into Prometheus
    server: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    bound: float | None = None  # what bounds the pass; default: its deadline

    @property
    def bound_seconds(self) -> float:
        bound = self.bound if self.bound is not None else self.settings.get("passDeadlineSeconds")
        return float(bound if bound is not None else DEFAULT_PASS_DEADLINE) + MARGIN_SECONDS


TRICKLE = {"timeoutSeconds": 1.5, "retry": {"maxAttempts": 2}}
GZIP_BOMB = gzip.compress(b"\0" * (16 * 1024 * 1024))


def bad(words: str, error_type: str = "bad_response") -> Expect:
    return Expect(BadResponseError, error_type, words)


def rewrite(change: Callable[[dict[str, Any]], object]) -> Fault:
    """Forward, and edit Prometheus's real answer."""
    return Fault(rewrite=_json(change))


CASES = [
    # 1. Malformed details of an answer that is otherwise Prometheus's own.
    pytest.param(Case(rewrite(_pop("value")), bad("holds no value")), id="sample without a value"),
    pytest.param(Case(rewrite(_set(_value, "value", None)), bad("value is null")), id="null value"),
    pytest.param(
        Case(rewrite(_set(lambda d: _value(d)["value"], 1, None)), bad("(the sample value) is null")),
        id="null sample value",
    ),
    pytest.param(
        Case(Fault(rewrite=lambda _: DEEP), bad("nests deeper")), id="JSON nested past the parser's recursion"
    ),
    pytest.param(Case(rewrite(_set(_value, "metric", None)), bad("metric is null, not a label set")), id="null labels"),
    pytest.param(
        Case(rewrite(_set(lambda d: _value(d)["metric"], "queue", None)), bad("['queue'] is null")),
        id="a null label value",
    ),
    pytest.param(
        Case(rewrite(_set(lambda d: _value(d)["value"], 1, 5)), bad("the number 5, not a string")),
        id="a number where the value's text belongs",
    ),
    pytest.param(
        Case(rewrite(_set(lambda d: _value(d)["value"], 0, "now")), bad("(the sample time) is the string 'now'")),
        id="a string sample time",
    ),
    pytest.param(
        Case(rewrite(_set(lambda d: d["data"]["result"], 0, "x")), bad("not a series object")),
        id="a series that is a string",
    ),
    pytest.param(Case(rewrite(_set(lambda d: d, "data", None)), bad("data is null")), id="null data"),
    # 3. The result type is read from resultType, never guessed from the shape.
    pytest.param(
        Case(
            rewrite(_data(lambda t: {"resultType": "string", "result": [t, "5"]})),
            bad("returned a string", "unexpected_result_type"),
        ),
        id="a string result",
    ),
    pytest.param(
        Case(
            rewrite(_data(lambda t: {"resultType": "scalar", "result": [t, "5"]})),
            bad("returned a scalar", "unexpected_result_type"),
        ),
        id="a scalar where a vector is expected",
    ),
    pytest.param(
        Case(rewrite(_set(lambda d: d["data"], "resultType", "histogram")), bad("'histogram' is none of")),
        id="an unknown resultType",
    ),
    pytest.param(
        Case(
            rewrite(_data(lambda t: {"resultType": "scalar", "result": [{"metric": {}, "value": [t, "5"]}]})),
            bad("not a [time, value] pair"),
        ),
        id="a vector's shape under resultType scalar",
    ),
    # 4. A body that is not the API's JSON is permanent for the tick: not retried.
    pytest.param(
        Case(Fault(status=200, body=b"<!DOCTYPE html><html><body>Sign in</body></html>"), bad("not JSON")),
        id="an HTML page",
    ),
    pytest.param(
        Case(Fault(rewrite=lambda body: body[: len(body) // 2]), bad("ends early")), id="a JSON body cut short"
    ),
    pytest.param(
        Case(Fault(status=200, headers={"Content-Encoding": "gzip"}, body=b"not gzip at all"), bad("gzip")),
        id="a body that does not decode",
    ),
    pytest.param(
        Case(
            Fault(status=200, headers={"Content-Encoding": "gzip"}, body=GZIP_BOMB),
            bad("larger than maxResponseBytes"),
            server={"maxResponseBytes": 1024 * 1024},
        ),
        id="a gzip bomb: 16 MiB of zeros in 16 KiB, read no further than the limit",
    ),
    pytest.param(
        Case(rewrite(_set(_value, "value", [10**400, "5"])), bad("not a number of seconds")),
        id="a sample time past float64's range",
    ),
    # ... while a connection dropped before the promised length is the network's fault, worth asking again.
    pytest.param(
        Case(Fault(drop_after=20, repeat=True), Expect(TransientError, "", "closed before the answer", attempts=3)),
        id="the connection dropped mid-body",
    ),
    # 2. The time an answer is stamped with, and the sample time its marker reports, are both checked.
    pytest.param(
        Case(rewrite(_restamp(-600)), Expect(StaleDataError, "", "stamped 600 s before")),
        id="stamped 10 min before the time asked, marker fresh",
    ),
    pytest.param(Case(rewrite(_restamp(+5)), bad("after the time asked")), id="stamped 5 s after the time asked"),
    pytest.param(Case(rewrite(_restamp(-5)), bad("before the time asked")), id="stamped 5 s before the time asked"),
    pytest.param(
        Case(rewrite(lambda d: _marker(d)["value"].__setitem__(1, "NaN")), bad("sample time is NaN")),
        id="a marker sample time that is NaN",
    ),
    pytest.param(
        Case(
            rewrite(lambda d: _marker(d)["value"].__setitem__(1, str(_marker(d)["value"][0] + 60))),
            bad("60.000 s after the time asked"),
        ),
        id="a marker sample time in the future",
    ),
    # 5. Finite values past what the HPA's int64 milli-units hold, written into Prometheus for real.
    pytest.param(Case(None, bad("'1e+308' is out of range"), value=1e308), id="1e308"),
    pytest.param(Case(None, bad("'-1e+308' is out of range"), value=-1e308), id="-1e308"),
    pytest.param(
        Case(None, bad("'9300000000000000' is out of range"), value=9.3e15), id="9.3e15, past int64 milli-units"
    ),
    # 7. Wall-clock bounds, whatever the server sends. A trickle is cut by timeoutSeconds (1.5 s), retried,
    # and the retry cut by what is left of the pass (2.5 s).
    pytest.param(
        Case(
            Fault(trickle_seconds=0.5, repeat=True),
            Expect(QueryTimeoutError, "pass", "before the pass's deadline", attempts=2),
            server=TRICKLE,
            settings={"passDeadlineSeconds": 2.5},
        ),
        id="a body trickled a byte every 0.5 s",
    ),
    pytest.param(
        Case(
            Fault(trickle_seconds=0.5, trickle_head=True, repeat=True),
            Expect(QueryTimeoutError, "pass", "before the pass's deadline", attempts=2),
            server=TRICKLE,
            settings={"passDeadlineSeconds": 2.5},
        ),
        id="status line and headers trickled",
    ),
    pytest.param(
        Case(
            Fault(delay_seconds=30),
            Expect(QueryTimeoutError, "request", "within 1 s (timeoutSeconds)"),
            server={"timeoutSeconds": 1, "retry": {"maxAttempts": 1}},
            bound=1,
        ),
        id="no answer at all",
    ),
    pytest.param(
        Case(
            Fault(status=503, headers={"Retry-After": "5"}, body=b"busy"),
            Expect(TransientError, "", "HTTP 503: busy"),
            settings={"passDeadlineSeconds": 2},
        ),
        id="a Retry-After past the deadline is not waited for",
    ),
]


@pytest.fixture(scope="module")
def now(base_time: datetime) -> datetime:
    return base_time + timedelta(minutes=4)


def _slug(name: str) -> str:
    """A name for the case's series, unique per case id ("1e308" and "-1e308" differ by a sign only)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:50] + f"_{zlib.crc32(name.encode()):08x}"


@pytest.mark.parametrize("case", CASES)
def test_a_fault_is_typed_and_holds_the_target(
    case: Case,
    request: pytest.FixtureRequest,
    proxy: Proxy,
    make_reader: Reader,
    push: Push,
    now: datetime,
    sleeps: list[float],
    record_property: Callable[[str, object], None],
) -> None:
    """CPU alone would take 3 pods to 1; the queue metric meets the fault: typed error, CPU still read, held."""
    slug = _slug(request.node.callspec.id)
    namespace, queue = f"faults-{slug.replace('_', '-')}", f"faults_queue_{slug}"
    pods = running_pods(namespace, now)
    push(*cpu_samples(namespace, now, 0.05, [p.name for p in pods]), {"__name__": queue}, [(now, case.value)])
    if case.fault is not None:
        proxy.faults.append(replace(case.fault, match=queue))
    reader = make_reader(proxy.url, settings=dict(case.settings), **case.server)
    ctx = context(namespace, now, *pods)
    started = time.monotonic()
    result = reader.read([metric_request(CPU, ctx), metric_request(_queue(queue), ctx)])
    elapsed = time.monotonic() - started
    record_property("duration_seconds", round(elapsed, 3))
    record_property("bound_seconds", case.bound_seconds)
    cpu, error = result.outcomes
    # The fault's typed error, naming what was wrong, for the queue metric only.
    assert isinstance(error, case.expect.error), f"expected {case.expect.error.__name__}, got {error!r}"
    assert case.expect.words in error.message
    if case.expect.kind:
        assert case.expect.kind == (error.scope if isinstance(error, QueryTimeoutError) else error.error_type)
    assert error.metric == queue and error.server == "main" and queue in error.promql
    record_property(
        "error", f"{type(error).__name__}({case.expect.kind})" if case.expect.kind else type(error).__name__
    )
    assert len([q for q in proxy.queries() if queue in q]) == case.expect.attempts
    # The other metric of the pass is read.
    assert isinstance(cpu, ResourceReading) and len(cpu.pods) == 3
    # The target is held: the CPU proposal of 1 is not taken while the queue metric is invalid.
    decision = decide_tick(result.outcomes, (CPU, _queue(queue)), pods, now)
    assert decision.metrics[0].proposed_replicas == 1 and decision.metrics[1].error is not None
    assert (decision.desired_replicas, decision.rescale) == (3, False)
    # Within the time bound: the pass deadline plus a margin (the server's slowness does not count).
    assert elapsed <= case.bound_seconds
    assert result.duration_seconds <= case.bound_seconds
    assert len(sleeps) == case.expect.attempts - 1


# ---- one answer broken, the rest of the pass untouched -------------------------------------------------


def test_a_broken_answer_touches_no_other_target(proxy: Proxy, make_reader: Reader, push: Push, now: datetime) -> None:
    """Two targets in one pass, each its own namespace's query; one answer has null labels: that target is
    held with a bad_response, the other is read and scales up as the HPA would."""
    broken, healthy = "faults-two-broken", "faults-two-healthy"
    pods = {ns: running_pods(ns, now) for ns in (broken, healthy)}
    push(*cpu_samples(broken, now, 0.05, ["web-1", "web-2", "web-3"]))
    push(*cpu_samples(healthy, now, 0.45, ["web-1", "web-2", "web-3"]))  # 90 % against 60 %
    proxy.faults.append(
        Fault(match=f'namespace="{broken}"', rewrite=_json(_set(lambda d: d["data"]["result"][0], "metric", None)))
    )
    reader = make_reader(proxy.url)
    result = reader.read([metric_request(CPU, context(ns, now, *pods[ns])) for ns in (broken, healthy)])
    error, reading = result.outcomes
    assert isinstance(error, BadResponseError) and error.error_type == "bad_response"
    assert "data.result[0].metric is null" in error.message and broken in error.promql
    assert isinstance(reading, ResourceReading) and len(reading.pods) == 3
    held = decide_tick([error], (CPU,), pods[broken], now)
    assert (held.desired_replicas, held.rescale) == (3, False)
    scaled = decide_tick([reading], (CPU,), pods[healthy], now)
    assert (scaled.desired_replicas, scaled.rescale) == (5, True)


class _Surprising:
    """A real client for every query but one, on which it fails in a way nobody typed (a fake, not a mock)."""

    def __init__(self, client: PrometheusClient, *, fail_on: str, secret: str) -> None:
        self._client = client
        self._fail_on = fail_on
        self._secret = secret

    def query(self, promql: str, *, time: datetime, budget_seconds: float, deadline_seconds: float) -> Answer:
        if self._fail_on in promql:
            raise ZeroDivisionError(f"division by zero near Authorization: Bearer {self._secret}")
        return self._client.query(promql, time=time, budget_seconds=budget_seconds, deadline_seconds=deadline_seconds)

    def close(self) -> None:
        self._client.close()

    def redact(self, text: str) -> str:
        return self._client.redact(text)


def test_an_untyped_exception_stays_in_its_query(proxy: Proxy, push: Push, now: datetime, tmp_path: Path) -> None:
    """The last-line guard: a surprise inside one query's handling is that query's typed error (logged once,
    its traceback scrubbed), and the pass goes on."""
    token = tmp_path / "token"
    token.write_text("guard-secret-token")
    server = {"url": proxy.url, "bearerTokenFile": str(token)}
    settings = MetricsSettings.model_validate({"servers": {"main": server}})
    client = PrometheusClient("main", settings.servers["main"])
    surprising = _Surprising(client, fail_on="faults_guard_b", secret="guard-secret-token")
    push({"__name__": "faults_guard_a"}, [(now, 7)])
    ctx = context("faults-guard", now)
    with MetricsReader(settings, registry=SourceRegistry.builtin(), clients={"main": surprising}) as reader:
        reader.read([metric_request(_queue("faults_guard_a"), ctx)])  # reads the token once, so it is known
        with capture_logs() as logs:
            result = reader.read([metric_request(_queue(name), ctx) for name in ("faults_guard_a", "faults_guard_b")])
    ok, error = result.outcomes
    assert not isinstance(ok, MetricsError)
    assert isinstance(error, PermanentError) and error.error_type == "internal"
    assert "ZeroDivisionError" in error.message and error.metric == "faults_guard_b"
    (logged,) = [event for event in logs if event["event"] == "metrics_unexpected_error"]
    assert "ZeroDivisionError" in logged["traceback"]
    assert "guard-secret-token" not in repr(logs) and "guard-secret-token" not in str(error)


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(None, id="answered at once"),
        pytest.param(Fault(status=503, body=b"busy", match="faults_cycle"), id="answered after a retry"),
    ],
)
def test_a_query_leaves_no_reference_cycle(proxy: Proxy, push: Push, now: datetime, fault: Fault | None) -> None:
    """tenacity's retrying object sits in a reference cycle while it runs; a query that answers breaks it when
    done, so the objects it made go with their last reference, not at the collector's next pass (paused during
    a pass). A query that fails leaves its error's traceback, whose frames hold it, as any caught error does."""
    push({"__name__": "faults_cycle"}, [(now, 1)])
    settings = MetricsSettings.model_validate({"servers": {"main": {"url": proxy.url}}})
    client = PrometheusClient("main", settings.servers["main"], sleep=lambda _: None)

    def query() -> None:
        if fault is not None:
            proxy.faults.append(fault)
        client.query("faults_cycle", time=now, budget_seconds=5, deadline_seconds=10)

    try:
        assert cyclic_garbage(query, module="tenacity") == []
    finally:
        client.close()


# ---- 6. a server that echoes the credentials it was sent -----------------------------------------------


@dataclass(frozen=True)
class Auth:
    """One way to authenticate: the server settings, what the proxy requires, and the secret forms to find."""

    server: Mapping[str, Any]
    require: Mapping[str, str]
    secrets: tuple[str, ...]


def _auth(kind: str, secret_file: Callable[[str, str], Path]) -> Auth:
    # Characters that URL-encoding and JSON escaping change, so every form a credential travels in is tried.
    token, password = "tok/en+A1b2==", 'p@ss w/rd"x'
    if kind == "bearer token":
        path = secret_file("token", token + "\n")
        return Auth({"bearerTokenFile": str(path)}, {"Authorization": f"Bearer {token}"}, (token,))
    if kind == "basic auth":
        path = secret_file("password", password)
        pair = base64.b64encode(f"autoscaler:{password}".encode()).decode()
        server = {"basicAuth": {"username": "autoscaler", "passwordFile": str(path)}}
        return Auth(server, {"Authorization": f"Basic {pair}"}, (password, pair))
    if kind == "API key header":
        return Auth({"headers": {"X-Api-Key": "key-9f8e7d"}}, {"X-Api-Key": "key-9f8e7d"}, ("key-9f8e7d",))
    return Auth({"headers": {"X-Scope-OrgID": "tenant-42ab"}}, {"X-Scope-OrgID": "tenant-42ab"}, ("tenant-42ab",))


_PLAIN = {"host", "user-agent", "accept", "accept-encoding", "connection"}


def _credentials_first(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """The request's headers, the credential-bearing ones first (so they land inside the quoted text)."""
    return sorted(headers.items(), key=lambda item: item[0].lower() in _PLAIN)


def _echo_json(headers: Mapping[str, str]) -> bytes:
    """A 400 body quoting the request's headers, raw and URL-encoded, as some gateways do."""
    quoted = [f"{k}: {v} (as sent: {urllib.parse.quote(v, safe='')})" for k, v in _credentials_first(headers)]
    return json.dumps({"status": "error", "errorType": "bad_data", "error": "rejected " + "; ".join(quoted)}).encode()


def _echo_text(headers: Mapping[str, str]) -> bytes:
    """A 503 text body quoting the request's headers, as a proxy's error page might."""
    return ("upstream unavailable for " + ", ".join(f"{k}={v}" for k, v in _credentials_first(headers))).encode()


@pytest.mark.parametrize("kind", ["bearer token", "basic auth", "API key header", "tenant header"])
@pytest.mark.parametrize(
    ("status", "echo", "expected"),
    [
        pytest.param(400, _echo_json, PermanentError, id="400 JSON"),
        pytest.param(503, _echo_text, TransientError, id="503 text, retried and logged"),
    ],
)
def test_an_echoed_credential_is_scrubbed(
    proxy: Proxy,
    make_reader: Reader,
    secret_file: Callable[[str, str], Path],
    now: datetime,
    kind: str,
    status: int,
    echo: Callable[[Mapping[str, str]], bytes],
    expected: type[MetricsError],
) -> None:
    """The body is quoted (scrubbed) in the error and in the retry log line; no form of the credential is."""
    auth = _auth(kind, secret_file)
    proxy.require = dict(auth.require)
    proxy.faults.append(Fault(status=status, echo=echo, repeat=True))
    reader = make_reader(proxy.url, **auth.server)
    with capture_logs() as logs:
        error = reader.read([metric_request(_queue("faults_echo"), context("faults-echo", now))]).outcomes[0]
    assert isinstance(error, expected) and error.status == status
    assert "***" in error.message  # the echo was quoted, with the credential replaced
    if status == 503:
        assert [e["event"] for e in logs].count("prometheus_query_retrying") == 2
    texts = [str(error), repr(error), repr(error.args), repr(vars(error)), repr(logs)]
    for secret in auth.secrets:
        for form in {secret, urllib.parse.quote(secret, safe=""), json.dumps(secret)[1:-1]}:
            assert not any(form in text for text in texts), f"{form!r} leaked"


# ---- 7. several slow queries against the pass deadline, and nothing left behind ------------------------


def _lingering() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("prometheus-query", "prometheus-deadline"))]


@pytest.fixture
def no_lingering_threads() -> Iterator[None]:
    """After the test, every query and deadline thread of the pass has ended (polled, with a deadline)."""
    yield
    give_up = time.monotonic() + 10
    while _lingering() and time.monotonic() < give_up:
        threading.Event().wait(0.05)  # polling for threads to end, not waiting for time to pass
    assert _lingering() == []


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(Fault(delay_seconds=30, repeat=True), id="five servers that never answer"),
        pytest.param(Fault(trickle_seconds=0.5, repeat=True), id="five trickled bodies"),
    ],
)
def test_slow_queries_end_with_the_pass(
    proxy: Proxy, make_reader: Reader, push: Push, now: datetime, fault: Fault, no_lingering_threads: None
) -> None:
    """Five slow queries, two at a time, a 2 s pass: the running ones are cut off, the others not sent; each
    is a typed timeout, CPU is still read, the target held, and the pass is over by its deadline."""
    namespace = f"faults-slow-{'trickle' if fault.trickle_seconds else 'silent'}"
    pods = running_pods(namespace, now)
    push(*cpu_samples(namespace, now, 0.05, [p.name for p in pods]))
    queues = [_queue(f"faults_slow_{namespace[12:]}_{i}") for i in range(5)]
    proxy.faults.append(replace(fault, match="faults_slow_"))
    settings = {"passDeadlineSeconds": 2, "maxConcurrentQueries": 2}
    reader = make_reader(proxy.url, timeoutSeconds=5, settings=settings)
    ctx = context(namespace, now, *pods)
    started = time.monotonic()
    result = reader.read([metric_request(m, ctx) for m in (CPU, *queues)])
    elapsed = time.monotonic() - started
    assert elapsed <= 2 + MARGIN_SECONDS and result.duration_seconds <= 2 + MARGIN_SECONDS
    cpu, *slow = result.outcomes
    assert isinstance(cpu, ResourceReading)
    assert all(isinstance(e, QueryTimeoutError) and e.scope == "pass" for e in slow), slow
    assert [e.metric for e in slow if isinstance(e, MetricsError)] == [q.metric_name for q in queues]
    assert any(e.message.startswith("not sent") for e in slow if isinstance(e, MetricsError))
    decision = decide_tick(result.outcomes, (CPU, *queues), pods, now)
    assert (decision.desired_replicas, decision.rescale) == (3, False)
    # The cut-off requests were closed: the proxy sees its clients gone (polled, with a deadline).
    give_up = time.monotonic() + 10
    while proxy.in_flight and time.monotonic() < give_up and fault.trickle_seconds:
        threading.Event().wait(0.05)
    assert proxy.in_flight == 0 or not fault.trickle_seconds
