"""The optional `prometheus:` block of one metric in the autoscaler spec: how that metric maps to PromQL.

A strict pydantic model (unknown keys are errors, camelCase in YAML, snake_case in Python, every field
described). The spec layer embeds it as the `prometheus` field of each metric entry; `check_binding`
checks the cross-references to the daemon settings (server and template names) and the rules that depend
on the metric's type, returning messages that name the field path. Parsing only: no network.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics.promql import LABEL_NAME, check_template
from autoscaler.metrics.settings import MetricsSettings


class StrictModel(BaseModel):
    """Unknown keys are errors; YAML speaks camelCase, Python snake_case."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True, validate_default=True
    )


def _label_name(value: str) -> str:
    if not LABEL_NAME.match(value):
        raise ValueError(f"{value!r} is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)")
    return value


class PrometheusBinding(StrictModel):
    """How one metric of the spec is read from Prometheus. Every field is optional."""

    source: str | None = Field(
        default=None,
        description="Name of the registered metric source that reads this metric; default: the built-in "
        "source for the metric's type.",
    )
    server: str | None = Field(
        default=None,
        description="Name of the Prometheus server (a key of metrics.servers) to ask; default: metrics.defaultServer.",
    )
    template: str | None = Field(
        default=None,
        description="Name of a query template (a key of metrics.templates) filled with label matchers for "
        "the namespace, pods, described object and metric selector. Exclusive with `query`.",
    )
    query: str | None = Field(
        default=None,
        description="A raw PromQL query (KEDA style); `${namespace}`-style placeholders are filled as in "
        "templates. Exclusive with `template`.",
    )
    freshness: str | None = Field(
        default=None,
        description="A plain PromQL selector naming the series whose sample times count for staleness; "
        "default: the query itself when it is a plain selector, else the template's own.",
    )
    namespace_label: str = Field(
        default="namespace", description="Label holding the pod's or object's namespace in the results."
    )
    pod_label: str = Field(default="pod", description="Label mapping Pods and Resource results to pods.")
    container_label: str = Field(default="container", description="Label mapping Resource results to containers.")
    object_label: str | None = Field(
        default=None,
        description="Object metrics: label holding the described object's name; default: its kind in lower "
        'case (an Ingress is matched with `ingress="name"`).',
    )
    empty_as_zero: bool = Field(
        default=False,
        description="Opt in: read an empty result as 0 instead of a no-data error. NaN and infinities stay errors.",
    )
    sum_series: bool = Field(
        default=False,
        description="Object/External: accept several series and sum them (External passes each value to "
        "the HPA sum); default: more than one series is an error.",
    )
    staleness_seconds: float | None = Field(
        default=None,
        gt=0,
        description="Samples older than this are errors; default: metrics.stalenessSeconds, else twice the "
        "sync period plus 60 s.",
    )
    result_type: Literal["vector", "scalar"] = Field(
        default="vector", description="The result type the query must return (Object/External may be scalar)."
    )
    window_seconds: float | None = Field(
        default=None,
        gt=0,
        description="The sample window reported with Pods and Resource readings (the HPA uses it for CPU "
        "readiness); default: the template's, else 60 s.",
    )

    @field_validator("namespace_label", "pod_label", "container_label", "object_label")
    @classmethod
    def _check_labels(cls, value: str | None) -> str | None:
        return value if value is None else _label_name(value)

    @field_validator("query", "freshness")
    @classmethod
    def _check_query(cls, value: str | None) -> str | None:
        if value is not None:
            if not value.strip():
                raise ValueError("must not be empty")
            check_template(value)
        return value

    @model_validator(mode="after")
    def _one_way_to_query(self) -> PrometheusBinding:
        if self.template is not None and self.query is not None:
            raise ValueError("set `template` or `query`, not both")
        return self


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
