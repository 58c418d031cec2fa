"""The API server's validation of an autoscaler spec, the rules that span fields or depend on options.

Held beside upstream pkg/apis/autoscaling/validation/validation.go (Kubernetes 1.36) function by function;
the rules one field can check alone (types, int32 bounds, positive targets, names) are in the models of
autoscaler/spec/hpa.py and autoscaler/spec/fields.py. `load_spec` runs both and reports every problem, as
the API server reports every field at once: the problems of single fields (an out-of-bounds value, an
unknown enum value, a bad name) together with those of the rules here, which then run on the spec with the
failing fields set aside and never read a set-aside field's value; only a value that does not decode stops
them. Each problem once, in the order of the spec's fields. One implementation for every path a spec comes
in by: decision snapshots, custom resources read from the cluster, spec files and `autoscaler check`. The
reference, with the few places where we are stricter than the API server and why, is docs/spec.md.

Which rules apply depends on the object's history, as upstream's validation options do
(validationOptionsForHorizontalPodAutoscaler in pkg/registry/autoscaling/horizontalpodautoscaler/
strategy.go): a new object (create) must have minReplicas >= 1 unless the HPAScaleToZero gate is on, and a
scaleTargetRef.apiVersion that names an API group; an update that keeps minReplicas 0, or keeps the
scaleTargetRef, is not held to those rules again. An object the API server already holds (a snapshot's
autoscaler, a custom resource read from the cluster, a spec file checked as the update of an existing
object) is validated as such an update: `validation_options(spec, old=spec, ...)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autoscaler.spec.errors import Problem, SpecError, in_field_order, join
from autoscaler.spec.hpa import (
    MEMBERS,
    TARGET_TYPES,
    AutoscalerSpec,
    CrossVersionObjectReference,
    MetricSpec,
    MetricTarget,
    known,
    parse_spec,
)
from autoscaler.spec.predictive import predictive_problems
from autoscaler.spec.shadow import shadow_problems
from autoscaler.spec.spare import deletion_cost_problems
from autoscaler.spec.zero import problems as zero_problems


@dataclass(frozen=True, slots=True)
class ReferenceOptions:
    """CrossVersionObjectReferenceValidationOptions: how a reference's apiVersion is checked."""

    allow_empty_api_group: bool
    allow_invalid_api_version: bool


@dataclass(frozen=True, slots=True)
class ValidationOptions:
    """HorizontalPodAutoscalerSpecValidationOptions."""

    min_replicas_lower_bound: int
    scale_target_ref: ReferenceOptions
    object_metrics: ReferenceOptions


def validation_options(new: AutoscalerSpec, old: AutoscalerSpec | None, *, scale_to_zero: bool) -> ValidationOptions:
    """validationOptionsForHorizontalPodAutoscaler: `old` is None on create, the stored spec on update."""
    # A spec's scaleToZero opts in to minReplicas 0 whatever the gate (an extension, spec/zero.py).
    opted_in = known(new.scale_to_zero) and new.scale_to_zero is not None
    lower_bound = 0 if scale_to_zero or opted_in or (old is not None and old.min_replicas == 0) else 1
    ref = new.scale_target_ref
    identity = _identity(ref)
    same_ref = old is not None and identity is not None and _identity(old.scale_target_ref) == identity
    scale_target_ref = ReferenceOptions(
        # The only scalable kind of the core API group has an apiVersion without a group ("v1").
        allow_empty_api_group=not same_ref and known(ref) and ref.kind == "ReplicationController",
        # Updates that keep the kind and apiVersion skip the apiVersion check (ratcheting).
        allow_invalid_api_version=same_ref,
    )
    old_metrics_invalid = old is not None and any(
        metric.type == "Object"
        and metric.object is not None
        and _identity(metric.object.described_object) is not None
        and api_version_error(metric.object.described_object, ReferenceOptions(True, False)) is not None
        for metric in _metrics(old)
    )
    object_metrics = ReferenceOptions(allow_empty_api_group=True, allow_invalid_api_version=old_metrics_invalid)
    return ValidationOptions(lower_bound, scale_target_ref, object_metrics)


def _identity(ref: CrossVersionObjectReference) -> tuple[str, str] | None:
    """A reference's apiVersion and kind, or None when either (or the reference) is set aside."""
    if not known(ref) or not known(ref.api_version) or not known(ref.kind):
        return None
    return ref.api_version, ref.kind


def _metrics(spec: AutoscalerSpec) -> list[MetricSpec]:
    """The spec's metrics as given (none when the list itself is set aside, as when it is too long)."""
    return list(spec.metrics or ()) if known(spec.metrics) else []


def parse_group_version(text: str) -> tuple[str, str]:
    """schema.ParseGroupVersion: "apps/v1" -> ("apps", "v1"), "v1" -> ("", "v1"); raises ValueError."""
    if text in ("", "/"):
        return "", ""
    if text.count("/") == 0:
        return "", text
    if text.count("/") == 1:
        group, _, version = text.partition("/")
        return group, version
    raise ValueError(f"unexpected GroupVersion string: {text}")


def api_version_error(ref: CrossVersionObjectReference, options: ReferenceOptions) -> str | None:
    """ValidateAPIVersion: what is wrong with the reference's apiVersion, or None."""
    if options.allow_invalid_api_version:
        return None
    try:
        group, _ = parse_group_version(ref.api_version)
    except ValueError as err:
        return str(err)
    if not options.allow_empty_api_group and not group:
        return f"apiVersion must specify API group (e.g. apps/v1), not {ref.api_version!r}"
    return None


def validate_spec(spec: AutoscalerSpec, *, options: ValidationOptions, path: str = "spec") -> list[Problem]:
    """validateHorizontalPodAutoscalerSpec, for the rules the field types cannot check alone.

    On a spec read partially (`hpa.parse_spec`), a rule that reads the value of a field set aside is not
    checked: that field has its problem already, and its value is not known. A field set aside still counts
    as given (the rules "required for a target of type ..." and "may not set both" read only that).
    """
    problems: list[Problem] = []
    minimum, maximum = spec.min_replicas, spec.max_replicas
    if known(minimum) and minimum is not None and minimum < options.min_replicas_lower_bound:
        problems.append(
            (
                join(path, "minReplicas"),
                f"must be greater than or equal to {options.min_replicas_lower_bound} "
                "(0 needs the HPAScaleToZero feature gate on a new object)",
            )
        )
    if known(minimum) and known(maximum) and minimum is not None and maximum < minimum:
        problems.append(
            (join(path, "maxReplicas"), f"must be greater than or equal to `minReplicas` ({maximum} < {minimum})")
        )
    if _identity(spec.scale_target_ref) is not None:
        error = api_version_error(spec.scale_target_ref, options.scale_target_ref)
        if error is not None:
            problems.append((join(path, "scaleTargetRef.apiVersion"), error))
    problems += _validate_metrics(spec, path=join(path, "metrics"), options=options)
    problems += shadow_problems(spec, path=path)
    problems += predictive_problems(spec, path=path)
    problems += deletion_cost_problems(spec, path=path)  # extensions' rules across fields
    return problems


def _validate_metrics(spec: AutoscalerSpec, *, path: str, options: ValidationOptions) -> list[Problem]:
    """validateMetrics; the metrics are those after defaulting (no metrics means CPU at 80 %)."""
    problems: list[Problem] = []
    metrics = _metrics(spec)
    for i, metric in enumerate(metrics):
        problems += _validate_metric(metric, path=f"{path}[{i}]", options=options)
    types = {metric.type for metric in metrics}
    every_type_known = known(spec.metrics) and all(known(kind) for kind in types)
    # A drain time or a formula reads External-like inputs: it counts as an External metric here.
    extra = spec.drain_time is not None or spec.formula is not None
    if spec.min_replicas == 0 and every_type_known and not types & {"Object", "External"} and not extra:
        defaulted = "" if spec.metrics else " (with no metrics the spec defaults to CPU utilization)"
        problems.append(
            (
                path,
                "must specify at least one Object or External metric to support scaling to zero replicas" + defaulted,
            )
        )
    return problems


def _validate_members(metric: MetricSpec, *, path: str) -> list[Problem]:
    """validateMetricSpec: the member of the metric's type is set, and no other."""
    problems: list[Problem] = []
    if not known(metric.type):
        return problems
    wanted = MEMBERS[metric.type]
    for member in MEMBERS.values():
        if member != wanted and metric.member(member) is not None:
            problems.append((join(path, member), f"must populate the given metric source only (type {metric.type})"))
    if metric.member(wanted) is None:
        problems.append((join(path, wanted), f"must populate information for the given metric source ({metric.type})"))
    return problems


def _validate_metric(metric: MetricSpec, *, path: str, options: ValidationOptions) -> list[Problem]:
    """validateMetricSpec and the validate*Source function of its type."""
    problems = _validate_members(metric, path=path)
    if not known(metric.type):
        return problems
    wanted = MEMBERS[metric.type]
    source = metric.member(wanted)
    if source is None:
        return problems
    if metric.object is not None and _identity(metric.object.described_object) is not None:
        error = api_version_error(metric.object.described_object, options.object_metrics)
        if error is not None:
            problems.append((join(path, f"{wanted}.describedObject.apiVersion"), error))
    if known(source.target):
        problems += _validate_target(source.target, metric_type=metric.type, path=join(path, f"{wanted}.target"))
    return problems


_TARGET_FIELDS = {"Utilization": "averageUtilization", "Value": "value", "AverageValue": "averageValue"}


def _a(words: str) -> str:
    """The words with their indefinite article: "an AverageValue", "an Object", "a Utilization" (a "you")."""
    return f"{'an' if words[:1] in ('A', 'E', 'I', 'O') else 'a'} {words}"


def _validate_target(target: MetricTarget, *, metric_type: str, path: str) -> list[Problem]:
    """The target rules of validateResourceSource, validatePodsSource, validateObjectSource, ... by type."""
    problems: list[Problem] = []
    allowed = TARGET_TYPES[metric_type]
    if known(target.type) and target.type not in allowed:
        problems.append(
            (
                join(path, "type"),
                f"{_a(metric_type)} metric takes {_a(' or '.join(allowed))} target, not {target.type}",
            )
        )
    elif known(target.type):
        field = _TARGET_FIELDS[target.type]
        if _target_field(target, field) is None:
            problems.append((join(path, field), f"required for a target of type {target.type}"))
    both = target.average_utilization is not None and target.average_value is not None
    if metric_type in ("Resource", "ContainerResource") and both:
        problems.append((join(path, "averageValue"), "may not set both a target raw value and a target utilization"))
    if metric_type == "External" and target.value is not None and target.average_value is not None:
        problems.append((join(path, "value"), "may not set both a target value for metric and a per-pod target"))
    return problems


def _target_field(target: MetricTarget, field: str) -> Any:
    return {
        "averageUtilization": target.average_utilization,
        "value": target.value,
        "averageValue": target.average_value,
    }[field]


def load_spec(
    data: Any,
    *,
    scale_to_zero: bool,
    stored: bool = True,
    api_rules: bool = True,
    path: str = "spec",
    source: str = "",
) -> AutoscalerSpec:
    """Parse and validate one spec, raising SpecError with every problem, in the order of the spec's fields.

    `stored` validates the spec as an object the API server already holds (as an update that changes
    nothing); `stored=False` as a new object (create), where minReplicas 0 needs the HPAScaleToZero gate.
    `api_rules=False` leaves out `validate_spec` but for what reading the spec needs (each metric has the
    member of its type): only for transcriptions of upstream's controller tests, which build objects without
    the API server (horizontal_test.go's TestZeroMinReplicasDesiredZero has minReplicas 0 and only CPU).
    """
    parsed = parse_spec(data, path=path)
    spec = parsed.spec
    rules: list[Problem] = []
    if spec is not None and api_rules:
        options = validation_options(spec, spec if stored else None, scale_to_zero=scale_to_zero)
        rules = validate_spec(spec, options=options, path=path) + zero_problems(spec, path=path)
    elif spec is not None:
        rules = [
            problem
            for i, metric in enumerate(_metrics(spec))
            for problem in _validate_members(metric, path=join(path, f"metrics[{i}]"))
        ]
    problems = in_field_order(parsed.problems + rules, model=AutoscalerSpec, prefix=path)
    if problems or spec is None:
        raise SpecError(problems, source=source)
    return spec
