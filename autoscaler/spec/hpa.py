"""The autoscaler spec: autoscaling/v2 HorizontalPodAutoscalerSpec, strictly, plus the project's extensions.

YAML speaks the HPA's camelCase. Unknown keys are errors. `to_core` applies the API server's defaulting
(SetDefaults_HorizontalPodAutoscaler in pkg/apis/autoscaling/v2/defaults.go) and returns the core's
`AutoscalerSpec`: minReplicas 1, a CPU 80 % utilization metric when none is given, and every omitted field
of `behavior` from GenerateHPAScaleUpRules / GenerateHPAScaleDownRules.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from autoscaler.core import types as core
from autoscaler.core.formats import approximate_float, milli_value, quantity_text
from autoscaler.spec.fields import Quantity
from autoscaler.spec.prometheus import PrometheusBinding


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class CrossVersionObjectReference(_Model):
    kind: str = Field(min_length=1, description="Kind of the referent, e.g. Deployment.")
    name: str = Field(min_length=1, description="Name of the referent.")
    api_version: str = Field("", alias="apiVersion", description="API version of the referent, e.g. apps/v1.")


class LabelSelectorRequirement(_Model):
    key: str = Field(min_length=1, description="The label key the selector applies to.")
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"] = Field(description="The key's relation.")
    values: list[str] = Field(default_factory=list, description="Values for In and NotIn.")


class LabelSelector(_Model):
    match_labels: dict[str, str] | None = Field(None, alias="matchLabels", description="Exact label matches.")
    match_expressions: list[LabelSelectorRequirement] | None = Field(
        None, alias="matchExpressions", description="Set-based requirements."
    )


class MetricTarget(_Model):
    type: Literal["Utilization", "Value", "AverageValue"] = Field(description="What the target measures.")
    value: Quantity | None = Field(None, description="Target value of the metric (Value).")
    average_value: Quantity | None = Field(
        None, alias="averageValue", description="Target value of the metric averaged over the pods."
    )
    average_utilization: int | None = Field(
        None, alias="averageUtilization", description="Target utilization in percent of the pods' requests."
    )


class MetricIdentifier(_Model):
    name: str = Field(min_length=1, description="Name of the metric.")
    selector: LabelSelector | None = Field(None, description="Narrows the metric's series by label.")


class ResourceMetricSource(_Model):
    name: str = Field(min_length=1, description="Resource name: cpu or memory.")
    target: MetricTarget


class ContainerResourceMetricSource(_Model):
    name: str = Field(min_length=1, description="Resource name: cpu or memory.")
    container: str = Field(min_length=1, description="The container whose usage counts.")
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


_MEMBERS = {
    "Resource": "resource",
    "ContainerResource": "container_resource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
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

    @model_validator(mode="after")
    def _one_member(self) -> MetricSpec:
        wanted = _MEMBERS[self.type]
        if getattr(self, wanted) is None:
            alias = "containerResource" if wanted == "container_resource" else wanted
            raise ValueError(f"type {self.type} needs the field {alias!r}")
        for member in _MEMBERS.values():
            if member != wanted and getattr(self, member) is not None:
                raise ValueError(f"type {self.type} must not set {member!r}")
        return self


class ScalingPolicy(_Model):
    type: Literal["Pods", "Percent"] = Field(description="Pods: an absolute count; Percent: of current.")
    value: int = Field(gt=0, description="How many pods, or what percent, may change per period.")
    period_seconds: int = Field(alias="periodSeconds", gt=0, le=1800, description="The window the policy holds over.")


class ScalingRules(_Model):
    stabilization_window_seconds: int | None = Field(
        None,
        alias="stabilizationWindowSeconds",
        ge=0,
        le=3600,
        description="Seconds of past recommendations.",
    )
    select_policy: Literal["Max", "Min", "Disabled"] | None = Field(
        None,
        alias="selectPolicy",
        description="Which policy wins: the largest change, the smallest, or none.",
    )
    policies: list[ScalingPolicy] | None = Field(None, description="Rate limits on this direction.")
    tolerance: Quantity | None = Field(
        None, description="Usage-ratio tolerance for this direction (a quantity, e.g. '0.05')."
    )


class Behavior(_Model):
    scale_up: ScalingRules | None = Field(None, alias="scaleUp")
    scale_down: ScalingRules | None = Field(None, alias="scaleDown")


class AutoscalerSpec(_Model):
    """autoscaling/v2 HorizontalPodAutoscalerSpec and the project's extensions."""

    scale_target_ref: CrossVersionObjectReference = Field(alias="scaleTargetRef")
    min_replicas: int | None = Field(None, alias="minReplicas", ge=0, description="Lower bound (default 1).")
    max_replicas: int = Field(alias="maxReplicas", ge=1, description="Upper bound.")
    metrics: list[MetricSpec] | None = Field(None, description="Default: CPU at 80 % utilization.")
    behavior: Behavior | None = Field(None, description="Scaling rules; absent selects the legacy path.")

    @model_validator(mode="after")
    def _min_le_max(self) -> AutoscalerSpec:
        if self.min_replicas is not None and self.min_replicas > self.max_replicas:
            raise ValueError(
                f"minReplicas ({self.min_replicas}) must be less than or equal to maxReplicas ({self.max_replicas})"
            )
        return self


# ---------------------------------------------------------------------------------------------------
# Into the core's types, with the API server's defaults
# ---------------------------------------------------------------------------------------------------


def _selector(model: LabelSelector | None) -> core.LabelSelector | None:
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
    return core.ObjectReference(kind=model.kind, name=model.name, api_version=model.api_version)


def metric_to_core(model: MetricSpec) -> core.MetricSpec:
    kind = core.MetricSourceType(model.type)
    if model.resource is not None:
        return core.MetricSpec(kind, _target(model.resource.target), resource_name=model.resource.name)
    if model.container_resource is not None:
        src = model.container_resource
        return core.MetricSpec(kind, _target(src.target), resource_name=src.name, container=src.container)
    if model.pods is not None:
        return core.MetricSpec(
            kind,
            _target(model.pods.target),
            metric_name=model.pods.metric.name,
            metric_selector=_selector(model.pods.metric.selector),
        )
    if model.object is not None:
        return core.MetricSpec(
            kind,
            _target(model.object.target),
            metric_name=model.object.metric.name,
            metric_selector=_selector(model.object.metric.selector),
            described_object=_ref(model.object.described_object),
        )
    assert model.external is not None
    return core.MetricSpec(
        kind,
        _target(model.external.target),
        metric_name=model.external.metric.name,
        metric_selector=_selector(model.external.metric.selector),
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
    metrics = tuple(metric_to_core(m) for m in model.metrics) if model.metrics else (DEFAULT_METRIC,)
    return core.AutoscalerSpec(
        max_replicas=model.max_replicas,
        metrics=metrics,
        min_replicas=model.min_replicas if model.min_replicas is not None else 1,
        behavior=behavior,
        scale_target_ref=_ref(model.scale_target_ref),
    )
