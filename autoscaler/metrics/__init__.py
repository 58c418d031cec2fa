"""The metric-source layer: reads the metrics an autoscaler spec names from Prometheus-compatible servers.

The daemon will build a `MetricsReader` from the `metrics` settings and, once per tick, call
`reader.read([MetricRequest(spec, context, binding), ...])`: every metric gets a reading of the core's
types or a typed `MetricsError`, never a silent zero. Sources plug in through `SourceRegistry` (entry-point
group `autoscaler.metric_sources`). This package never decides anything: that is the core's job.
"""

from autoscaler.metrics.binding import check_binding
from autoscaler.metrics.context import Answer, MetricRequest, Query, ReadContext, Series
from autoscaler.metrics.errors import (
    BadResponseError,
    MetricsError,
    NoDataError,
    PermanentError,
    QueryTimeoutError,
    StaleDataError,
    TransientError,
    UnsafeLabelValueError,
)
from autoscaler.metrics.evaluate import MetricsReader, PassResult, QueryClient
from autoscaler.metrics.registry import ENTRY_POINT_GROUP, SourceRegistry
from autoscaler.metrics.settings import MetricsSettings, PrometheusServer, QueryTemplate
from autoscaler.metrics.source import MetricSource, QueryPlan
from autoscaler.spec.prometheus import PrometheusBinding

__all__ = [
    "ENTRY_POINT_GROUP",
    "Answer",
    "BadResponseError",
    "MetricRequest",
    "MetricSource",
    "MetricsError",
    "MetricsReader",
    "MetricsSettings",
    "NoDataError",
    "PassResult",
    "PermanentError",
    "PrometheusBinding",
    "PrometheusServer",
    "Query",
    "QueryClient",
    "QueryPlan",
    "QueryTemplate",
    "QueryTimeoutError",
    "ReadContext",
    "Series",
    "SourceRegistry",
    "StaleDataError",
    "TransientError",
    "UnsafeLabelValueError",
    "check_binding",
]
