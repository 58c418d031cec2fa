"""The checks of a metric's `prometheus:` block that need the metric-source layer's settings.

The block itself (`PrometheusBinding`) belongs to the spec layer (autoscaler/spec/prometheus.py), which
parses it with the rest of the spec; `check_binding` checks its cross-references to the daemon settings
(server and template names) and the rules that depend on the metric's type, returning messages that name
the field path. Parsing only: no network.
"""

from __future__ import annotations

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics.settings import MetricsSettings
from autoscaler.spec.prometheus import PrometheusBinding


def check_binding(
    binding: PrometheusBinding | None, *, metric_type: MetricSourceType, settings: MetricsSettings
) -> list[str]:
    """Problems with a binding given its metric's type and the daemon settings, as "field: message"."""
    problems: list[str] = []
    if binding is None:
        if not settings.servers:
            problems.append("prometheus.server: no Prometheus server is configured in metrics.servers")
        return problems
    if binding.server is not None and binding.server not in settings.servers:
        problems.append(f"prometheus.server: no server named {binding.server!r} in metrics.servers")
    elif binding.server is None and not settings.servers:
        problems.append("prometheus.server: no Prometheus server is configured in metrics.servers")
    elif binding.server is None and settings.default_server_name() is None:
        problems.append("prometheus.server: required, metrics.defaultServer is not set")
    if binding.template is not None and binding.template not in settings.templates:
        problems.append(f"prometheus.template: no template named {binding.template!r} in metrics.templates")
    per_pod = metric_type in (
        MetricSourceType.RESOURCE,
        MetricSourceType.CONTAINER_RESOURCE,
        MetricSourceType.PODS,
    )
    if per_pod and binding.sum_series:
        problems.append(f"prometheus.sumSeries: only for Object and External metrics, not {metric_type}")
    if per_pod and binding.result_type == "scalar":
        problems.append(f"prometheus.resultType: {metric_type} metrics need a vector (one series per pod)")
    if binding.object_label is not None and metric_type != MetricSourceType.OBJECT:
        problems.append("prometheus.objectLabel: only for Object metrics")
    if binding.result_type == "scalar" and binding.freshness is not None:
        problems.append("prometheus.freshness: a scalar result carries no sample times")
    return problems
