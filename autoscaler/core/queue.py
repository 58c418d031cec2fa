"""Queue-aware proposals beside the HPA's metrics: a drain time, and a formula over named inputs.

Both are extensions (docs/spec.md, "Drain time" and "Formula"); a spec without them decides exactly as the
HPA. Each reads its own inputs (External-like readings, each the sum of its series, carried in the decision
snapshot) and proposes a replica count that joins "the largest proposal wins" of computeReplicasForMetrics,
through the HPA calculator's own rules (tolerance, ready pods, the scale-from-zero ceiling):

- drain time: desired = ceil(backlog / (throughput per replica x target seconds)), the throughput per
  replica being the processing rate divided by the ready pods that produced it. That is the HPA's
  getUsageRatioReplicaCount with the usage ratio (backlog / rate) / target seconds, the estimated drain time
  over its target, and the ready pods. A backlog of 0 proposes 0. When the throughput is unknown (no ready
  pod, a rate of 0 or below, or a rate that could not be read) the proposal is the current count, and 1 when
  that is 0 while there is a backlog: never a scale-down on an unknown rate, and a worker scaled to zero
  starts when work arrives. A backlog that cannot be read fails the proposal (a failed metric: it holds).
- formula: the value of an expression over named inputs (autoscaler/core/formula.py), computed as an
  External metric with a Value target (getUsageRatioReplicaCount) or an AverageValue target (the value per
  status replica, GetExternalPerPodMetricReplicas). A failed input, or an expression with no value (a
  division by zero at run time), fails the proposal: never a zero.

Standard library only; no clock reads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from autoscaler.core import objects
from autoscaler.core.calculator import Calculation, Tolerances
from autoscaler.core.errors import MetricComputationError
from autoscaler.core.formula import Formula, FormulaEvaluationError, evaluate
from autoscaler.core.gomath import MAX_INT64, MIN_INT64
from autoscaler.core.types import (
    ExternalReading,
    MetricFailure,
    MetricInput,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Pod,
)

DRAIN_TIME = "drainTime"
FORMULA = "formula"


@dataclass(frozen=True, slots=True)
class Input:
    """One reading a drain time or a formula reads: where it is in the spec, its name, the metric to read.

    `metric` is an External metric's identity (its target is not read): the value is the sum of its series.
    """

    field: str  # "drainTime.backlog", "formula.inputs[0]"
    name: str  # "backlog", or the name a formula reads
    metric: MetricSpec


@dataclass(frozen=True, slots=True)
class DrainTime:
    backlog: MetricSpec
    processing_rate: MetricSpec
    target_seconds: int


@dataclass(frozen=True, slots=True)
class FormulaMetric:
    formula: Formula
    inputs: tuple[tuple[str, MetricSpec], ...]  # (name, metric), in the spec's order
    target: MetricTarget  # Value or AverageValue


@dataclass(frozen=True, slots=True)
class ExtraMetrics:
    """The spec's extra proposals; `inputs()` lists the readings `decide` takes for them, in order."""

    drain_time: DrainTime | None = None
    formula: FormulaMetric | None = None

    def inputs(self) -> tuple[Input, ...]:
        found: list[Input] = []
        if self.drain_time is not None:
            found.append(Input(f"{DRAIN_TIME}.backlog", "backlog", self.drain_time.backlog))
            found.append(Input(f"{DRAIN_TIME}.processingRate", "processingRate", self.drain_time.processing_rate))
        if self.formula is not None:
            for i, (name, metric) in enumerate(self.formula.inputs):
                found.append(Input(f"{FORMULA}.inputs[{i}]", name, metric))
        return tuple(found)


@dataclass(frozen=True, slots=True)
class ExtraResult:
    """One extra proposal, or its failure, and how it was reached.

    `values` are the inputs' values as read (None: that input failed); `value` is what was compared with the
    target (the estimated drain seconds, or the formula's value).
    """

    kind: str  # DRAIN_TIME or FORMULA
    name: str  # how the decision names the proposal ("drain time", "formula queue / max(consumers, 1)")
    explanation: str
    values: tuple[tuple[str, float | None], ...] = ()
    value: float | None = None
    proposed_replicas: int | None = None
    calculation: Calculation | None = None
    error: str | None = None


def proposals(
    extra: ExtraMetrics,
    inputs: Sequence[MetricInput],
    *,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
    now: datetime,
) -> tuple[ExtraResult, ...]:
    """Every extra proposal of the spec, from its inputs (one per `extra.inputs()`; missing ones failed)."""
    wanted = extra.inputs()
    readings = list(inputs)[: len(wanted)]
    readings += [MetricFailure("not read")] * (len(wanted) - len(readings))
    by_field = {item.field: reading for item, reading in zip(wanted, readings, strict=True)}
    results: list[ExtraResult] = []
    if extra.drain_time is not None:
        results.append(
            drain_time_proposal(
                extra.drain_time,
                backlog=by_field[f"{DRAIN_TIME}.backlog"],
                rate=by_field[f"{DRAIN_TIME}.processingRate"],
                spec_replicas=spec_replicas,
                pods=pods,
                tolerances=tolerances,
            )
        )
    if extra.formula is not None:
        values = [(name, by_field[f"{FORMULA}.inputs[{i}]"]) for i, (name, _) in enumerate(extra.formula.inputs)]
        results.append(
            formula_proposal(
                extra.formula,
                values,
                spec_replicas=spec_replicas,
                status_replicas=status_replicas,
                pods=pods,
                tolerances=tolerances,
                now=now,
            )
        )
    return tuple(results)


def input_value(reading: MetricInput) -> float:
    """An input's value: the sum of its series, in units (not milli-units); raises MetricComputationError."""
    if isinstance(reading, MetricFailure):
        raise MetricComputationError(reading.message)
    if not isinstance(reading, ExternalReading):
        raise MetricComputationError(f"a reading of type {type(reading).__name__} does not fit an input")
    if not reading.values:
        raise MetricComputationError("no metrics returned")
    return sum(reading.values) / 1000.0


def _number(value: float) -> str:
    return f"{value:.6g}"


def _ready(pods: Sequence[Pod]) -> int:
    """getReadyPodsCount (objects.ready_pods_count), with no pod at all counted as 0 ready rather than an error."""
    return objects.ready_pods_count(pods) if pods else 0


def drain_time_proposal(
    rule: DrainTime,
    *,
    backlog: MetricInput,
    rate: MetricInput,
    spec_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
) -> ExtraResult:
    """The drain-time proposal (see the module's docstring for the rules)."""
    name = "drain time"
    target = rule.target_seconds
    try:
        queued = input_value(backlog)
    except MetricComputationError as err:
        return ExtraResult(
            DRAIN_TIME,
            name,
            f"drain time: the backlog could not be read: {err.message}",
            error=f"unable to get the drain time's backlog: {err.message}",
        )
    try:
        processed: float | None = input_value(rate)
        rate_problem = ""
    except MetricComputationError as err:
        processed, rate_problem = None, f"the processing rate could not be read: {err.message}"
    values = (("backlog", queued), ("processingRate", processed))
    if queued < 0:
        message = f"the backlog is negative ({_number(queued)})"
        return ExtraResult(
            DRAIN_TIME, name, f"drain time: {message}", values, error=f"invalid drain time backlog: {message}"
        )
    if queued == 0:
        return ExtraResult(
            DRAIN_TIME, name, "drain time: backlog 0, nothing to drain: propose 0", values, 0.0, proposed_replicas=0
        )
    ready = _ready(pods)
    if not rate_problem and processed is not None and processed <= 0:
        rate_problem = f"the processing rate is {_number(processed)}"
    if not rate_problem and ready == 0:
        rate_problem = "no ready pod processes the queue"
    if rate_problem:
        held = max(spec_replicas, 1)
        return ExtraResult(
            DRAIN_TIME,
            name,
            f"drain time: backlog {_number(queued)}, throughput per replica unknown ({rate_problem}): "
            f"propose {held} (the current count, at least 1 while there is a backlog; never a scale-down on an "
            "unknown rate)",
            values,
            proposed_replicas=held,
        )
    assert processed is not None
    seconds = queued / processed  # the estimated drain time at the current throughput
    usage_ratio = seconds / target
    try:
        calculation = objects.usage_ratio_replica_count(spec_replicas, usage_ratio, tolerances, pods)
    except MetricComputationError as err:  # pragma: no cover - ready > 0 means there are pods
        return ExtraResult(DRAIN_TIME, name, f"drain time: {err.message}", values, error=err.message)
    per_replica = processed / ready
    if calculation.within_tolerance:
        how = f"within tolerance of the target ({_number(usage_ratio)} of it): keep {calculation.replicas}"
    elif spec_replicas != 0 and calculation.replicas == math.ceil(queued / (per_replica * target)):
        how = f"ceil({_number(queued)} / ({_number(per_replica)}/s x {target} s)) = {calculation.replicas}"
    else:  # from zero replicas, or at the int32 cap: the calculator's own words
        how = calculation.note
    return ExtraResult(
        DRAIN_TIME,
        name,
        f"drain time: backlog {_number(queued)}, processing {_number(processed)}/s by {ready} ready pods "
        f"({_number(per_replica)}/s per replica), drained in {_number(seconds)} s against a target of {target} s: "
        f"{how}",
        values,
        seconds,
        proposed_replicas=calculation.replicas,
        calculation=calculation,
    )


def formula_proposal(
    rule: FormulaMetric,
    readings: Sequence[tuple[str, MetricInput]],
    *,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
    now: datetime,
) -> ExtraResult:
    """The formula's proposal: its value as an External metric against the formula's target."""
    name = f"formula {rule.formula.text}"
    values: list[tuple[str, float | None]] = []
    failed: list[str] = []
    for input_name, reading in readings:
        try:
            values.append((input_name, input_value(reading)))
        except MetricComputationError as err:
            values.append((input_name, None))
            failed.append(f"input {input_name!r} could not be read: {err.message}")
    shown = ", ".join(f"{n}={'failed' if v is None else _number(v)}" for n, v in values)
    if failed:
        message = "; ".join(failed)
        return ExtraResult(
            FORMULA, name, f"{name} ({shown}): {message}", tuple(values), error=f"unable to compute {name}: {message}"
        )
    known = {n: v for n, v in values if v is not None}
    try:
        result = evaluate(rule.formula, known)
    except FormulaEvaluationError as err:
        return ExtraResult(
            FORMULA,
            name,
            f"{name} ({shown}): no value: {err.message}",
            tuple(values),
            error=f"unable to compute {name}: {err.message}",
        )
    milli = round(result * 1000)
    if not MIN_INT64 <= milli <= MAX_INT64:
        message = f"the value {_number(result)} is out of range"
        return ExtraResult(
            FORMULA,
            name,
            f"{name} ({shown}): {message}",
            tuple(values),
            result,
            error=f"unable to compute {name}: {message}",
        )
    reading = ExternalReading(values=(milli,), timestamp=now)
    target = rule.target
    try:
        if target.type == MetricTargetType.AVERAGE_VALUE and target.average_value is not None:
            calculation = objects.external_average_replicas(
                status_replicas=status_replicas,
                target_average=target.average_value,
                reading=reading,
                tolerances=tolerances,
            )
            versus = f"target average value {_number(target.average_value / 1000)} per replica"
        elif target.value is not None:
            calculation = objects.external_value_replicas(
                current_replicas=spec_replicas,
                target_usage=target.value,
                reading=reading,
                pods=pods,
                tolerances=tolerances,
            )
            versus = f"target value {_number(target.value / 1000)}"
        else:  # pragma: no cover - the spec layer requires the field of the target's type
            raise MetricComputationError(f"the formula's {target.type} target has no value")
    except MetricComputationError as err:
        return ExtraResult(
            FORMULA,
            name,
            f"{name} = {_number(result)} ({shown}): {err.message}",
            tuple(values),
            result,
            error=f"unable to compute {name}: {err.message}",
        )
    return ExtraResult(
        FORMULA,
        name,
        f"{name} = {_number(result)} ({shown}) against a {versus}: {calculation.note}, propose {calculation.replicas}",
        tuple(values),
        result,
        proposed_replicas=calculation.replicas,
        calculation=calculation,
    )


__all__ = [
    "DRAIN_TIME",
    "FORMULA",
    "DrainTime",
    "ExtraMetrics",
    "ExtraResult",
    "FormulaMetric",
    "Input",
    "drain_time_proposal",
    "formula_proposal",
    "input_value",
    "proposals",
]
