"""One metric's replica proposal: computeReplicasForMetric and the computeStatusFor* family.

Dispatches on the metric type and target to the calculator, wraps errors in the HPA's words, names the
metric as the HPA does in its events ("cpu resource utilization (percentage of request)"), and builds the
status entry the HPA would report for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from autoscaler.core import calculator as calc
from autoscaler.core import objects
from autoscaler.core.calculator import Calculation, PodGroups, Tolerances
from autoscaler.core.errors import MetricComputationError
from autoscaler.core.events import METRIC_FAILURE_REASONS, EventReason
from autoscaler.core.types import (
    AutoscalerSpec,
    ExternalReading,
    LabelSelector,
    MetricFailure,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTargetType,
    MissingPods,
    ObjectReading,
    Pod,
    PodsReading,
    ResourceReading,
    Settings,
)
from autoscaler.core.values import quick_init

_R = TypeVar("_R", ResourceReading, PodsReading, ObjectReading, ExternalReading)
_T = TypeVar("_T")


@quick_init
@dataclass(frozen=True, slots=True)
class MetricStatus:
    """The autoscaling/v2 MetricStatus the HPA reports for a metric: its identity and current values."""

    spec: MetricSpec
    value: int | None = None  # milli-units
    average_value: int | None = None  # milli-units
    average_utilization: int | None = None  # percent of request


@quick_init
@dataclass(frozen=True, slots=True)
class MetricResult:
    """One metric's outcome: a proposal with its calculation, or an error with its event reason.

    `pods` is how the target's pods were counted for this metric (ready, unready, missing, ignored), on
    success and also on a failure that came after the grouping ("did not receive metrics for targeted pods").
    """

    index: int
    spec: MetricSpec
    name: str
    tolerances: Tolerances
    proposed_replicas: int | None = None
    status: MetricStatus | None = None
    calculation: Calculation | None = None
    error: str | None = None
    error_reason: EventReason | None = None
    # How the pods were counted when the calculator failed after counting them (on success: `calculation`).
    failure_pods: PodGroups | None = None
    # The error computeStatusFor* returned, where it wraps `error` ("failed to get qps external metric: ...").
    status_error: str | None = None

    @property
    def pods(self) -> PodGroups | None:
        return self.calculation.pods if self.calculation is not None else self.failure_pods

    @property
    def returned_error(self) -> str | None:
        """The error as computeReplicasForMetric returns it, wrapped by metric type: what the HPA's
        FailedComputeMetricsReplicas event quotes ("first error is: failed to get cpu resource metric value:
        ..."), where the FailedGet*Metric event and the ScalingActive condition quote `error` itself."""
        if self.error is None:
            return None
        error = self.status_error or self.error
        spec = self.spec
        match spec.type:
            case MetricSourceType.RESOURCE:
                return f"failed to get {spec.resource_name} resource metric value: {error}"
            case MetricSourceType.CONTAINER_RESOURCE:
                return f"failed to get {spec.container} container metric value: {error}"
            case MetricSourceType.PODS:
                return f"failed to get pods metric value: {error}"
            case MetricSourceType.OBJECT:
                return f"failed to get object metric value: {error}"
        return f"failed to get {spec.metric_name} external metric value: {error}"


def tolerances_for(spec: AutoscalerSpec, settings: Settings) -> Tolerances:
    """tolerancesForHpa: the controller-wide tolerance, overridden per direction by behavior."""
    down = up = settings.tolerance
    if spec.behavior is not None and settings.configurable_tolerance:
        if spec.behavior.scale_down.tolerance is not None:
            down = spec.behavior.scale_down.tolerance
        if spec.behavior.scale_up.tolerance is not None:
            up = spec.behavior.scale_up.tolerance
    return Tolerances(scale_down=down, scale_up=up)


def selector_text(selector: LabelSelector | None) -> str:
    """A metric selector as shown in metric names (Go prints the struct; this is a readable form)."""
    if selector is None:
        return "<nil>"
    parts = [f"{k}={v}" for k, v in selector.match_labels]
    parts += [f"{r.key} {r.operator} ({','.join(r.values)})" for r in selector.match_expressions]
    return "{" + ",".join(parts) + "}"


def compute_metric(
    index: int,
    spec: MetricSpec,
    reading: MetricInput,
    *,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
    settings: Settings,
    now: datetime,
    missing_pods: MissingPods = MissingPods.REBALANCE,
) -> MetricResult:
    """The proposal for one metric, or its error in the HPA's words."""
    try:
        name, calculation, status = _compute(
            spec, reading, spec_replicas, status_replicas, pods, tolerances, settings, now, missing_pods
        )
    except MetricComputationError as err:
        return MetricResult(
            index=index,
            spec=spec,
            name=_describe(spec),
            tolerances=tolerances,
            error=err.message,
            error_reason=METRIC_FAILURE_REASONS[spec.type],
            failure_pods=err.pods,
            status_error=err.returned,
        )
    return MetricResult(
        index=index,
        spec=spec,
        name=sys.intern(name),  # the same few names in every decision of every target: one string each
        tolerances=tolerances,
        proposed_replicas=calculation.replicas,
        status=status,
        calculation=calculation,
    )


def _describe(spec: MetricSpec) -> str:
    match spec.type:
        case MetricSourceType.RESOURCE:
            return f"{spec.resource_name} resource"
        case MetricSourceType.CONTAINER_RESOURCE:
            return f"{spec.resource_name} container resource ({spec.container})"
        case MetricSourceType.PODS:
            return f"pods metric {spec.metric_name}"
        case MetricSourceType.OBJECT:
            kind = spec.described_object.kind if spec.described_object else ""
            return f"{kind} metric {spec.metric_name}"
    return f"external metric {spec.metric_name}({selector_text(spec.metric_selector)})"


def _expect(reading: MetricInput, kind: type[_R], wrap: str) -> _R:
    if isinstance(reading, MetricFailure):
        raise MetricComputationError(f"{wrap}: {reading.message}")
    if not isinstance(reading, kind):
        raise MetricComputationError(
            f"{wrap}: a reading of type {type(reading).__name__} does not fit this metric type"
        )
    return reading


def _compute(
    spec: MetricSpec,
    reading: MetricInput,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
    settings: Settings,
    now: datetime,
    missing_pods: MissingPods,
) -> tuple[str, Calculation, MetricStatus]:
    target = spec.target
    match spec.type:
        case MetricSourceType.RESOURCE | MetricSourceType.CONTAINER_RESOURCE:
            return _resource(spec, reading, spec_replicas, pods, tolerances, settings, now, missing_pods)
        case MetricSourceType.PODS:
            wrap = f"unable to get metric {spec.metric_name}"
            metrics = _read(lambda: calc.pods_pod_metrics(_expect(reading, PodsReading, wrap)), wrap)
            result = calc.plain_metric_replicas(
                current_replicas=spec_replicas,
                target_usage=_required(target.average_value, "pods metric target averageValue"),
                resource="",
                metrics=metrics,
                pods=pods,
                tolerances=tolerances,
                settings=settings,
                now=now,
                missing_pods=missing_pods,
            )
            return (
                f"pods metric {spec.metric_name}",
                result,
                MetricStatus(spec, average_value=result.usage),
            )
        case MetricSourceType.OBJECT:
            return _object(spec, reading, spec_replicas, status_replicas, pods, tolerances)
        case MetricSourceType.EXTERNAL:
            return _external(spec, reading, spec_replicas, status_replicas, pods, tolerances)
    raise MetricComputationError(f'unknown metric source type "{spec.type}"')  # pragma: no cover


def _object(
    spec: MetricSpec,
    reading: MetricInput,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
) -> tuple[str, Calculation, MetricStatus]:
    """computeStatusForObjectMetric: a Value or an AverageValue target on one object."""
    target, ref = spec.target, spec.described_object
    kind, name = (ref.kind, ref.name) if ref else ("", "")

    def value() -> ObjectReading:
        if isinstance(reading, MetricFailure):
            # GetObjectMetricReplicas: "unable to get metric NAME: ERR on KIND NAME"
            raise MetricComputationError(f"unable to get metric {spec.metric_name}: {reading.message} on {kind} {name}")
        return _expect(reading, ObjectReading, f"unable to get metric {spec.metric_name}")

    if target.type == MetricTargetType.VALUE and target.value is not None:
        result = objects.object_value_replicas(
            current_replicas=spec_replicas, target_usage=target.value, reading=value(), pods=pods, tolerances=tolerances
        )
        return f"{kind} metric {spec.metric_name}", result, MetricStatus(spec, value=result.usage)
    if target.type == MetricTargetType.AVERAGE_VALUE and target.average_value is not None:
        result = _returned(
            lambda: objects.object_average_replicas(
                status_replicas=status_replicas,
                target_average=target.average_value or 0,
                reading=value(),
                tolerances=tolerances,
            ),
            f"failed to get {spec.metric_name} object metric",
        )
        return (
            f"external metric {spec.metric_name}({selector_text(spec.metric_selector)})",
            result,
            MetricStatus(spec, average_value=result.usage),
        )
    raise MetricComputationError(
        "invalid object metric source: neither a value target nor an average value target was set"
    )


def _external(
    spec: MetricSpec,
    reading: MetricInput,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
) -> tuple[str, Calculation, MetricStatus]:
    """computeStatusForExternalMetric: AverageValue first, then Value (as upstream checks them)."""
    target = spec.target
    name = f"external metric {spec.metric_name}({selector_text(spec.metric_selector)})"

    def values() -> ExternalReading:
        inner = f"unable to get external metric {spec.metric_name}"
        external = _expect(reading, ExternalReading, inner)
        if not external.values:
            raise MetricComputationError(f"{inner}: no metrics returned from external metrics API")
        return external

    if target.average_value is not None:
        average = target.average_value
        result = _returned(
            lambda: objects.external_average_replicas(
                status_replicas=status_replicas, target_average=average, reading=values(), tolerances=tolerances
            ),
            f"failed to get {spec.metric_name} external metric",
        )
        return name, result, MetricStatus(spec, average_value=result.usage)
    if target.value is not None:
        wanted = target.value
        result = _returned(
            lambda: objects.external_value_replicas(
                current_replicas=spec_replicas, target_usage=wanted, reading=values(), pods=pods, tolerances=tolerances
            ),
            f"failed to get external metric {spec.metric_name}",
        )
        return name, result, MetricStatus(spec, value=result.usage)
    raise MetricComputationError(
        "invalid external metric source: neither a value target nor an average value target was set"
    )


def _read(convert: Callable[[], _T], wrap: str) -> _T:
    """Read a metric; the metrics client's own errors get the calculator's prefix, as upstream wraps them."""
    try:
        return convert()
    except MetricComputationError as err:
        if err.message.startswith(wrap):
            raise
        raise err.wrapped(wrap) from err


def _returned(convert: Callable[[], _T], wrap: str) -> _T:
    """The prefix computeStatusForExternalMetric and computeStatusForObjectMetric (AverageValue) add only to
    what they return, after their condition and event quoted the calculator's error without it."""
    try:
        return convert()
    except MetricComputationError as err:
        raise MetricComputationError(err.message, pods=err.pods, returned=f"{wrap}: {err.message}") from err


def _required(value: int | None, what: str) -> int:
    if value is None:
        raise MetricComputationError(f"{what} is not set")
    return value


def _resource(
    spec: MetricSpec,
    reading: MetricInput,
    spec_replicas: int,
    pods: Sequence[Pod],
    tolerances: Tolerances,
    settings: Settings,
    now: datetime,
    missing_pods: MissingPods,
) -> tuple[str, Calculation, MetricStatus]:
    """computeStatusForResourceMetricGeneric: AverageValue first, then Utilization."""
    resource, target = spec.resource_name, spec.target
    container = spec.container if spec.type == MetricSourceType.CONTAINER_RESOURCE else ""
    wrap = f"unable to get metrics for resource {resource}"
    if target.average_value is None and target.average_utilization is None:
        raise MetricComputationError(
            "invalid resource metric source: neither an average utilization target nor an average value "
            "(usage) target was set"
        )
    what = "usage" if target.average_value is not None else "utilization"
    try:
        metrics = _read(
            lambda: calc.resource_pod_metrics(_expect(reading, ResourceReading, wrap), resource, container), wrap
        )
        if target.average_value is not None:
            result = calc.plain_metric_replicas(
                current_replicas=spec_replicas,
                target_usage=target.average_value,
                resource=resource,
                metrics=metrics,
                pods=pods,
                tolerances=tolerances,
                settings=settings,
                now=now,
                missing_pods=missing_pods,
            )
        else:
            result = calc.resource_replicas(
                current_replicas=spec_replicas,
                target_utilization=target.average_utilization or 0,
                resource=resource,
                container=container,
                metrics=metrics,
                pods=pods,
                tolerances=tolerances,
                settings=settings,
                now=now,
                missing_pods=missing_pods,
            )
    except MetricComputationError as err:
        raise err.wrapped(f"failed to get {resource} {what}") from err
    if target.average_value is not None:
        return f"{resource} resource", result, MetricStatus(spec, average_value=result.usage)
    kind = "container resource" if container else "resource"
    return (
        f"{resource} {kind} utilization (percentage of request)",
        result,
        MetricStatus(spec, average_value=result.raw_usage, average_utilization=result.usage),
    )
