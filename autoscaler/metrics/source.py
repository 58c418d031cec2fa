"""The metric-source interface: plan a query for one metric of one target, then turn its answer into a
reading of the core's types.

Planning and parsing are split so that a pass can gather the queries of every target first, send each
distinct one once, and hand every metric its answer (see `evaluate.py`). A source raises only
`MetricsError`s; it does no I/O of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Protocol, runtime_checkable

from autoscaler.core.types import MetricSourceType, Reading
from autoscaler.metrics.context import Answer, MetricRequest, Query
from autoscaler.metrics.settings import MetricsSettings


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """The query a source wants answered for one metric, and what it needs to read the answer.

    `grouping` is the labels one value is keyed by (namespace and pod, plus container for resources; none
    for Object/External); `has_timestamps` says the query also returns sample times (see
    `promql.with_sample_timestamps`), else only Prometheus's lookback bounds a sample's age. `failed_at` is the
    time (seconds since the epoch) of this query's last failed attempt to reach its server, when the reader
    remembers one (`MetricsReader`): a sample older than it is from before an outage, and refused.
    `exact` is set when `query` is the lean form of the sample-time query (`promql.with_sample_timestamps`
    with `marked_before` the time asked minus `lean_seconds`: only samples older than that are marked): the
    query that marks every group, which the reader sends instead when a failure it remembers is more recent
    than that.
    `lean_seconds` is set (and `exact` not) when `query` is the exact form of a question that has a lean one.
    """

    query: Query
    result_type: str
    grouping: tuple[str, ...]
    has_timestamps: bool
    staleness_seconds: float
    window_seconds: float
    failed_at: float | None = None
    exact: Query | None = None
    lean_seconds: float = 0.0

    def exact_form(self) -> QueryPlan:
        """This plan asking the exact form of its question (itself when it already does)."""
        return self if self.exact is None else replace(self, query=self.exact, exact=None)


@runtime_checkable
class MetricSource(Protocol):
    """Reads metrics of some HPA metric types. Registered by `name` (see `registry.py`)."""

    name: ClassVar[str]
    metric_types: ClassVar[tuple[MetricSourceType, ...]]

    def plan(self, request: MetricRequest, *, settings: MetricsSettings) -> QueryPlan:
        """The query that answers `request` (raises `MetricsError` on a bad binding)."""
        ...

    def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        """The reading in `answer` (raises `NoDataError`, `StaleDataError` or `PermanentError`)."""
        ...
