"""The value types the core reasons about: spec, pods, readings, settings, behaviour state.

Everything here is a frozen dataclass of plain values. Quantities are integers in milli-units (what
Kubernetes' `Quantity.MilliValue()` returns), times are timezone-aware `datetime`s, durations are seconds.
Nothing here parses text or talks to anything: `autoscaler.spec` builds these from YAML, JSON and the API.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:  # the extensions' own modules import this one
    from autoscaler.core.deletion_cost import PodDeletionCost
    from autoscaler.core.fallback import Fallback
    from autoscaler.core.queue import ExtraMetrics
    from autoscaler.core.zero import ScaleToZero

from autoscaler.core.predictive import PredictiveSpec
from autoscaler.core.values import quick_init

# --------------------------------------------------------------------------------------------------------
# The autoscaler spec (autoscaling/v2 HorizontalPodAutoscalerSpec, in the core's terms)
# --------------------------------------------------------------------------------------------------------


class MetricSourceType(StrEnum):
    RESOURCE = "Resource"
    CONTAINER_RESOURCE = "ContainerResource"
    PODS = "Pods"
    OBJECT = "Object"
    EXTERNAL = "External"


class MetricTargetType(StrEnum):
    UTILIZATION = "Utilization"
    VALUE = "Value"
    AVERAGE_VALUE = "AverageValue"


class SelectPolicy(StrEnum):
    MAX = "Max"
    MIN = "Min"
    DISABLED = "Disabled"


class MissingPods(StrEnum):
    """What a scale-down does with pods that have no sample (an extension; the HPA always rebalances)."""

    # The HPA's rule: a missing pod counts as using 100 % of its request (or the target, if higher) on a
    # scale-down and 0 on a scale-up, and the proposal is recomputed with them.
    REBALANCE = "Rebalance"
    # No scale-down while any counted pod lacks a sample; scale-ups rebalance as the HPA does.
    HOLD = "Hold"


class ScalingPolicyType(StrEnum):
    PODS = "Pods"
    PERCENT = "Percent"


@dataclass(frozen=True, slots=True)
class LabelSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A metav1.LabelSelector: matchLabels and matchExpressions, all of which must hold."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        for req in self.match_expressions:
            present = req.key in labels
            if req.operator == "In" and not (present and labels[req.key] in req.values):
                return False
            if req.operator == "NotIn" and present and labels[req.key] in req.values:
                return False
            if req.operator == "Exists" and not present:
                return False
            if req.operator == "DoesNotExist" and present:
                return False
        return True


@dataclass(frozen=True, slots=True)
class ObjectReference:
    """autoscaling/v2 CrossVersionObjectReference."""

    kind: str
    name: str
    api_version: str = ""


@dataclass(frozen=True, slots=True)
class MetricTarget:
    """One of value / average_value (milli-units) / average_utilization (percent of request)."""

    type: MetricTargetType
    value: int | None = None
    average_value: int | None = None
    average_utilization: int | None = None


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One entry of spec.metrics. Which fields are set depends on `type`, as in autoscaling/v2.

    - Resource: resource_name; ContainerResource: resource_name and container;
    - Pods / External: metric_name (and metric_selector);
    - Object: metric_name, metric_selector and described_object.
    """

    type: MetricSourceType
    target: MetricTarget
    resource_name: str = ""
    container: str = ""
    metric_name: str = ""
    metric_selector: LabelSelector | None = None
    described_object: ObjectReference | None = None


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    type: ScalingPolicyType
    value: int
    period_seconds: int


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """HPAScalingRules after the API server's defaulting (see `spec.defaults`).

    `stabilization_window_seconds` None means "the controller's default" (scale-down only, as upstream).
    `tolerance` None means "the controller-wide tolerance".
    """

    policies: tuple[ScalingPolicy, ...]
    select_policy: SelectPolicy = SelectPolicy.MAX
    stabilization_window_seconds: int | None = None
    tolerance: float | None = None


@dataclass(frozen=True, slots=True)
class Behavior:
    scale_up: ScalingRules
    scale_down: ScalingRules


@dataclass(frozen=True, slots=True)
class AutoscalerSpec:
    """The HPA spec the core decides on. `behavior` None selects the HPA's legacy normalization."""

    max_replicas: int
    metrics: tuple[MetricSpec, ...]
    min_replicas: int = 1
    behavior: Behavior | None = None
    scale_target_ref: ObjectReference = ObjectReference(kind="", name="")
    missing_pods: MissingPods = MissingPods.REBALANCE
    # Drain time and formula proposals beside the metrics (core/queue.py); None: the HPA's metrics alone.
    extra_metrics: ExtraMetrics | None = None
    # Extensions beyond the HPA (None: the HPA's path, unchanged).
    scale_to_zero: ScaleToZero | None = None  # core/zero.py: opts in to scaling to and from zero
    fallback: Fallback | None = None  # core/fallback.py: what a metric's repeated failure does
    # Extensions (None / False: the HPA's path, unchanged).
    # Surge pods of a rollout do not inflate the count (core/rollout.py).
    rollout_aware: bool = False
    # Before a scale-down, pods get a pod-deletion-cost from a per-pod metric (core/deletion_cost.py).
    pod_deletion_cost: PodDeletionCost | None = None
    # `mode: predictive` (core/predictive.py); None is the HPA.
    predictive: PredictiveSpec | None = None


# --------------------------------------------------------------------------------------------------------
# Pods
# --------------------------------------------------------------------------------------------------------


class PodPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class Container:
    """A container's name and resource requests in milli-units (cpu: millicores, memory: milli-bytes)."""

    name: str
    requests: Mapping[str, int] = field(default_factory=dict)
    # Init containers only: restartPolicy Always makes it a sidecar, whose requests count.
    restart_policy_always: bool = False


@dataclass(frozen=True, slots=True)
class Pod:
    """The fields of a core/v1 Pod that the HPA reads.

    `ready` is the status of the PodReady condition: "True", "False", "Unknown", or None when the pod has
    no such condition; `ready_transition` is that condition's lastTransitionTime.
    """

    name: str
    phase: str  # a PodPhase value, or "" when the pod reports none
    labels: Mapping[str, str] = field(default_factory=dict)
    ready: str | None = None
    ready_transition: datetime | None = None
    start_time: datetime | None = None
    deleted: bool = False
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    # spec.resources.requests (pod-level resources), milli-units; empty when not set.
    pod_requests: Mapping[str, int] = field(default_factory=dict)
    namespace: str = ""
    # controller.kubernetes.io/pod-deletion-cost as an int32 (None: absent or unreadable); read only by the
    # pod-deletion-cost extension (core/deletion_cost.py), never by the decision.
    deletion_cost: int | None = None

    @property
    def is_ready(self) -> bool:
        """podutil.IsPodReady: the Ready condition is True."""
        return self.ready == "True"


@dataclass(frozen=True, slots=True)
class ScaleFailure:
    """The target's scale could not be read (FailedGetScale); `message` says why."""

    message: str


@quick_init
@dataclass(frozen=True, slots=True)
class Scale:
    """The target's scale subresource: spec.replicas, status.replicas and status.selector (a string)."""

    spec_replicas: int
    status_replicas: int
    selector: str


# --------------------------------------------------------------------------------------------------------
# Readings: what a metric source returns, in the shape of the Kubernetes metrics APIs
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    name: str
    usage: Mapping[str, int]  # resource name -> milli-units


@dataclass(frozen=True, slots=True)
class PodUsage:
    """One metrics.k8s.io PodMetrics item: per-container usage, sample time and window."""

    pod: str
    timestamp: datetime
    window_seconds: float
    containers: tuple[ContainerUsage, ...]


def _milli_column(values: Sequence[int]) -> Sequence[int]:
    """Milli-values as a column: an int64 array (8 bytes a value, no object each), a tuple past int64."""
    try:
        return array("q", values)
    except OverflowError:
        return tuple(values)


T = TypeVar("T")


def _once_if_same(column: Sequence[T]) -> T | tuple[T, ...]:
    """A column as kept: its one value when every entry is equal (a reading's sample times and windows nearly
    always are), else a tuple; `_column` gives it back as a tuple."""
    if column:
        first = column[0]
        # (A tuple value is never kept alone: `_column` reads a tuple as the column itself.)
        if type(first) is not tuple and column.count(first) == len(column):  # C's loop, identity first
            return first
    return tuple(column)


def _column(kept: object, size: int) -> tuple[Any, ...]:
    return kept if type(kept) is tuple else (kept,) * size


class _Columns:
    """Per-pod columns of a reading: the pods' names, sample times, windows and milli-values (one entry each).

    A column whose entries are all equal (the sample times and windows of one query's answer) keeps its one
    value: ~0.25 KiB less per reading of 10 pods."""

    __slots__ = ("_stamps", "_windows", "names", "values")

    def __init__(
        self, names: Sequence[str], stamps: Sequence[datetime], windows: Sequence[float], values: Sequence[int]
    ) -> None:
        if not len(names) == len(stamps) == len(windows) == len(values):
            raise ValueError(
                f"reading columns differ in length: {len(names)} names, {len(stamps)} stamps, "
                f"{len(windows)} windows, {len(values)} values"
            )
        self.names = names if type(names) is tuple else tuple(names)
        self._stamps = _once_if_same(stamps)
        self._windows = _once_if_same(windows)
        self.values = _milli_column(values)

    @property
    def stamps(self) -> tuple[datetime, ...]:
        return _column(self._stamps, len(self.names))

    @property
    def windows(self) -> tuple[float, ...]:
        return _column(self._windows, len(self.names))


class _Frozen:
    """Immutable after `__init__` (as a frozen dataclass is), pickled as its constructor's call."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")


class ResourceReading(_Frozen):
    """Resource and ContainerResource metrics: a PodMetricsList.

    Made from its items, `ResourceReading(pods=...)`, or by a metric source from columns of pods with one
    container each (`from_columns`): no object per pod, the values in an array (a reading of 10 pods takes
    ~0.4 KiB instead of ~3.7), and `pods` makes the items when asked. Equal when the items are, however made.
    """

    __slots__ = ("_columns", "_containers", "_pods", "_resource")
    _pods: tuple[PodUsage, ...] | None
    _columns: _Columns | None
    _containers: str | tuple[str, ...]  # one name when every pod's is the same (`_once_if_same`)
    _resource: str

    def __init__(self, pods: Iterable[PodUsage] = ()) -> None:
        object.__setattr__(self, "_pods", tuple(pods))
        object.__setattr__(self, "_columns", None)
        object.__setattr__(self, "_containers", ())
        object.__setattr__(self, "_resource", "")

    @classmethod
    def from_columns(
        cls,
        *,
        resource: str,
        names: Sequence[str],
        containers: Sequence[str],
        stamps: Sequence[datetime],
        windows: Sequence[float],
        values: Sequence[int],
    ) -> ResourceReading:
        """Pods with one container each: pod `names[i]`'s container `containers[i]` used `values[i]` milli-units
        of `resource`, sampled at `stamps[i]` over `windows[i]` seconds."""
        columns = _Columns(names, stamps, windows, values)
        if len(containers) != len(columns.names):
            raise ValueError(f"reading columns differ in length: {len(names)} names, {len(containers)} containers")
        reading = cls.__new__(cls)
        object.__setattr__(reading, "_pods", None)
        object.__setattr__(reading, "_columns", columns)
        object.__setattr__(reading, "_containers", _once_if_same(containers))
        object.__setattr__(reading, "_resource", resource)
        return reading

    @property
    def pods(self) -> tuple[PodUsage, ...]:
        """The PodMetrics items (made anew from the columns on each call when built from columns)."""
        if self._pods is not None:
            return self._pods
        columns, resource = cast(_Columns, self._columns), self._resource
        return tuple(
            PodUsage(name, stamp, window, (ContainerUsage(container, {resource: value}),))
            for name, stamp, window, container, value in zip(
                columns.names,
                columns.stamps,
                columns.windows,
                _column(self._containers, len(columns.names)),
                columns.values,
                strict=True,
            )
        )

    def one_container_columns(self) -> tuple[str, _Columns, tuple[str, ...]] | None:
        """(resource, columns, container names) when made from columns, else None (for the calculator's fast path)."""
        columns = self._columns
        if columns is None:
            return None
        return self._resource, columns, _column(self._containers, len(columns.names))

    def __eq__(self, other: object) -> bool:
        return self.pods == other.pods if isinstance(other, ResourceReading) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.pods)

    def __repr__(self) -> str:
        return f"ResourceReading(pods={self.pods!r})"

    def __reduce__(self) -> tuple[type[ResourceReading], tuple[tuple[PodUsage, ...]]]:
        return ResourceReading, (self.pods,)


@dataclass(frozen=True, slots=True)
class PodValue:
    """One custom.metrics.k8s.io MetricValue about a pod."""

    pod: str
    value: int  # milli-units
    timestamp: datetime
    window_seconds: float = 60.0  # metricServerDefaultMetricWindow when the API gives none


class PodsReading(_Frozen):
    """Pods metrics: a MetricValueList over the target's pods.

    Made from its items, `PodsReading(items)`, or by a metric source from columns (`from_columns`: no object
    per pod; `items` makes them when asked). Equal when the items are, however made.
    """

    __slots__ = ("_columns", "_items")
    _items: tuple[PodValue, ...] | None
    _columns: _Columns | None

    def __init__(self, items: Iterable[PodValue] = ()) -> None:
        object.__setattr__(self, "_items", tuple(items))
        object.__setattr__(self, "_columns", None)

    @classmethod
    def from_columns(
        cls, *, names: Sequence[str], stamps: Sequence[datetime], windows: Sequence[float], values: Sequence[int]
    ) -> PodsReading:
        """Pod `names[i]`'s value `values[i]` (milli-units), sampled at `stamps[i]` over `windows[i]` seconds."""
        reading = cls.__new__(cls)
        object.__setattr__(reading, "_items", None)
        object.__setattr__(reading, "_columns", _Columns(names, stamps, windows, values))
        return reading

    @property
    def items(self) -> tuple[PodValue, ...]:
        """The MetricValue items (made anew from the columns on each call when built from columns)."""
        if self._items is not None:
            return self._items
        columns = cast(_Columns, self._columns)
        return tuple(
            PodValue(name, value, stamp, window)
            for name, value, stamp, window in zip(
                columns.names, columns.values, columns.stamps, columns.windows, strict=True
            )
        )

    def columns(self) -> _Columns | None:
        """The columns when made from columns, else None (for the calculator's fast path)."""
        return self._columns

    def __eq__(self, other: object) -> bool:
        return self.items == other.items if isinstance(other, PodsReading) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.items)

    def __repr__(self) -> str:
        return f"PodsReading(items={self.items!r})"

    def __reduce__(self) -> tuple[type[PodsReading], tuple[tuple[PodValue, ...]]]:
        return PodsReading, (self.items,)


@dataclass(frozen=True, slots=True)
class ObjectReading:
    """Object metrics: the one MetricValue describing the object."""

    value: int  # milli-units
    timestamp: datetime


@dataclass(frozen=True, slots=True)
class ExternalReading:
    """External metrics: an ExternalMetricValueList; the HPA sums the values."""

    values: tuple[int, ...]  # milli-units
    timestamp: datetime


Reading = ResourceReading | PodsReading | ObjectReading | ExternalReading


@dataclass(frozen=True, slots=True)
class MetricFailure:
    """A metric that could not be read. `message` is shown in conditions and events."""

    message: str


MetricInput = Reading | MetricFailure


# --------------------------------------------------------------------------------------------------------
# Controller-wide settings (kube-controller-manager flags)
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    """Controller-wide settings; defaults are kube-controller-manager's (HPAControllerConfiguration)."""

    # --horizontal-pod-autoscaler-tolerance
    tolerance: float = 0.1
    # --horizontal-pod-autoscaler-cpu-initialization-period (5m)
    cpu_initialization_period_seconds: float = 300.0
    # --horizontal-pod-autoscaler-initial-readiness-delay (30s)
    initial_readiness_delay_seconds: float = 30.0
    # --horizontal-pod-autoscaler-downscale-stabilization (5m)
    downscale_stabilization_window_seconds: float = 300.0
    # horizontal.go scaleUpLimitFactor / scaleUpLimitMinimum (legacy path only)
    scale_up_limit_factor: float = 2.0
    scale_up_limit_minimum: float = 4.0
    # The HPAConfigurableTolerance feature gate (on by default in Kubernetes 1.36).
    configurable_tolerance: bool = True
    # The HPAScaleToZero feature gate (alpha, off by default in Kubernetes 1.36): minReplicas 0 with an Object
    # or External metric, and scaling back up from a zero the autoscaler set (the ScaledToZero condition).
    hpa_scale_to_zero: bool = False


# --------------------------------------------------------------------------------------------------------
# Behaviour state: what the HPA keeps in memory between reconciles, as data
# --------------------------------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True)
class Recommendation:
    replicas: int
    timestamp: datetime


@quick_init
@dataclass(frozen=True, slots=True)
class ScaleEvent:
    """A scale write: how many replicas it added (scale-up list) or removed (scale-down list)."""

    replica_change: int
    timestamp: datetime
    outdated: bool = False


@dataclass(frozen=True, slots=True)
class MetricHealth:
    """One metric's memory for `fallback`: consecutive failed evaluations, the last good value and its time.

    `key` is the metric's identity (core/fallback.py `metric_key`); `last_good` is in milli-units, as
    `fallback.observed_value` reads it.
    """

    key: str
    failures: int = 0
    last_good: int | None = None
    last_good_time: datetime | None = None
    # When the metric was readable again after its fallback was in force (None: not recovering).
    recovered_at: datetime | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class BehaviorState:
    """`recommendations` None means "never reconciled": the HPA then records the current count first."""

    recommendations: tuple[Recommendation, ...] | None = None
    scale_up_events: tuple[ScaleEvent, ...] = ()
    scale_down_events: tuple[ScaleEvent, ...] = ()
    # Extensions (empty on the HPA's path): per-metric failure memory (fallback) and the start of the current
    # idle stretch (scaleToZero's cooldown).
    metric_health: tuple[MetricHealth, ...] = ()
    idle_since: datetime | None = None
    # `mode: predictive`: (time, pods needed at the target, the same without the saturation factor) of the recent
    # decisions, oldest first.
    forecast: tuple[tuple[datetime, float, float], ...] = ()
    # `mode: predictive`: when the target was last scaled down (its downscale delay counts from it; None: not
    # since the state was first written).
    last_scale_down: datetime | None = None

    def with_recommendations(self, recommendations: tuple[Recommendation, ...] | None) -> BehaviorState:
        """This state with `recommendations` in their place: dataclasses.replace's result, made directly (replace
        walks every field's definition on each call, and a decision and the daemon's compaction each do this once
        per target). Every field is named here and below; tests/core/test_direct_construction.py checks both
        against replace."""
        return BehaviorState(
            recommendations=recommendations,
            scale_up_events=self.scale_up_events,
            scale_down_events=self.scale_down_events,
            metric_health=self.metric_health,
            idle_since=self.idle_since,
            forecast=self.forecast,
            last_scale_down=self.last_scale_down,
        )

    def with_scale_events(self, up: tuple[ScaleEvent, ...], down: tuple[ScaleEvent, ...]) -> BehaviorState:
        """This state with these scale events (storeScaleEvent, on every scale write), made directly as above."""
        return BehaviorState(
            recommendations=self.recommendations,
            scale_up_events=up,
            scale_down_events=down,
            metric_health=self.metric_health,
            idle_since=self.idle_since,
            forecast=self.forecast,
            last_scale_down=self.last_scale_down,
        )


# --------------------------------------------------------------------------------------------------------
# Conditions (autoscaling/v2 HorizontalPodAutoscalerCondition)
# --------------------------------------------------------------------------------------------------------


class ConditionType(StrEnum):
    ABLE_TO_SCALE = "AbleToScale"
    SCALING_ACTIVE = "ScalingActive"
    SCALING_LIMITED = "ScalingLimited"
    SCALED_TO_ZERO = "ScaledToZero"
    FALLBACK_ACTIVE = "FallbackActive"  # an extension: a metric's fallback is in force (core/fallback.py)


@quick_init
@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str
    last_transition_time: datetime | None = None
