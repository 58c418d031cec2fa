"""Decision snapshots: everything one decision needs, as JSON, read into core values (docs/snapshot.md).

The autoscaler's own fields (spec, settings, behaviour state) are strict: unknown keys are errors. The
Kubernetes objects inside (pods, metrics API items, the HPA's metadata and status) are read leniently,
as Kubernetes clients do: fields the decision does not read are ignored, so real API output can be pasted.
Every field that is read is typed strictly everywhere ("2" or true is not an integer), counts are never
negative, and every problem is reported at once with its field path.

The snapshot's `autoscaler` is an object the API server already holds, so its spec is validated as an
update that changes nothing (autoscaler/spec/validation.py): an object that already has minReplicas 0 is
not refused with HPAScaleToZero off; the core applies the gate's rules to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from autoscaler.core import pause as core_pause
from autoscaler.core import shadow as core_shadow
from autoscaler.core import types as core
from autoscaler.core.formats import milli_value, parse_time
from autoscaler.core.state import behavior_state_from_json
from autoscaler.spec.errors import Problem, SpecError, join, pydantic_problems
from autoscaler.spec.fields import INT32_MAX, NonNegativeInt32, Now, Quantity, Time
from autoscaler.spec.hpa import to_core
from autoscaler.spec.readings import reading_to_core
from autoscaler.spec.settings import HPA_SCALE_TO_ZERO, SettingsModel
from autoscaler.spec.validation import load_spec


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True, strict=True)


# --- Kubernetes objects, leniently -------------------------------------------------------------------


class ObjectMeta(_Lenient):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    deletion_timestamp: Time | None = Field(None, alias="deletionTimestamp")


class PodMeta(ObjectMeta):
    name: str = Field(min_length=1, description="Pods are matched to their metrics by name.")


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
    metadata: PodMeta
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


# The API omits a count of 0, so a missing count is 0; a present one is an int32 of 0 or more.
class ScaleSpec(_Lenient):
    replicas: NonNegativeInt32 = 0


class ScaleStatus(_Lenient):
    replicas: NonNegativeInt32 = 0
    selector: str = ""


class ScaleModel(_Lenient):
    spec: ScaleSpec = Field(default_factory=ScaleSpec)
    status: ScaleStatus = Field(default_factory=ScaleStatus)
    error: str | None = Field(None, min_length=1)


class HPAConditionModel(_Lenient):
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: Time | None = Field(None, alias="lastTransitionTime")


class HPAStatusModel(_Lenient):
    conditions: list[HPAConditionModel] = Field(default_factory=list)
    last_scale_time: Time | None = Field(None, alias="lastScaleTime")
    current_replicas: NonNegativeInt32 = Field(0, alias="currentReplicas")
    desired_replicas: NonNegativeInt32 | None = Field(None, alias="desiredReplicas")


class AutoscalerObject(_Lenient):
    metadata: ObjectMeta = Field(default_factory=lambda: ObjectMeta())
    # Read by autoscaler/spec/validation.py's `load_spec`, which reports its problems with the others.
    spec: dict[str, Any]
    status: HPAStatusModel = Field(default_factory=lambda: HPAStatusModel())


# --- Behaviour state, strictly ------------------------------------------------------------------------


class RecommendationModel(_Strict):
    replicas: NonNegativeInt32
    timestamp: Time


def _replica_change(value: int) -> int:
    """storeScaleEvent records a write that changed the count: by 1 or more, up or down."""
    if value < 1:
        raise ValueError(
            f"must be 1 or more, not {value}: a scale event records the replicas a scale write added or removed, "
            "and the HPA writes the scale only to change it"
        )
    return value


class ScaleEventModel(_Strict):
    replica_change: Annotated[int, Field(le=INT32_MAX), AfterValidator(_replica_change)] = Field(alias="replicaChange")
    timestamp: Time
    outdated: bool = False


class LastGoodModel(_Strict):
    milli_value: int = Field(alias="milliValue", description="The last good value, in milli-units.")
    time: Time


class MetricHealthModel(_Strict):
    """One metric's fallback memory (core/fallback.py): consecutive failures and the last good value."""

    metric: str
    failures: int = Field(0, ge=0)
    last_good: LastGoodModel | None = Field(None, alias="lastGood")
    recovered_at: Time | None = Field(None, alias="recoveredAt")


class ForecastSampleModel(_Strict):
    timestamp: Time
    required: float = Field(ge=0, allow_inf_nan=False, description="Pods at the target needed then.")
    unboosted: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="The same without the saturation factor; absent: `required`."
    )


class BehaviorStateModel(_Strict):
    recommendations: list[RecommendationModel] | None = Field(
        None, description="Past proposals; null (or absent) means the target was never reconciled."
    )
    scale_up_events: list[ScaleEventModel] = Field(default_factory=list, alias="scaleUpEvents")
    scale_down_events: list[ScaleEventModel] = Field(default_factory=list, alias="scaleDownEvents")
    # Extensions: fallback's per-metric memory and scaleToZero's idle stretch (docs/snapshot.md).
    metric_health: list[MetricHealthModel] = Field(default_factory=list, alias="metricHealth")
    idle_since: Time | None = Field(None, alias="idleSince")
    forecast: list[ForecastSampleModel] = Field(default_factory=list, description="mode: predictive's history.")
    last_scale_down: Time | None = Field(
        None, alias="lastScaleDown", description="mode: predictive: the target's last scale-down; absent: none."
    )

    def to_core(self) -> core.BehaviorState:
        return behavior_state_from_json(self.model_dump(by_alias=True))


class PauseModel(_Strict):
    """A pause request (autoscaler/core/pause.py): hold, hold at `replicas`, or a bad annotation's `problem`."""

    source: str = Field(min_length=1, description="The object whose annotation asked for the pause.")
    replicas: NonNegativeInt32 | None = None
    problem: str = ""


class ShadowModel(_Strict):
    """What the shadowed autoscaler wanted (autoscaler/core/shadow.py), or why it could not be read."""

    source: str = Field(min_length=1, description="The object read: HorizontalPodAutoscaler web, ScaledObject ...")
    observed_at: Time = Field(alias="observedAt")
    desired_replicas: NonNegativeInt32 | None = Field(None, alias="desiredReplicas")
    error: str = ""


class SnapshotModel(_Strict):
    api_version: str | None = Field(None, alias="apiVersion")
    kind: str | None = None
    now: Now = Field(description="The decision's clock reading (RFC 3339).")
    settings: SettingsModel = Field(default_factory=lambda: SettingsModel())
    autoscaler: AutoscalerObject
    scale: ScaleModel
    pods: list[PodModel] = Field(default_factory=list)
    metrics: list[dict[str, Any]] = Field(
        description="One reading per spec metric; a spec always has one (without metrics, the default CPU metric)."
    )
    behavior_state: BehaviorStateModel = Field(default_factory=lambda: BehaviorStateModel(), alias="behaviorState")
    controllers: list[Annotated[str, StringConstraints(min_length=1)]] = Field(
        default_factory=list,
        description="Every autoscaler (namespace/name) whose scale selector matches one of the target's pods, "
        "itself included; more than one is the HPA's AmbiguousSelector.",
    )
    dry_run: bool = Field(
        False, alias="dryRun", description="The decision was made in dry-run: a rescale is reported, not written."
    )
    scale_write_error: Annotated[str, StringConstraints(min_length=1)] | None = Field(
        None, alias="scaleWriteError", description="The scale write failed with this error (the HPA's FailedRescale)."
    )
    scale_not_written: bool = Field(
        False,
        alias="scaleNotWritten",
        description="The daemon did not write the decision's rescale (its leader fence closed, or the re-read scale "
        "already had the count): reported as no rescale.",
    )
    pause: PauseModel | None = Field(None, description="The target was paused by an annotation.")
    shadow: ShadowModel | None = Field(None, description="Shadow mode: the count the replaced autoscaler wanted.")
    comment: str | None = Field(None, description="Free text; ignored.")
    inputs: list[dict[str, Any]] = Field(
        default_factory=list,
        description="One reading per input of the spec's drainTime and formula (backlog, processingRate, then "
        "the formula's inputs in order), each as an External metric's.",
    )

    @field_validator("controllers")
    @classmethod
    def _once(cls, value: list[str]) -> list[str]:
        seen = {name for name in value if value.count(name) > 1}
        if seen:
            raise ValueError(f"{sorted(seen)[0]!r} is listed more than once")
        return value


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
    controllers: tuple[str, ...] = ()
    dry_run: bool = False
    scale_write_error: str | None = None
    scale_not_written: bool = False
    pause: core_pause.Pause | None = None
    shadow: core_shadow.ShadowReading | None = None
    inputs: tuple[core.MetricInput, ...] = ()


def _raw_spec(data: dict[str, Any]) -> Any:
    autoscaler = data.get("autoscaler")
    return autoscaler.get("spec") if isinstance(autoscaler, dict) else None


def load_snapshot(data: Any, *, source: str = "", api_rules: bool = True) -> Snapshot:
    """Validate a parsed JSON snapshot and turn it into core values; raises SpecError naming every field.

    `api_rules=False` is for transcribed upstream controller tests only (see `validation.load_spec`).
    """
    if not isinstance(data, dict):
        raise SpecError([("", f"a snapshot is a JSON object, not {type(data).__name__}")], source=source)
    problems: list[Problem] = []
    model: SnapshotModel | None = None
    try:
        model = SnapshotModel.model_validate(data)
    except ValidationError as err:
        problems += pydantic_problems(err)
    spec_model = None
    raw_spec = _raw_spec(data)
    if isinstance(raw_spec, dict):
        gates = model.settings.gates() if model is not None else {}
        try:
            spec_model = load_spec(
                raw_spec,
                scale_to_zero=gates.get(HPA_SCALE_TO_ZERO, False),
                api_rules=api_rules,
                path="autoscaler.spec",
            )
        except SpecError as err:
            problems += err.problems
    if model is None or spec_model is None:
        raise SpecError(problems, source=source)

    now = parse_time(model.now)
    spec = to_core(spec_model)
    metrics = _readings(model, spec, spec_defaulted=not spec_model.metrics, now=now, problems=problems)
    pods = _pods(model.pods, problems)
    inputs = _inputs(model, spec, now=now, problems=problems)
    if problems:
        raise SpecError(problems, source=source)
    status = model.autoscaler.status
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
        pods=pods,
        metrics=metrics,
        state=model.behavior_state.to_core(),
        conditions=tuple(
            core.Condition(
                c.type,
                c.status,
                c.reason,
                c.message,
                parse_time(c.last_transition_time) if c.last_transition_time else None,
            )
            for c in status.conditions
        ),
        last_scale_time=parse_time(status.last_scale_time) if status.last_scale_time else None,
        previous_desired_replicas=status.desired_replicas,
        controllers=tuple(model.controllers),
        dry_run=model.dry_run,
        scale_write_error=model.scale_write_error,
        scale_not_written=model.scale_not_written,
        pause=(
            core_pause.Pause(model.pause.source, model.pause.replicas, model.pause.problem)
            if model.pause is not None
            else None
        ),
        shadow=(
            core_shadow.ShadowReading(
                source=model.shadow.source,
                observed_at=parse_time(model.shadow.observed_at),
                desired_replicas=model.shadow.desired_replicas,
                error=model.shadow.error,
            )
            if model.shadow is not None
            else None
        ),
        inputs=inputs,
    )


def _inputs(
    model: SnapshotModel, spec: core.AutoscalerSpec, *, now: datetime, problems: list[Problem]
) -> tuple[core.MetricInput, ...]:
    """One reading per input of the spec's drain time and formula, each read as an External metric's."""
    wanted = spec.extra_metrics.inputs() if spec.extra_metrics is not None else ()
    if len(model.inputs) != len(wanted):
        names = ", ".join(item.field for item in wanted) or "none"
        problems.append(("inputs", f"has {len(model.inputs)} entries but the spec has {len(wanted)} inputs ({names})"))
        return ()
    readings: list[core.MetricInput] = []
    for i, (item, entry) in enumerate(zip(wanted, model.inputs, strict=True)):
        try:
            readings.append(reading_to_core(item.metric, entry, now=now))
        except ValidationError as err:
            problems += pydantic_problems(err, f"inputs[{i}]")
        except SpecError as err:
            problems += [(join(f"inputs[{i}]", path), message) for path, message in err.problems]
    return tuple(readings)


def _readings(
    model: SnapshotModel, spec: core.AutoscalerSpec, *, spec_defaulted: bool, now: datetime, problems: list[Problem]
) -> tuple[core.MetricInput, ...]:
    """One reading per spec metric, each read as its metric's type expects."""
    if len(model.metrics) != len(spec.metrics):
        defaulted = " (the spec has no metrics, so it defaults to CPU at 80 %)" if spec_defaulted else ""
        problems.append(
            ("metrics", f"has {len(model.metrics)} entries but the spec has {len(spec.metrics)} metrics{defaulted}")
        )
        return ()
    readings: list[core.MetricInput] = []
    for i, (metric_spec, entry) in enumerate(zip(spec.metrics, model.metrics, strict=True)):
        try:
            readings.append(reading_to_core(metric_spec, entry, now=now))
        except ValidationError as err:
            problems += pydantic_problems(err, f"metrics[{i}]")
        except SpecError as err:
            problems += [(join(f"metrics[{i}]", path), message) for path, message in err.problems]
    return tuple(readings)


def _pods(models: list[PodModel], problems: list[Problem]) -> tuple[core.Pod, ...]:
    """The pods in core values; a pod listed twice is an error (the HPA's pod lister lists each pod once)."""
    seen: dict[tuple[str, str], int] = {}
    for i, pod in enumerate(models):
        key = (pod.metadata.namespace, pod.metadata.name)
        if key in seen:
            problems.append(
                (f"pods[{i}].metadata.name", f"pod {pod.metadata.name!r} is listed twice (also pods[{seen[key]}])")
            )
        seen.setdefault(key, i)
    return tuple(pod_to_core(pod) for pod in models)


__all__ = ["Snapshot", "SpecError", "load_snapshot"]
