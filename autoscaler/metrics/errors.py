"""The metric-source layer's error tree: every way reading a metric can fail, as a typed exception.

A failure is never a number: no data, NaN, infinities and stale samples are errors here, and the caller
(the daemon, once it lands) turns each into the core's `MetricFailure(str(error))`. Library exceptions
(requests, urllib3) are translated at the edge (`client.py`) and never escape this package.
Messages name the server and the query but never a credential: servers are named by their settings key,
and URLs are refused at load when they carry user information.
"""

from __future__ import annotations

from datetime import datetime


class MetricsError(Exception):
    """Base class: reading one metric failed. Context is kept as attributes, not only in the text."""

    def __init__(self, message: str, *, promql: str = "", server: str = "", metric: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.promql = promql
        self.server = server
        self.metric = metric

    def __str__(self) -> str:
        context = []
        if self.metric:
            context.append(f"metric {self.metric!r}")
        if self.server:
            context.append(f"server {self.server!r}")
        if self.promql:
            context.append(f"query {self.promql!r}")
        return f"{self.message} ({', '.join(context)})" if context else self.message

    def with_context(self, *, promql: str = "", server: str = "", metric: str = "") -> MetricsError:
        """Fill context attributes that are still empty (the same object, for `raise ... from`)."""
        self.promql = self.promql or promql
        self.server = self.server or server
        self.metric = self.metric or metric
        return self


class TransientError(MetricsError):
    """Worth retrying soon: unreachable server, timeout, HTTP 5xx or 429. The next tick is the last retry."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after_seconds: float | None = None,
        promql: str = "",
        server: str = "",
        metric: str = "",
    ) -> None:
        super().__init__(message, promql=promql, server=server, metric=metric)
        self.status = status
        self.retry_after_seconds = retry_after_seconds


class QueryTimeoutError(TransientError):
    """No complete answer in time: cut off by wall-clock time, whatever the server was doing (slow, trickling).

    `scope` says which bound cut it: `request` (one attempt's `timeoutSeconds`) or `pass` (the evaluation
    pass's deadline: the query was cut off, or not sent at all); `limit_seconds` is that bound.
    """

    def __init__(
        self,
        message: str,
        *,
        scope: str,
        limit_seconds: float,
        promql: str = "",
        server: str = "",
        metric: str = "",
    ) -> None:
        super().__init__(message, promql=promql, server=server, metric=metric)
        self.scope = scope
        self.limit_seconds = limit_seconds


class PermanentError(MetricsError):
    """Retrying will not help: fix the query, the binding, the settings or the server's permissions.

    `error_type` is Prometheus's `errorType` (`bad_data`, `execution`, ...) when the server said so, else one
    of ours: `config`, `unsafe_label_value`, `unexpected_result_type`, `too_many_series`, `bad_response`,
    `tls`, `source`, `internal`, `http_<status>`.
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str,
        status: int | None = None,
        promql: str = "",
        server: str = "",
        metric: str = "",
    ) -> None:
        super().__init__(message, promql=promql, server=server, metric=metric)
        self.error_type = error_type
        self.status = status


class BadResponseError(PermanentError):
    """The server answered, but nothing in the answer can be read as this metric; asking again in this tick
    will not fix it.

    `error_type` is `bad_response` (not the API's JSON, a malformed detail, a value or time no metric can
    mean) or `unexpected_result_type` (a well-formed answer of another result type than the binding expects).
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str = "bad_response",
        status: int | None = None,
        promql: str = "",
        server: str = "",
        metric: str = "",
    ) -> None:
        super().__init__(message, error_type=error_type, status=status, promql=promql, server=server, metric=metric)


class UnsafeLabelValueError(PermanentError):
    """A label name or value that cannot be written into PromQL safely; refused, never injected."""

    def __init__(self, message: str) -> None:
        super().__init__(message, error_type="unsafe_label_value")


class NoDataError(MetricsError):
    """The query answered but gave no usable number (empty, NaN, +Inf, -Inf): permanent for this tick.

    `reason` is one of `empty`, `nan`, `+inf`, `-inf`, `stale`.
    """

    def __init__(self, message: str, *, reason: str, promql: str = "", server: str = "", metric: str = "") -> None:
        super().__init__(message, promql=promql, server=server, metric=metric)
        self.reason = reason


class StaleDataError(NoDataError):
    """The newest sample is older than the staleness budget, or (`failed_at` set) older than its query's last
    failed attempt to reach the server (`QueryPlan.failed_at`): a sample from before an outage."""

    def __init__(
        self,
        message: str,
        *,
        age_seconds: float,
        budget_seconds: float,
        failed_at: datetime | None = None,
        promql: str = "",
        server: str = "",
        metric: str = "",
    ) -> None:
        super().__init__(message, reason="stale", promql=promql, server=server, metric=metric)
        self.age_seconds = age_seconds
        self.budget_seconds = budget_seconds
        self.failed_at = failed_at
