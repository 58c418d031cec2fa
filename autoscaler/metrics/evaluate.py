"""One evaluation pass: plan every metric of every target, send each distinct query once, read the answers.

The caller (the daemon to come, once per tick) passes every metric it needs to `MetricsReader.read`. Queries are
planned first, de-duplicated on (server, PromQL, time), run with bounded concurrency on a thread pool, and
each metric gets its reading or its typed error. Per-pod templates render the same PromQL for every target
of a namespace (they match the namespace, not the pods), so a namespace costs one query per template.

The pass ends by its deadline whatever the servers do: every query is given what is left of it, and a
query still running when it passes (plus a small grace) is abandoned and typed `QueryTimeoutError`. Nothing
raised inside one query's handling escapes the pass: known failures are typed where they happen, and a last
guard turns anything else into that query's `PermanentError(error_type="internal")`, logged once with its
traceback. Errors are otherwise returned, not logged: the caller logs where it handles them.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time as _time
import traceback
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Protocol, TypeVar, cast, runtime_checkable

import structlog

from autoscaler.core.types import Reading
from autoscaler.metrics.client import PrometheusClient
from autoscaler.metrics.context import Answer, MetricRequest, Query
from autoscaler.metrics.errors import MetricsError, PermanentError, QueryTimeoutError, TransientError
from autoscaler.metrics.registry import SourceRegistry
from autoscaler.metrics.settings import MetricsSettings
from autoscaler.metrics.source import MetricSource, QueryPlan
from autoscaler.metrics.sources import PrometheusSource

log = structlog.get_logger(__name__)

# Retries stop after a third of the sync period: the next tick is the retry for anything longer.
RETRY_SHARE_OF_SYNC_PERIOD = 1 / 3
# The pass is over by this share of the sync period: the tick must end in time whatever Prometheus does.
PASS_SHARE_OF_SYNC_PERIOD = 0.8
# How long past its deadline the pass waits for queries cutting themselves off (closing a socket takes a
# moment) before it abandons them: the pass returns by deadline + grace + the time to read the answers.
PASS_GRACE_SECONDS = 0.25
# The queries' failure memory (MetricsReader._failed) is pruned of failures older than a day (the largest
# staleness budget) when it holds more than this many queries.
_FAILED_QUERIES_PRUNE_AT = 1024
_FAILED_FORGET_SECONDS = 86400.0


class QueryClient(Protocol):
    """What the pass needs from a server connection (`PrometheusClient`, or a fake in tests).

    `query` stops retrying at `budget_seconds` and returns (or raises a `MetricsError`) within
    `deadline_seconds`; a client that overruns is abandoned and its answer discarded.
    """

    def query(self, promql: str, *, time: datetime, budget_seconds: float, deadline_seconds: float) -> Answer: ...

    def close(self) -> None: ...


@runtime_checkable
class Redacting(Protocol):
    """A client that knows its server's credentials offers to scrub them from text (`PrometheusClient`)."""

    def redact(self, text: str) -> str: ...


Outcome = Reading | MetricsError
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class PassResult:
    """Per request, in order: its reading or its typed error; and what the pass cost."""

    outcomes: tuple[Outcome, ...]
    queries_planned: int  # metrics that planned a query
    queries_sent: int  # distinct queries sent (retries not counted)
    duration_seconds: float


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a block, as it was after.

    A pass or a tick makes hundreds of thousands of acyclic objects, freed by their reference counts; the
    collector would walk them, and every long-lived object, again and again while they are made (at 5,000
    targets that was ~40 % of the daemon's CPU: docs/performance.md). The collections are not lost: the
    counts go on, and the collector runs at its next allocation after the block.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _exact_if_needed(request: MetricRequest, planned: tuple[MetricSource, QueryPlan]) -> tuple[MetricSource, QueryPlan]:
    """`planned` with its exact query when the request's source needs every sample time for this target."""
    source, plan = planned
    if plan.exact is None or not isinstance(source, PrometheusSource) or not source.needs_exact(request, plan):
        return planned
    return source, plan.exact_form()


def _one_form_per_question(
    planned: list[tuple[MetricSource, QueryPlan] | MetricsError],
) -> list[tuple[MetricSource, QueryPlan] | MetricsError]:
    """Where some target of a namespace needs the exact form of a lean query, every target asking that question
    gets it: one request per namespace and template, as with one form (the exact answer serves the lean)."""
    exact = {
        item[1].query
        for item in planned
        if not isinstance(item, MetricsError) and item[1].exact is None and item[1].lean_seconds > 0
    }
    if not exact:
        return planned
    out: list[tuple[MetricSource, QueryPlan] | MetricsError] = []
    for item in planned:
        if not isinstance(item, MetricsError) and item[1].exact is not None and item[1].exact in exact:
            item = (item[0], item[1].exact_form())
        out.append(item)
    return out


class MetricsReader:
    """Reads the metrics of many targets in passes. Thread-safe between passes; close it when done."""

    def __init__(
        self,
        settings: MetricsSettings,
        *,
        registry: SourceRegistry | None = None,
        clients: Mapping[str, QueryClient] | None = None,
        sleep: Callable[[float], None] = _time.sleep,
        monotonic: Callable[[], float] = _time.monotonic,
        on_query: Callable[[str, float, str], None] | None = None,
    ) -> None:
        self._settings = settings
        # Called once per distinct query sent: (server name, seconds, "ok" or the error's type name).
        self._on_query = on_query
        self._registry = registry or SourceRegistry.installed()
        self._monotonic = monotonic
        if clients is None:
            clients = {
                name: PrometheusClient(
                    name, server, pool_size=settings.max_concurrent_queries, sleep=sleep, monotonic=monotonic
                )
                for name, server in settings.servers.items()
            }
        self._clients: dict[str, QueryClient] = dict(clients)
        self._redactors = [client.redact for client in self._clients.values() if isinstance(client, Redacting)]
        # Per (server, PromQL): when the query last failed to reach its server (seconds since the epoch: the
        # time asked plus how long the pass had run). A sample older than that is from before an outage: after
        # one, Prometheus answers with the samples it holds from before it until it scrapes again
        # (`QueryPlan.failed_at`, docs/metrics.md "Staleness").
        self._failed: dict[tuple[str, str], float] = {}
        self._failed_lock = threading.Lock()

    def redact(self, text: str) -> str:
        """`text` with every configured credential of every server scrubbed."""
        for redact in self._redactors:
            text = redact(text)
        return text

    def close(self) -> None:
        """Close every server connection."""
        for client in self._clients.values():
            client.close()

    def __enter__(self) -> MetricsReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def read_one(self, request: MetricRequest) -> Reading:
        """Read one metric, raising its typed error (for `check`, `plan` and tests)."""
        outcome = self.read([request]).outcomes[0]
        if isinstance(outcome, MetricsError):
            raise outcome
        return outcome

    def plan(self, requests: Sequence[MetricRequest]) -> list[QueryPlan | MetricsError]:
        """What a pass would send for each request, without sending anything (for `plan` and `check`)."""
        memo: dict[Hashable, tuple[MetricSource, QueryPlan] | MetricsError] = {}
        planned = [self._plan_one(request, memo) for request in requests]
        return [item if isinstance(item, MetricsError) else item[1] for item in planned]

    def _plan_one(
        self, request: MetricRequest, memo: dict[Hashable, tuple[MetricSource, QueryPlan] | MetricsError]
    ) -> tuple[MetricSource, QueryPlan] | MetricsError:
        """One request's plan. A built-in source's plan depends only on the metric spec, the binding, the
        namespace, the time and the sync period (never on the pods), so a pass plans each such key once; the
        one thing a target's pods choose is the exact form of a lean sample-time query (`needs_exact`)."""
        try:
            source = self._registry.for_request(request)
        except MetricsError as err:
            return err.with_context(metric=request.name)
        key: Hashable = None
        if isinstance(source, PrometheusSource):
            context = request.context
            key = (source, request.spec, request.binding, context.namespace, context.now, context.sync_period_seconds)
            try:
                known = memo.get(key)
            except TypeError:  # an unhashable part (a custom selector type, say): planned without the memo
                key, known = None, None
            if known is not None:
                # An error object carries its metric's name: each metric gets its own copy.
                if isinstance(known, MetricsError):
                    return _copy_error(known).with_context(metric=request.name)
                return _exact_if_needed(request, known)
        try:
            planned: tuple[MetricSource, QueryPlan] | MetricsError = (
                source,
                self._call_source(source, "plan", partial(source.plan, request, settings=self._settings)),
            )
        except MetricsError as err:
            planned = err
        if not isinstance(planned, MetricsError):
            planned = (planned[0], self._with_failure(planned[1]))
        if key is not None:
            memo[key] = _copy_error(planned) if isinstance(planned, MetricsError) else planned
        if isinstance(planned, MetricsError):
            return planned.with_context(metric=request.name)
        return _exact_if_needed(request, planned)

    def _with_failure(self, plan: QueryPlan) -> QueryPlan:
        """`plan` with the time of its query's last failed attempt to reach the server, when that says more
        than the staleness budget does (a sample older than the budget is refused anyway) and is not after
        the time asked (a clock set back: it proves nothing)."""
        if not plan.has_timestamps:
            return plan
        query = plan.query
        with self._failed_lock:
            failed = self._failed.get((query.server, query.question))
        if failed is None:
            return plan
        asked = query.time.timestamp()
        if failed > asked or asked - failed > plan.staleness_seconds:
            return plan
        if plan.exact is not None and failed > asked - plan.lean_seconds:
            # The lean form marks only samples older than lean_seconds; one from before this recent failure
            # may be younger: every sample time is needed to refuse it.
            return replace(plan.exact_form(), failed_at=failed)
        return replace(plan, failed_at=failed)

    def _note_failure(self, query: Query, elapsed_seconds: float) -> None:
        """Remember that `query` failed to reach its server, `elapsed_seconds` into the pass; forget failures
        older than any staleness budget can be (a day)."""
        at = query.time.timestamp() + elapsed_seconds
        with self._failed_lock:
            key = (query.server, query.question)  # the lean form: as its exact form
            self._failed[key] = max(at, self._failed.get(key, at))
            if len(self._failed) > _FAILED_QUERIES_PRUNE_AT:
                for old in [k for k, when in self._failed.items() if at - when > _FAILED_FORGET_SECONDS]:
                    del self._failed[old]

    def read(self, requests: Sequence[MetricRequest]) -> PassResult:
        """Plan all, query each distinct (server, PromQL, time) once, read every answer.

        Python's cyclic garbage collector is paused for the pass (the answers are hundreds of thousands of
        acyclic containers it would walk again and again); it runs again, and collects, once the pass ends.
        """
        with collector_paused():
            return self._read(requests)

    def _read(self, requests: Sequence[MetricRequest]) -> PassResult:
        started = self._monotonic()
        memo: dict[Hashable, tuple[MetricSource, QueryPlan] | MetricsError] = {}
        planned = _one_form_per_question([self._plan_one(request, memo) for request in requests])
        del memo
        budgets: dict[Query, float] = {}
        for request, item in zip(requests, planned, strict=True):
            if not isinstance(item, MetricsError):
                budget = request.context.sync_period_seconds * RETRY_SHARE_OF_SYNC_PERIOD
                budgets[item[1].query] = min(budget, budgets.get(item[1].query, budget))
        deadline = self._settings.pass_deadline_seconds
        if deadline is None:
            shortest = min((r.context.sync_period_seconds for r in requests), default=15.0)
            deadline = shortest * PASS_SHARE_OF_SYNC_PERIOD
        users: dict[Query, list[int]] = {}
        outcomes: list[Outcome | None] = [None] * len(requests)
        for i, item in enumerate(planned):
            if isinstance(item, MetricsError):
                outcomes[i] = item
            else:
                users.setdefault(item[1].query, []).append(i)

        def read_answer(query: Query, answer: Answer | MetricsError) -> None:
            """Every metric that asked `query`, read from its answer as soon as it arrives (the answer is
            dropped after: the pass never holds every answer at once)."""
            failed = isinstance(answer, MetricsError)
            for i in users[query]:
                request, (source, plan) = requests[i], cast(tuple[MetricSource, QueryPlan], planned[i])
                if failed:
                    # One answer serves several metrics: each gets its own error object with its own name.
                    outcomes[i] = _copy_error(cast(MetricsError, answer)).with_context(**_context(request, plan))
                    continue
                try:
                    outcomes[i] = self._call_source(
                        source, "parse", partial(source.parse, request, plan, cast(Answer, answer))
                    )
                except MetricsError as err:
                    outcomes[i] = err.with_context(**_context(request, plan))

        self._run(budgets, deadline_seconds=deadline, on_answer=read_answer)
        assert all(outcome is not None for outcome in outcomes), "a planned query was never answered"
        result = PassResult(
            outcomes=tuple(cast(list[Outcome], outcomes)),
            queries_planned=sum(1 for item in planned if not isinstance(item, MetricsError)),
            queries_sent=len(budgets),
            duration_seconds=self._monotonic() - started,
        )
        log.debug(
            "metrics_pass_finished",
            metrics=len(requests),
            queries_planned=result.queries_planned,
            queries_sent=result.queries_sent,
            failures=sum(1 for o in result.outcomes if isinstance(o, MetricsError)),
            duration_seconds=round(result.duration_seconds, 4),
        )
        return result

    def _run(
        self,
        budgets: Mapping[Query, float],
        *,
        deadline_seconds: float,
        on_answer: Callable[[Query, Answer | MetricsError], None],
    ) -> None:
        """Every query on the pool, each answer given to `on_answer` (in this thread) as it arrives, while the
        others are still under way; what has not answered by the deadline (plus the grace) is a timeout."""
        started = self._monotonic()
        deadline = started + deadline_seconds
        queries = list(budgets)
        if not queries:
            return
        sent: set[Query] = set()  # the queries whose request went out (set.add is atomic)
        workers = min(self._settings.max_concurrent_queries, len(queries))
        # A query is sent only while fewer than `workers` answers are out or waiting to be read: the threads
        # fetch and decode faster than this thread reads, and unbounded they decoded every answer of the pass
        # before most were read (at 10,000 targets, ~120 MiB of decoded answers alive at once).
        permits = threading.Semaphore(workers)
        ended = threading.Event()

        def not_sent() -> QueryTimeoutError:
            return QueryTimeoutError(
                f"not sent: the pass ran past its {deadline_seconds:g} s deadline",
                scope="pass",
                limit_seconds=deadline_seconds,
            )

        def one(query: Query) -> tuple[Answer | MetricsError, bool]:
            """The query's answer, and whether it holds a permit (released once the answer is read)."""
            client = self._clients.get(query.server)
            if client is None:
                return PermanentError(f"no connection to server {query.server!r}", error_type="config"), False
            remaining = deadline - self._monotonic()
            if remaining <= 0 or not permits.acquire(timeout=remaining):
                return not_sent(), False
            remaining = deadline - self._monotonic()
            if ended.is_set() or remaining <= 0:  # the pass is over (woken to leave), or its deadline passed
                return not_sent(), True
            sent_at = self._monotonic()
            sent.add(query)
            answer: Answer | MetricsError
            try:
                budget = min(budgets[query], remaining)
                answer = client.query(query.promql, time=query.time, budget_seconds=budget, deadline_seconds=remaining)
            except MetricsError as err:
                err.promql = query.question  # a lean query's text changes every pass: its error names the question
                answer = err
            except Exception as err:  # the last line: never let one query's surprise end the pass
                answer = self._unexpected(err, what=f"querying server {query.server!r}")
            self._observe(query.server, self._monotonic() - sent_at, answer)
            return answer, True

        def answered(query: Query, answer: Answer | MetricsError) -> None:
            """Hand the answer on; a query sent that could not reach its server (unreachable, timed out, 5xx,
            429) is remembered (a query never sent says nothing about the server)."""
            if isinstance(answer, TransientError) and query in sent:
                self._note_failure(query, self._monotonic() - started)
            on_answer(query, answer)

        # Not a `with` block: leaving one waits for every thread, and the pass must not wait for stragglers.
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prometheus-query")
        futures: dict[Future[tuple[Answer | MetricsError, bool]], Query] = {}
        try:
            futures = {pool.submit(one, q): q for q in queries}
            # One bound for the whole pass: what has not answered by the deadline plus the grace is a timeout,
            # however long reading the earlier answers took.
            bound = max(deadline - self._monotonic(), 0.0) + PASS_GRACE_SECONDS
            with contextlib.suppress(FuturesTimeout):
                for future in as_completed(futures, timeout=bound):
                    answer, held = future.result()
                    try:
                        answered(futures.pop(future), answer)
                    finally:
                        del answer  # read: dropped before the next query may be sent
                        if held:
                            permits.release()
        finally:
            # Queries not started are dropped; running ones finish on their own (each is bounded by its
            # deadline, and closes its connection when cut off); their answers are discarded. A thread waiting
            # for a permit is woken to leave without sending.
            ended.set()
            for _ in range(workers):
                permits.release()
            pool.shutdown(wait=False, cancel_futures=True)
        for query in futures.values():
            answered(
                query,
                QueryTimeoutError(
                    f"no answer by the pass's {deadline_seconds:g} s deadline; abandoned",
                    scope="pass",
                    limit_seconds=deadline_seconds,
                ),
            )

    def _observe(self, server: str, seconds: float, answer: Answer | MetricsError) -> None:
        """Tell the observer how a query went; an observer that fails is logged, never the query's failure."""
        if self._on_query is None:
            return
        outcome = type(answer).__name__ if isinstance(answer, MetricsError) else "ok"
        try:
            self._on_query(server, seconds, outcome)
        except Exception as err:
            log.warning("metrics_query_observer_failed", error=self.redact(f"{type(err).__name__}: {err}"))

    def _call_source(self, source: MetricSource, step: str, call: Callable[[], _T]) -> _T:
        """Call a source; a stray exception becomes a typed error for this metric only."""
        try:
            return call()
        except MetricsError:
            raise
        except Exception as err:
            raise self._unexpected(err, what=f"metric source {source.name!r} in {step}", error_type="source") from err

    def _unexpected(self, err: Exception, *, what: str, error_type: str = "internal") -> PermanentError:
        """An exception nobody typed: logged once with its (scrubbed) traceback, returned as a typed error."""
        text = self.redact("".join(traceback.format_exception(err)))
        log.error("metrics_unexpected_error", where=what, error_type=error_type, traceback=text)
        detail = self.redact(f"{type(err).__name__}: {err}")
        return PermanentError(f"{what} failed unexpectedly: {detail[:300]}", error_type=error_type)


def _context(request: MetricRequest, plan: QueryPlan) -> dict[str, str]:
    """What an error of one metric's reading names: its query, server and metric."""
    # The question's text, the same in every pass (a lean query's own text carries the time asked): an error's
    # message is a condition's and an Event's message, and a message that changed every tick would write both.
    return {
        "promql": plan.query.question,
        "server": plan.query.server,
        "metric": request.name,
    }


def _copy_error(error: MetricsError) -> MetricsError:
    """A shallow copy of an error, so per-metric context does not leak between metrics sharing a query."""
    copy = error.__class__.__new__(error.__class__)
    copy.__dict__.update(error.__dict__)
    copy.args = error.args
    copy.__cause__ = error.__cause__
    return copy
