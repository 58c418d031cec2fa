"""Decision snapshots: everything one decision needs, as JSON, read into core values (docs/snapshot.md).

The autoscaler's own fields (spec, settings, behaviour state) are strict: unknown keys are errors. The
Kubernetes objects inside (pods, metrics API items, the HPA's metadata and status) are read leniently,
as Kubernetes clients do: fields the decision does not read are ignored, so real API output can be pasted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from autoscaler.core import types as core
from autoscaler.core.formats import milli_value, parse_time
from autoscaler.core.state import behavior_state_from_json
from autoscaler.spec.errors import SpecError
from autoscaler.spec.fields import Quantity, Time
from autoscaler.spec.hpa import AutoscalerSpec, to_core
from autoscaler.spec.readings import reading_to_core


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class SettingsModel(_Strict):
    """Controller-wide settings; each default is kube-controller-manager's."""

    tolerance: float = Field(0.1, ge=0, description="--horizontal-pod-autoscaler-tolerance")
    cpu_initialization_period_seconds: float = Field(
        300.0, alias="cpuInitializationPeriodSeconds", ge=0,
        description="--horizontal-pod-autoscaler-cpu-initialization-period",
    )  # fmt: skip
    initial_readiness_delay_seconds: float = Field(
        30.0, alias="initialReadinessDelaySeconds", ge=0,
        description="--horizontal-pod-autoscaler-initial-readiness-delay",
    )  # fmt: skip
    downscale_stabilization_window_seconds: float = Field(
        300.0, alias="downscaleStabilizationWindowSeconds", ge=0,
        description="--horizontal-pod-autoscaler-downscale-stabilization",
    )  # fmt: skip
    configurable_tolerance: bool = Field(
        True, alias="configurableTolerance", description="The HPAConfigurableTolerance feature gate."
    )
    scale_up_limit_factor: float = Field(
        2.0, alias="scaleUpLimitFactor", gt=0, description="Legacy path: scale-up cap factor (horizontal.go)."
    )
    scale_up_limit_minimum: float = Field(
        4.0, alias="scaleUpLimitMinimum", ge=0, description="Legacy path: scale-up cap minimum (horizontal.go)."
    )

    def to_core(self) -> core.Settings:
        return core.Settings(
            tolerance=self.tolerance,
            cpu_initialization_period_seconds=self.cpu_initialization_period_seconds,
            initial_readiness_delay_seconds=self.initial_readiness_delay_seconds,
            downscale_stabilization_window_seconds=self.downscale_stabilization_window_seconds,
            configurable_tolerance=self.configurable_tolerance,
            scale_up_limit_factor=self.scale_up_limit_factor,
            scale_up_limit_minimum=self.scale_up_limit_minimum,
        )


# --- Kubernetes objects, leniently -------------------------------------------------------------------


class ObjectMeta(_Lenient):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    deletion_timestamp: Time | None = Field(None, alias="deletionTimestamp")


class Resources(_Lenient):
    requests: dict[str, Quantity] = Field(default_factory=dict)


class ContainerModel(_Lenient):
    name: str = ""
    resources: Resources = Field(default_factory=Resources)
    restart_policy: str | None = Field(None, alias="restartPolicy")


class PodSpecModel(_Lenient):
    containers: list[ContainerModel] = Field(default_factory=list)
    init_containers: list[ContainerModel] = Field(default_factory=list, alias="initContainers")
    resources: Resources | None = None


class PodCondition(_Lenient):
    type: str
    status: str = ""
    last_transition_time: Time | None = Field(None, alias="lastTransitionTime")


class PodStatusModel(_Lenient):
    phase: str = ""
    conditions: list[PodCondition] = Field(default_factory=list)
    start_time: Time | None = Field(None, alias="startTime")


class PodModel(_Lenient):
    metadata: ObjectMeta
    spec: PodSpecModel = Field(default_factory=PodSpecModel)
    status: PodStatusModel = Field(default_factory=PodStatusModel)


def _container(model: ContainerModel) -> core.Container:
    return core.Container(
        name=model.name,
        requests={k: milli_value(v) for k, v in model.resources.requests.items()},
        restart_policy_always=model.restart_policy == "Always",
    )


def pod_to_core(model: PodModel) -> core.Pod:
    ready = next((c for c in model.status.conditions if c.type == "Ready"), None)
    return core.Pod(
        name=model.metadata.name,
        namespace=model.metadata.namespace,
        phase=model.status.phase,
        labels=dict(model.metadata.labels),
        ready=ready.status if ready else None,
        ready_transition=parse_time(ready.last_transition_time) if ready and ready.last_transition_time else None,
        start_time=parse_time(model.status.start_time) if model.status.start_time else None,
        deleted=model.metadata.deletion_timestamp is not None,
        containers=tuple(_container(c) for c in model.spec.containers),
        init_containers=tuple(_container(c) for c in model.spec.init_containers),
        pod_requests=(
            {k: milli_value(v) for k, v in model.spec.resources.requests.items()} if model.spec.resources else {}
        ),
    )


class ScaleSpec(_Lenient):
    replicas: int = 0


class ScaleStatus(_Lenient):
    replicas: int = 0
    selector: str = ""


class ScaleModel(_Lenient):
    spec: ScaleSpec = Field(default_factory=ScaleSpec)
    status: ScaleStatus = Field(default_factory=ScaleStatus)
    error: str | None = None


class HPAConditionModel(_Lenient):
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: Time | None = Field(None, alias="lastTransitionTime")


class HPAStatusModel(_Lenient):
    conditions: list[HPAConditionModel] = Field(default_factory=list)
    last_scale_time: Time | None = Field(None, alias="lastScaleTime")
    desired_replicas: int | None = Field(None, alias="desiredReplicas")


class AutoscalerObject(_Lenient):
    metadata: ObjectMeta = Field(default_factory=lambda: ObjectMeta())
    spec: AutoscalerSpec
    status: HPAStatusModel = Field(default_factory=lambda: HPAStatusModel())


# --- Behaviour state, strictly ------------------------------------------------------------------------


class RecommendationModel(_Strict):
    replicas: int
    timestamp: Time


class ScaleEventModel(_Strict):
    replica_change: int = Field(alias="replicaChange")
    timestamp: Time
    outdated: bool = False


class BehaviorStateModel(_Strict):
    recommendations: list[RecommendationModel] | None = Field(
        None, description="Past proposals; null (or absent) means the target was never reconciled."
    )
    scale_up_events: list[ScaleEventModel] = Field(default_factory=list, alias="scaleUpEvents")
    scale_down_events: list[ScaleEventModel] = Field(default_factory=list, alias="scaleDownEvents")

    def to_core(self) -> core.BehaviorState:
        return behavior_state_from_json(self.model_dump(by_alias=True))


class SnapshotModel(_Strict):
    api_version: str | None = Field(None, alias="apiVersion")
    kind: str | None = None
    now: Time = Field(description="The decision's clock reading (RFC 3339).")
    settings: SettingsModel = Field(default_factory=lambda: SettingsModel())
    autoscaler: AutoscalerObject
    scale: ScaleModel
    pods: list[PodModel] = Field(default_factory=list)
    metrics: list[dict[str, Any]] = Field(default_factory=list)
    behavior_state: BehaviorStateModel = Field(default_factory=lambda: BehaviorStateModel(), alias="behaviorState")
    comment: str | None = Field(None, description="Free text; ignored.")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot in core values, ready for `core.decision.decide`."""

    now: datetime
    settings: core.Settings
    name: str
    namespace: str
    spec: core.AutoscalerSpec
    scale: core.Scale | core.ScaleFailure
    pods: tuple[core.Pod, ...]
    metrics: tuple[core.MetricInput, ...]
    state: core.BehaviorState
    conditions: tuple[core.Condition, ...]
    last_scale_time: datetime | None
    previous_desired_replicas: int | None


def error_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not part.startswith(("function-", "union[", "list[", "dict[")) and "[" not in part:
            path += f".{part}" if path else part
    return path


def _errors(err: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    problems = []
    for item in err.errors():
        path = error_path(tuple(item["loc"]))
        if prefix:
            path = f"{prefix}.{path}" if path and not path.startswith("[") else prefix + path
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field (check its spelling and nesting)"
        elif item["type"] == "missing":
            message = "required field is missing"
        problems.append((path, message))
    return problems


def load_snapshot(data: Any, *, source: str = "") -> Snapshot:
    """Validate a parsed JSON snapshot and turn it into core values; raises SpecError naming fields."""
    if not isinstance(data, dict):
        raise SpecError([("", f"a snapshot is a JSON object, not {type(data).__name__}")], source=source)
    try:
        model = SnapshotModel.model_validate(data)
    except ValidationError as err:
        raise SpecError(_errors(err), source=source) from None
    problems: list[tuple[str, str]] = []
    now = _time(model.now, "now", problems)
    if now is None:
        raise SpecError(problems, source=source)
    spec = to_core(model.autoscaler.spec)

    metrics: list[core.MetricInput] = []
    if len(model.metrics) != len(spec.metrics):
        defaulted = (
            " (the spec has no metrics, so it defaults to CPU at 80 %)" if not model.autoscaler.spec.metrics else ""
        )
        problems.append(
            (
                "metrics",
                f"has {len(model.metrics)} entries but the spec has {len(spec.metrics)} metrics{defaulted}",
            )
        )
    else:
        for i, (metric_spec, entry) in enumerate(zip(spec.metrics, model.metrics, strict=True)):
            try:
                metrics.append(reading_to_core(metric_spec, entry, now=now))
            except ValidationError as err:
                problems.extend(_errors(err, f"metrics[{i}]"))
            except ValueError as err:
                problems.append((f"metrics[{i}]", str(err)))
    pods: list[core.Pod] = []
    for i, pod in enumerate(model.pods):
        try:
            pods.append(pod_to_core(pod))
        except ValueError as err:
            problems.append((f"pods[{i}]", str(err)))
    try:
        state = model.behavior_state.to_core()
    except ValueError as err:
        problems.append(("behaviorState", str(err)))
        state = core.BehaviorState()
    status = model.autoscaler.status
    conditions = []
    for i, cond in enumerate(status.conditions):
        when = _time(cond.last_transition_time, f"autoscaler.status.conditions[{i}].lastTransitionTime", problems)
        conditions.append(core.Condition(cond.type, cond.status, cond.reason, cond.message, when))
    last_scale = _time(status.last_scale_time, "autoscaler.status.lastScaleTime", problems)
    if problems:
        raise SpecError(problems, source=source)
    scale: core.Scale | core.ScaleFailure = (
        core.ScaleFailure(model.scale.error)
        if model.scale.error is not None
        else core.Scale(model.scale.spec.replicas, model.scale.status.replicas, model.scale.status.selector)
    )
    return Snapshot(
        now=now,
        settings=model.settings.to_core(),
        name=model.autoscaler.metadata.name,
        namespace=model.autoscaler.metadata.namespace,
        spec=spec,
        scale=scale,
        pods=tuple(pods),
        metrics=tuple(metrics),
        state=state,
        conditions=tuple(conditions),
        last_scale_time=last_scale,
        previous_desired_replicas=status.desired_replicas,
    )


def _time(value: str | None, path: str, problems: list[tuple[str, str]]) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError as err:
        problems.append((path, str(err)))
        return None


__all__ = ["Snapshot", "SpecError", "load_snapshot"]
