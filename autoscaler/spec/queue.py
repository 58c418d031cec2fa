"""The spec's `drainTime` and `formula` blocks (extensions, docs/spec.md "Drain time" and "Formula").

Strict pydantic models, as the rest of the spec: unknown keys are errors, camelCase in YAML. A formula is
parsed here, at load time, by the core's expression language (autoscaler/core/formula.py): a syntax error,
an unknown function, a wrong number of arguments, a division by a constant zero, or a name that is not one
of the formula's inputs is a problem of `formula.expression` naming the column. `drain_time_to_core` and
`formula_to_core` give the core's values (autoscaler/core/queue.py). Each input is read as an External
metric (the sum of its series) through its own `prometheus` binding, in the daemon's one metric pass.
This module imports no other spec model module (autoscaler/spec/hpa.py imports it).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from autoscaler.core import types as core
from autoscaler.core.formats import milli_value
from autoscaler.core.formula import FUNCTIONS, MAX_LENGTH, FormulaError, check_names, parse
from autoscaler.core.queue import DrainTime, ExtraMetrics, FormulaMetric
from autoscaler.spec.fields import PathSegmentName, PositiveQuantity
from autoscaler.spec.prometheus import PrometheusBinding

MAX_INPUTS = 32  # as many as the spec's metrics
MAX_INPUT_NAME_LENGTH = 63
MAX_DRAIN_SECONDS = 86400  # a day: a drain target longer than that is not a scaling signal
INPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
INPUT_NAME_PATTERN = INPUT_NAME.pattern


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)


class QueueInput(_Model):
    """One reading: an External-like value (the sum of its series) read through its Prometheus binding."""

    metric_name: PathSegmentName | None = Field(
        None,
        alias="metricName",
        description="The metric name a query template fills in (${metric}); default: the input's name.",
    )
    prometheus: PrometheusBinding | None = Field(
        None, description="How the input is read (a raw `query` or a named `template`, docs/metrics.md)."
    )


class DrainInput(QueueInput):
    @model_validator(mode="after")
    def _readable(self) -> DrainInput:
        if self.metric_name is None and (self.prometheus is None or self.prometheus.query is None):
            raise ValueError("set `prometheus.query`, or `metricName` for a query template")
        return self


class DrainTimeSpec(_Model):
    """desired = ceil(backlog / (throughput per replica x targetSeconds)); docs/spec.md "Drain time"."""

    backlog: DrainInput = Field(description="Items waiting (a queue's depth, a consumer group's lag).")
    processing_rate: DrainInput = Field(
        alias="processingRate",
        description="Items processed per second by the whole workload (e.g. sum(rate(jobs_done_total[2m]))).",
    )
    target_seconds: int = Field(
        alias="targetSeconds",
        ge=1,
        le=MAX_DRAIN_SECONDS,
        description="How long the backlog should take to drain, in seconds.",
    )


class FormulaInput(QueueInput):
    name: str = Field(
        min_length=1,
        max_length=MAX_INPUT_NAME_LENGTH,
        description="The name the expression reads: a letter or _, then letters, digits or _.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not INPUT_NAME.match(value):
            raise ValueError(f"{value!r} is not a formula name (a letter or _, then letters, digits or _)")
        if value in FUNCTIONS:
            raise ValueError(f"{value!r} is the name of a function")
        return value


class FormulaTarget(_Model):
    type: Literal["Value", "AverageValue"] = Field(
        description="Value: the formula's value against `value`; AverageValue: its value per replica."
    )
    average_value: PositiveQuantity | None = Field(
        None, alias="averageValue", validate_default=True, description="Target value per replica (AverageValue)."
    )
    value: PositiveQuantity | None = Field(
        None, validate_default=True, description="Target value of the formula (Value)."
    )

    @field_validator("average_value")
    @classmethod
    def _average_value(cls, value: str | int | None, info: ValidationInfo) -> str | int | None:
        if value is None and info.data.get("type") == "AverageValue":
            raise ValueError("required for a target of type AverageValue")
        return value

    @field_validator("value")
    @classmethod
    def _value(cls, value: str | int | None, info: ValidationInfo) -> str | int | None:
        if value is None and info.data.get("type") == "Value":
            raise ValueError("required for a target of type Value")
        if value is not None and info.data.get("average_value") is not None:
            raise ValueError("may not set both a target value and a per-replica target (averageValue)")
        return value


class FormulaSpec(_Model):
    """An expression over named inputs with its own target; docs/spec.md "Formula"."""

    inputs: list[FormulaInput] = Field(
        min_length=1, max_length=MAX_INPUTS, description="The named readings the expression uses."
    )
    expression: str = Field(
        min_length=1,
        max_length=MAX_LENGTH,
        description="Numbers, input names, + - * /, parentheses, min, max, abs, ceil, floor.",
    )
    target: FormulaTarget

    @field_validator("inputs")
    @classmethod
    def _unique(cls, inputs: list[FormulaInput]) -> list[FormulaInput]:
        names = [i.name for i in inputs]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"input name {twice[0]!r} is used more than once")
        return inputs

    @field_validator("expression")
    @classmethod
    def _expression(cls, text: str, info: ValidationInfo) -> str:
        """Parsed at load time: every problem names its column; names must be inputs (when those are valid)."""
        try:
            formula = parse(text)
            inputs = info.data.get("inputs")
            if isinstance(inputs, list):
                check_names(formula, {i.name for i in inputs})
        except FormulaError as err:
            raise ValueError(str(err)) from err
        return text


def _input_metric(name: str, model: QueueInput) -> core.MetricSpec:
    """An input as the External metric the metric-source layer reads (its target is never read)."""
    return core.MetricSpec(
        core.MetricSourceType.EXTERNAL,
        core.MetricTarget(core.MetricTargetType.VALUE, value=1000),
        metric_name=model.metric_name or name,
    )


def extra_metrics_to_core(drain_time: DrainTimeSpec | None, formula: FormulaSpec | None) -> ExtraMetrics | None:
    """The core's value for the two blocks; None when neither is set (the HPA's path)."""
    if drain_time is None and formula is None:
        return None
    drain = None
    if drain_time is not None:
        drain = DrainTime(
            backlog=_input_metric("backlog", drain_time.backlog),
            processing_rate=_input_metric("processing_rate", drain_time.processing_rate),
            target_seconds=drain_time.target_seconds,
        )
    combined = None
    if formula is not None:
        target = formula.target
        combined = FormulaMetric(
            formula=parse(formula.expression),
            inputs=tuple((i.name, _input_metric(i.name, i)) for i in formula.inputs),
            target=core.MetricTarget(
                core.MetricTargetType(target.type),
                value=milli_value(target.value) if target.value is not None else None,
                average_value=milli_value(target.average_value) if target.average_value is not None else None,
            ),
        )
    return ExtraMetrics(drain_time=drain, formula=combined)


def input_bindings(
    drain_time: DrainTimeSpec | None, formula: FormulaSpec | None
) -> tuple[PrometheusBinding | None, ...]:
    """Each input's binding, in the order of `ExtraMetrics.inputs()` (for the daemon's metric requests)."""
    bindings: list[PrometheusBinding | None] = []
    if drain_time is not None:
        bindings += [drain_time.backlog.prometheus, drain_time.processing_rate.prometheus]
    if formula is not None:
        bindings += [i.prometheus for i in formula.inputs]
    return tuple(bindings)


__all__ = [
    "DrainTimeSpec",
    "FormulaSpec",
    "FormulaTarget",
    "extra_metrics_to_core",
    "input_bindings",
]
