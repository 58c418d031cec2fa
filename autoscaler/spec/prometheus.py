"""The optional `prometheus:` block of one metric in the autoscaler spec: how that metric maps to PromQL.

The spec layer owns this part of the spec, like every other: a strict pydantic model (unknown keys are
errors, camelCase in YAML, snake_case in Python, every field described) and the grammar its fields are
checked against (Prometheus label names, the `${name}` placeholders of query templates). The metric-source
layer reads the parsed binding and checks what depends on its own settings (`metrics.binding.check_binding`:
server and template names, rules per metric type). Parsing only: no network, no PromQL building.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
# The placeholders a query template or raw query may use; autoscaler.metrics.promql fills them.
PLACEHOLDERS = frozenset({"matchers", "by", "namespace", "metric", "object_name", "object_kind", "container", "window"})
PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")


def placeholders_in(template: str) -> set[str]:
    """The `${name}` placeholders a template uses."""
    return set(PLACEHOLDER.findall(template))


def check_template(template: str) -> None:
    """Refuse unknown placeholders (raises ValueError, for settings validation)."""
    unknown = placeholders_in(template) - PLACEHOLDERS
    if unknown:
        raise ValueError(
            f"unknown placeholder(s) {', '.join(sorted('${' + n + '}' for n in unknown))}; "
            f"known: {', '.join(sorted('${' + n + '}' for n in PLACEHOLDERS))}"
        )


class StrictModel(BaseModel):
    """Unknown keys are errors; YAML speaks camelCase, Python snake_case; no type coercion."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
        strict=True,
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
        allow_inf_nan=False,
        description="Samples older than this are errors; default: metrics.stalenessSeconds, else twice the "
        "sync period plus 60 s.",
    )
    result_type: Literal["vector", "scalar"] = Field(
        default="vector", description="The result type the query must return (Object/External may be scalar)."
    )
    window_seconds: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
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
