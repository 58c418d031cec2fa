"""The autoscaler spec: autoscaling/v2 HorizontalPodAutoscalerSpec, strictly, plus the project's extensions.

YAML speaks the HPA's camelCase. Unknown keys are errors, and so is a value of the wrong type ("2" or true
where an integer belongs). The models check what one field alone can say (types, enums, int32 bounds,
positive targets, names, the label rules of metric selectors); the API server's rules that span fields or
depend on the object's history and the feature gates live in autoscaler/spec/validation.py, whose
`load_spec` runs both and reports every problem at once. `parse_spec` tells the two kinds of field problem
apart, as the API server does: a value that does not decode (the wrong JSON type, an integer beyond int32,
an unknown field, a string that is not a quantity) ends the reading there; a value that decodes but fails
its field's checks is set aside (SET_ASIDE), so the rules across fields still run on the rest. `to_core`
applies the API server's defaulting (SetDefaults_HorizontalPodAutoscaler in
pkg/apis/autoscaling/v2/defaults.go) and returns the core's `AutoscalerSpec`: minReplicas 1, a CPU 80 %
utilization metric when none is given, and every omitted field of `behavior` from GenerateHPAScaleUpRules /
GenerateHPAScaleDownRules. The field reference is docs/spec.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from sys import intern
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from autoscaler.core import types as core
from autoscaler.core.formats import approximate_float, milli_value, quantity_text
from autoscaler.core.labels import SelectorSyntaxError, selector_from_object
from autoscaler.spec.errors import Problem, pydantic_problems
from autoscaler.spec.fields import (
    INT32_MAX,
    QUANTITY_PARSING,
    ContainerName,
    ContainerResourceName,
    NonNegativeInt32,
    NonNegativeQuantity,
    PathSegmentName,
    PositiveInt32,
    PositiveQuantity,
)
from autoscaler.spec.predictive import PredictiveModel
from autoscaler.spec.prometheus import PrometheusBinding
from autoscaler.spec.queue import DrainTimeSpec, FormulaSpec, extra_metrics_to_core
from autoscaler.spec.shadow import DEFAULT_MODE, Mode, ShadowSpec
from autoscaler.spec.zero import FallbackModel, ScaleToZeroModel, fallback_to_core, scale_to_zero_to_core

# The CRD bounds the strings and lists its CEL rules read, so the API server's cost estimate of those rules
# stays within its budget; the spec layer holds every spec to the same bounds (docs/spec.md).
MAX_KIND_LENGTH = 63  # a kind is a DNS-1035 label, as a CRD's names.kind must be
MAX_API_VERSION_LENGTH = 317  # group (a DNS-1123 subdomain, 253) "/" version (a DNS-1035 label, 63)
MAX_METRICS = 32
MAX_POLICY_PERIOD_SECONDS = 1800  # MaxPeriodSeconds
MAX_STABILIZATION_WINDOW_SECONDS = 3600  # MaxStabilizationWindowSeconds
MAX_SYNC_PERIOD_SECONDS = 3600  # a spec's own sync period: an hour at most, as its windows


class _SetAside:
    """The value of a field that failed its own checks, in a spec read partially (`parse_spec`)."""

    def __repr__(self) -> str:
        return "<set aside>"


SET_ASIDE = _SetAside()
_PARTIAL = "partial"  # the validation context's key for reading a spec partially


def known(value: object) -> bool:
    """Whether a field of a partially read spec holds its value (not SET_ASIDE: it had a problem of its own)."""
    return value is not SET_ASIDE


def _partial(info: ValidationInfo) -> bool:
    return isinstance(info.context, dict) and info.context.get(_PARTIAL) is True


class _Model(BaseModel):
    """The base of every spec model: strict, and read partially when the rules across fields need the rest."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)

    # Read partially, a spec keeps every field that passes its checks and sets aside (SET_ASIDE) every field
    # that does not, a missing required one included, so the rules across fields can still run on the rest.
    @model_validator(mode="before")
    @classmethod
    def _set_aside_missing(cls, data: Any, info: ValidationInfo) -> Any:
        if not _partial(info) or not isinstance(data, dict):
            return data
        missing = {
            field.alias or name: SET_ASIDE
            for name, field in cls.model_fields.items()
            if field.is_required() and (field.alias or name) not in data and name not in data
        }
        return {**data, **missing}

    @field_validator("*", mode="wrap")
    @classmethod
    def _set_aside_invalid(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        if not _partial(info):
            return handler(value)
        if value is SET_ASIDE:
            return value
        try:
            return handler(value)
        except ValidationError:
            return SET_ASIDE


SpecModel = _Model  # the base for the extension modules' models (autoscaler/spec/spare.py, ...)


class CrossVersionObjectReference(_Model):
    kind: PathSegmentName = Field(max_length=MAX_KIND_LENGTH, description="Kind of the referent, e.g. Deployment.")
    name: PathSegmentName = Field(description="Name of the referent.")
    api_version: str = Field(
        "",
        alias="apiVersion",
        max_length=MAX_API_VERSION_LENGTH,
        description="API version of the referent, e.g. apps/v1 (group/version).",
    )


# A metric's label selector is held to the rules of metav1.LabelSelectorAsSelector, which the HPA applies to
# it on every reconcile (a selector it refuses fails the metric, FailedGetPodsMetric and the like). The
# rules are the core's (autoscaler/core/labels.py `selector_from_object`); each check below gives it the
# smallest selector that holds the one part it checks, so each problem has its field path.
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _selector_problem(selector: dict[str, Any]) -> str | None:
    """What the core's label-selector rules refuse in `selector`, or None."""
    try:
        selector_from_object(selector)
    except SelectorSyntaxError as err:
        return str(err)
    return None


class LabelSelectorRequirement(_Model):
    key: str = Field(min_length=1, description="The label key the selector applies to.")
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"] = Field(description="The key's relation.")
    values: list[str] = Field(
        default_factory=list, validate_default=True, description="Values for In and NotIn; none for the others."
    )

    @field_validator("key")
    @classmethod
    def _label_key(cls, key: str) -> str:
        """A label key: a qualified name with an optional DNS-subdomain prefix."""
        problem = _selector_problem({"matchExpressions": [{"key": key, "operator": "Exists"}]})
        if problem is not None:
            raise ValueError(problem)
        return key

    @field_validator("values")
    @classmethod
    def _label_values(cls, values: list[str], info: ValidationInfo) -> list[str]:
        """In and NotIn need values, Exists and DoesNotExist take none, and each value is a label value."""
        operator = info.data.get("operator")
        if operator not in _OPERATORS:  # the operator has its own problem: check the values alone
            operator = "In" if values else None
        if operator is None:
            return values
        problem = _selector_problem({"matchExpressions": [{"key": "k", "operator": operator, "values": values}]})
        if problem is not None:
            raise ValueError(problem.removeprefix("matchExpressions[0].values: "))
        return values


class LabelSelector(_Model):
    match_labels: dict[str, str] | None = Field(None, alias="matchLabels", description="Exact label matches.")
    match_expressions: list[LabelSelectorRequirement] | None = Field(
        None, alias="matchExpressions", description="Set-based requirements."
    )

    @field_validator("match_labels")
    @classmethod
    def _labels(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        """Each key a label key and each value a label value (metav1's ValidateLabels)."""
        problems = [
            problem
            for key, value in (labels or {}).items()
            for part in ({key: ""}, {"k": value})
            if (problem := _selector_problem({"matchLabels": part})) is not None
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return labels


class MetricTarget(_Model):
    type: Literal["Utilization", "Value", "AverageValue"] = Field(description="What the target measures.")
    value: PositiveQuantity | None = Field(None, description="Target value of the metric (Value).")
    average_value: PositiveQuantity | None = Field(
        None, alias="averageValue", description="Target value of the metric averaged over the pods (AverageValue)."
    )
    average_utilization: PositiveInt32 | None = Field(
        None,
        alias="averageUtilization",
        description="Target utilization in percent of the pods' requests (Utilization).",
    )


class MetricIdentifier(_Model):
    name: PathSegmentName = Field(description="Name of the metric.")
    selector: LabelSelector | None = Field(None, description="Narrows the metric's series by label.")


class ResourceMetricSource(_Model):
    name: str = Field(min_length=1, description="Resource name: cpu or memory.")
    target: MetricTarget


class ContainerResourceMetricSource(_Model):
    name: ContainerResourceName = Field(description="Resource name: cpu or memory.")
    container: ContainerName = Field(description="The container whose usage counts.")
    target: MetricTarget


class PodsMetricSource(_Model):
    metric: MetricIdentifier
    target: MetricTarget


class ObjectMetricSource(_Model):
    described_object: CrossVersionObjectReference = Field(alias="describedObject")
    metric: MetricIdentifier
    target: MetricTarget


class ExternalMetricSource(_Model):
    metric: MetricIdentifier
    target: MetricTarget


MetricSource = (
    ResourceMetricSource | ContainerResourceMetricSource | PodsMetricSource | ObjectMetricSource | ExternalMetricSource
)

# Each metric type, the member that describes it (its YAML name) and the target types it can use. The
# target types are the ones the HPA reads for that type: a Resource metric with a Value target is refused.
MEMBERS: dict[str, str] = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}
TARGET_TYPES: dict[str, tuple[str, ...]] = {
    "Resource": ("Utilization", "AverageValue"),
    "ContainerResource": ("Utilization", "AverageValue"),
    "Pods": ("AverageValue",),
    "Object": ("Value", "AverageValue"),
    "External": ("Value", "AverageValue"),
}


class MetricSpec(_Model):
    type: Literal["Resource", "ContainerResource", "Pods", "Object", "External"]
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = Field(None, alias="containerResource")
    pods: PodsMetricSource | None = None
    object: ObjectMetricSource | None = None
    external: ExternalMetricSource | None = None
    # How the metric maps to PromQL (autoscaler/spec/prometheus.py, docs/metrics.md). Its cross-references
    # to the daemon settings (server and template names) are checked where the settings are known.
    prometheus: PrometheusBinding | None = Field(None, description="The metric's Prometheus binding.")
    activation_threshold: NonNegativeQuantity | None = Field(
        None,
        alias="activationThreshold",
        description="Scale to zero (an extension): 0 -> 1 only above it; to 0 only at or below it (default 0).",
    )

    def member(self, name: str) -> MetricSource | None:
        """The member named as in YAML (`containerResource`), or None."""
        member: MetricSource | None = getattr(self, "container_resource" if name == "containerResource" else name)
        return member


class ScalingPolicy(_Model):
    type: Literal["Pods", "Percent"] = Field(description="Pods: an absolute count; Percent: of current.")
    value: PositiveInt32 = Field(description="How many pods, or what percent, may change per period.")
    period_seconds: int = Field(
        alias="periodSeconds", gt=0, le=MAX_POLICY_PERIOD_SECONDS, description="The window the policy holds over."
    )


class ScalingRules(_Model):
    stabilization_window_seconds: int | None = Field(
        None,
        alias="stabilizationWindowSeconds",
        ge=0,
        le=MAX_STABILIZATION_WINDOW_SECONDS,
        description="Seconds of past recommendations.",
    )
    select_policy: Literal["Max", "Min", "Disabled"] | None = Field(
        None,
        alias="selectPolicy",
        description="Which policy wins: the largest change, the smallest, or none.",
    )
    policies: list[ScalingPolicy] | None = Field(
        None, min_length=1, description="Rate limits on this direction; absent takes the default, [] is refused."
    )
    tolerance: NonNegativeQuantity | None = Field(
        None, description="Usage-ratio tolerance for this direction (a quantity, e.g. '0.05')."
    )


class Behavior(_Model):
    scale_up: ScalingRules | None = Field(None, alias="scaleUp")
    scale_down: ScalingRules | None = Field(None, alias="scaleDown")


class AutoscalerSpec(_Model):
    """autoscaling/v2 HorizontalPodAutoscalerSpec and the project's extensions."""

    scale_target_ref: CrossVersionObjectReference = Field(alias="scaleTargetRef")
    min_replicas: NonNegativeInt32 | None = Field(
        None, alias="minReplicas", description="Lower bound (default 1; 0 only with HPAScaleToZero)."
    )
    max_replicas: PositiveInt32 = Field(alias="maxReplicas", description="Upper bound.")
    metrics: list[MetricSpec] | None = Field(
        None, max_length=MAX_METRICS, description="Default: CPU at 80 % utilization."
    )
    behavior: Behavior | None = Field(None, description="Scaling rules; absent selects the legacy path.")
    missing_pods: Literal["Rebalance", "Hold"] = Field(
        "Rebalance",
        alias="missingPods",
        description=(
            "Pods without a sample on a scale-down (an extension): Rebalance, the HPA's rule, counts each at "
            "100 % of its request (or the target); Hold keeps the count until every pod reports."
        ),
    )
    # The daemon's extensions (docs/spec.md): read by the daemon from `Autoscaler.model`, not by the core.
    sync_period_seconds: int | None = Field(
        None,
        alias="syncPeriodSeconds",
        ge=1,
        le=MAX_SYNC_PERIOD_SECONDS,
        description="Seconds between two decisions of this autoscaler (an extension); default: the daemon's.",
    )
    dry_run: bool = Field(
        False,
        alias="dryRun",
        description="Decide, report and record, but never write the scale (an extension).",
    )
    # Shadow mode and its comparison (spec/shadow.py; docs/spec.md, "Shadow mode").
    mode: Mode = Field(
        DEFAULT_MODE,
        description=(
            "hpa (default): decide and write; shadow: dry-run and compare; predictive: forecast the need a "
            "start-up ahead (an extension)."
        ),
    )
    shadow: ShadowSpec | None = Field(None, description="The autoscaler a spec in shadow mode is compared with.")
    # Extra proposals beside the metrics (autoscaler/spec/queue.py, docs/spec.md "Drain time", "Formula").
    drain_time: DrainTimeSpec | None = Field(None, alias="drainTime", description="A queue's drain-time proposal.")
    formula: FormulaSpec | None = Field(None, description="A formula over named inputs, with its own target.")
    # Extensions beyond the HPA (spec/zero.py; docs/spec.md).
    scale_to_zero: ScaleToZeroModel | None = Field(
        None, alias="scaleToZero", description="With minReplicas 0: scale to and from zero (an extension)."
    )
    fallback: FallbackModel | None = Field(None, description="What a metric's repeated failure does (an extension).")
    # Extensions with their own modules (docs/spec.md): one field each.
    scale_down: ScaleDown | None = Field(None, alias="scaleDown", description="Before a scale-down (spec/spare.py).")
    rollout_aware: bool = Field(
        False, alias="rolloutAware", description="Surge pods of a rollout do not inflate the count (an extension)."
    )
    predictive: PredictiveModel | None = Field(
        None, description="mode: predictive's parameters (an extension); refused with another mode."
    )


# Pydantic's errors for a value of the wrong JSON type, an unknown field, and the spec layer's own for a
# string that is not a quantity: the API server refuses these while decoding the object, before validation.
_DECODE_ERRORS = frozenset(
    {
        "int_type", "int_parsing", "int_from_float", "float_type", "float_parsing", "string_type", "bool_type",
        "bool_parsing", "list_type", "dict_type", "model_type", "model_attributes_type", "extra_forbidden",
        QUANTITY_PARSING,
    }
)  # fmt: skip
_NUMBER_BOUNDS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})


def _undecodable(item: ErrorDetails) -> bool:
    """Whether a field's error means its value did not decode, rather than failed validation."""
    kind, value = item["type"], item.get("input")
    if kind == "literal_error":  # an enum's value that is not a string (a number, a list) does not decode
        return not isinstance(value, str)
    if kind in _NUMBER_BOUNDS:  # every integer of the spec is an int32: one beyond it does not decode
        return isinstance(value, int) and not isinstance(value, bool) and not -INT32_MAX - 1 <= value <= INT32_MAX
    return kind in _DECODE_ERRORS


@dataclass(frozen=True, slots=True)
class ParsedSpec:
    """A spec's fields as read: each field's own problems, and the spec to check the rules across fields on.

    `spec` is the whole model when `problems` is empty. When every value decoded but some failed their own
    checks (bounds, enums, names), it is the spec read partially: those fields hold SET_ASIDE (see `known`).
    When a value did not decode, it is None: as the API server, nothing is validated past decoding.
    """

    spec: AutoscalerSpec | None
    problems: list[Problem]


def parse_spec(data: Any, *, path: str = "spec") -> ParsedSpec:
    """The spec model and the problems of its fields (types, bounds, names), each with its path."""
    if not isinstance(data, dict):
        return ParsedSpec(None, [(path, f"must be an object, not {type(data).__name__}")])
    try:
        return ParsedSpec(AutoscalerSpec.model_validate(data), [])
    except ValidationError as err:
        problems = pydantic_problems(err, path)
        if any(_undecodable(item) for item in err.errors()):
            return ParsedSpec(None, problems)
    try:
        return ParsedSpec(AutoscalerSpec.model_validate(data, context={_PARTIAL: True}), problems)
    except ValidationError:  # a failure no field could be set aside for: report the fields' problems alone
        return ParsedSpec(None, problems)


# ---------------------------------------------------------------------------------------------------
# Into the core's types, with the API server's defaults
# ---------------------------------------------------------------------------------------------------


def selector_to_core(model: LabelSelector | None) -> core.LabelSelector | None:
    if model is None:
        return None
    return core.LabelSelector(
        match_labels=tuple(sorted((model.match_labels or {}).items())),
        match_expressions=tuple(
            core.LabelSelectorRequirement(r.key, r.operator, tuple(r.values)) for r in model.match_expressions or ()
        ),
    )


def _target(model: MetricTarget) -> core.MetricTarget:
    return core.MetricTarget(
        type=core.MetricTargetType(model.type),
        value=milli_value(model.value) if model.value is not None else None,
        average_value=milli_value(model.average_value) if model.average_value is not None else None,
        average_utilization=model.average_utilization,
    )


def _ref(model: CrossVersionObjectReference) -> core.ObjectReference:
    # Interned, as the names below: thousands of specs name the same kinds, versions, resources and metrics,
    # and a target's name is also its workload's and its cache key's (one string, not one per spec).
    return core.ObjectReference(kind=intern(model.kind), name=intern(model.name), api_version=intern(model.api_version))


def metric_to_core(model: MetricSpec) -> core.MetricSpec:
    """One metric of a validated spec (its type's member is set, and no other) in core values."""
    kind = core.MetricSourceType(model.type)
    if model.resource is not None:
        return core.MetricSpec(kind, _target(model.resource.target), resource_name=intern(model.resource.name))
    if model.container_resource is not None:
        src = model.container_resource
        return core.MetricSpec(
            kind, _target(src.target), resource_name=intern(src.name), container=intern(src.container)
        )
    if model.pods is not None:
        return core.MetricSpec(
            kind,
            _target(model.pods.target),
            metric_name=intern(model.pods.metric.name),
            metric_selector=selector_to_core(model.pods.metric.selector),
        )
    if model.object is not None:
        return core.MetricSpec(
            kind,
            _target(model.object.target),
            metric_name=intern(model.object.metric.name),
            metric_selector=selector_to_core(model.object.metric.selector),
            described_object=_ref(model.object.described_object),
        )
    assert model.external is not None
    return core.MetricSpec(
        kind,
        _target(model.external.target),
        metric_name=intern(model.external.metric.name),
        metric_selector=selector_to_core(model.external.metric.selector),
    )


DEFAULT_METRIC = core.MetricSpec(
    core.MetricSourceType.RESOURCE,
    core.MetricTarget(core.MetricTargetType.UTILIZATION, average_utilization=80),
    resource_name="cpu",
)

# GenerateHPAScaleUpRules / GenerateHPAScaleDownRules (pkg/apis/autoscaling/v2/defaults.go).
DEFAULT_SCALE_UP = core.ScalingRules(
    policies=(
        core.ScalingPolicy(core.ScalingPolicyType.PODS, 4, 15),
        core.ScalingPolicy(core.ScalingPolicyType.PERCENT, 100, 15),
    ),
    select_policy=core.SelectPolicy.MAX,
    stabilization_window_seconds=0,
)
DEFAULT_SCALE_DOWN = core.ScalingRules(
    policies=(core.ScalingPolicy(core.ScalingPolicyType.PERCENT, 100, 15),),
    select_policy=core.SelectPolicy.MAX,
    stabilization_window_seconds=None,  # the controller's --horizontal-pod-autoscaler-downscale-stabilization
)


# `mode: predictive` without behavior: the default rules, with no scale-down stabilization of the HPA's.
PREDICTIVE_BEHAVIOR = core.Behavior(
    scale_up=DEFAULT_SCALE_UP,
    scale_down=core.ScalingRules(
        policies=DEFAULT_SCALE_DOWN.policies, select_policy=core.SelectPolicy.MAX, stabilization_window_seconds=0
    ),
)


def _rules(model: ScalingRules | None, default: core.ScalingRules) -> core.ScalingRules:
    """copyHPAScalingRules: every field the user set replaces the default's."""
    if model is None:
        return default
    return core.ScalingRules(
        policies=(
            tuple(core.ScalingPolicy(core.ScalingPolicyType(p.type), p.value, p.period_seconds) for p in model.policies)
            if model.policies is not None
            else default.policies
        ),
        select_policy=core.SelectPolicy(model.select_policy) if model.select_policy else default.select_policy,
        stabilization_window_seconds=(
            model.stabilization_window_seconds
            if model.stabilization_window_seconds is not None
            else default.stabilization_window_seconds
        ),
        tolerance=approximate_float(quantity_text(model.tolerance)) if model.tolerance is not None else None,
    )


def to_core(model: AutoscalerSpec) -> core.AutoscalerSpec:
    behavior = None
    if model.behavior is not None:
        behavior = core.Behavior(
            scale_up=_rules(model.behavior.scale_up, DEFAULT_SCALE_UP),
            scale_down=_rules(model.behavior.scale_down, DEFAULT_SCALE_DOWN),
        )
    if model.mode == "predictive" and behavior is None:
        # The mode keeps its own scale-down window (of needs, not of forecasts): the HPA's would hold a forecast.
        behavior = PREDICTIVE_BEHAVIOR
    extra = extra_metrics_to_core(model.drain_time, model.formula)
    # No metrics default to CPU, unless a drain time or a formula proposes instead (docs/spec.md).
    metrics = tuple(metric_to_core(m) for m in model.metrics) if model.metrics else () if extra else (DEFAULT_METRIC,)
    return core.AutoscalerSpec(
        max_replicas=model.max_replicas,
        metrics=metrics,
        min_replicas=model.min_replicas if model.min_replicas is not None else 1,
        behavior=behavior,
        scale_target_ref=_ref(model.scale_target_ref),
        missing_pods=core.MissingPods(model.missing_pods),
        extra_metrics=extra,
        scale_to_zero=scale_to_zero_to_core(model),
        fallback=fallback_to_core(model.fallback),
        rollout_aware=model.rollout_aware,
        pod_deletion_cost=deletion_cost_to_core(model.scale_down),
        predictive=(model.predictive or PredictiveModel()).to_core() if model.mode == "predictive" else None,
    )


# The extension modules build on the models above; AutoscalerSpec's fields name their models.
from autoscaler.spec.spare import ScaleDown, deletion_cost_to_core  # noqa: E402

AutoscalerSpec.model_rebuild()
