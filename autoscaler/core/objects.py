"""The HPA's replica calculator for Object and External metrics (one value, or a sum of values).

Held beside replica_calculator.go (Kubernetes 1.36): GetObjectMetricReplicas, GetObjectPerPodMetricReplicas,
GetExternalMetricReplicas, GetExternalPerPodMetricReplicas and getUsageRatioReplicaCount, with Go's
overflow caps and float semantics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from autoscaler.core.calculator import Calculation, Tolerances
from autoscaler.core.errors import MetricComputationError
from autoscaler.core.gomath import MAX_INT32, MAX_INT64, MIN_INT64, ceil_int32, fdiv, saturated_ceil_int32, wrap_int64
from autoscaler.core.types import ExternalReading, ObjectReading, Pod, PodPhase

# ---------------------------------------------------------------------------------------------------


def ready_pods_count(pods: Sequence[Pod]) -> int:
    """getReadyPodsCount: pods Running with the Ready condition True."""
    if not pods:
        raise MetricComputationError(
            "unable to calculate ready pods: no pods returned by selector while calculating replica count"
        )
    return sum(1 for p in pods if p.phase == PodPhase.RUNNING and p.is_ready)


def usage_ratio_replica_count(
    current_replicas: int, usage_ratio: float, tolerances: Tolerances, pods: Sequence[Pod]
) -> Calculation:
    """getUsageRatioReplicaCount: tolerance and ready pods; from zero replicas, ceil(ratio) directly."""
    if current_replicas != 0:
        if tolerances.is_within(usage_ratio):
            return Calculation(
                replicas=current_replicas,
                usage=0,
                usage_ratio=usage_ratio,
                within_tolerance=True,
                note="usage ratio within tolerance",
            )
        ready = ready_pods_count(pods)
        wanted = usage_ratio * ready
        replicas = MAX_INT32 if wanted > MAX_INT32 else ceil_int32(wanted)
        return Calculation(
            replicas=replicas,
            usage=0,
            usage_ratio=usage_ratio,
            within_tolerance=False,
            ready_pod_count=ready,
            note=f"ceil({usage_ratio:g} * {ready} ready pods) = {replicas}",
        )
    replicas = saturated_ceil_int32(usage_ratio)
    return Calculation(
        replicas=replicas,
        usage=0,
        usage_ratio=usage_ratio,
        note=f"from zero replicas: ceil({usage_ratio:g}) = {replicas}",
    )


def object_value_replicas(
    *,
    current_replicas: int,
    target_usage: int,
    reading: ObjectReading,
    pods: Sequence[Pod],
    tolerances: Tolerances,
) -> Calculation:
    """GetObjectMetricReplicas: a Value target on one object."""
    usage = reading.value
    result = usage_ratio_replica_count(current_replicas, fdiv(usage, target_usage), tolerances, pods)
    return _with_usage(result, usage)


def object_average_replicas(
    *, status_replicas: int, target_average: int, reading: ObjectReading, tolerances: Tolerances
) -> Calculation:
    """GetObjectPerPodMetricReplicas: the object's value divided by status.replicas against the target."""
    usage = reading.value
    replicas = status_replicas
    usage_ratio = fdiv(usage, float(target_average) * float(status_replicas))
    within = tolerances.is_within(usage_ratio)
    if not within:
        replicas = saturated_ceil_int32(fdiv(usage, target_average))
    return Calculation(
        replicas=replicas,
        usage=per_replica_usage(usage, status_replicas),
        usage_ratio=usage_ratio,
        within_tolerance=within,
        note=(
            "usage ratio within tolerance"
            if within
            else f"ceil({usage} / {target_average}) = {replicas} (value / target average)"
        ),
    )


def external_value_replicas(
    *,
    current_replicas: int,
    target_usage: int,
    reading: ExternalReading,
    pods: Sequence[Pod],
    tolerances: Tolerances,
) -> Calculation:
    """GetExternalMetricReplicas: the sum of the series against a Value target."""
    if not reading.values:
        raise MetricComputationError("no metrics returned from external metrics API")
    usage = 0
    for value in reading.values:
        if value > 0 and usage > MAX_INT64 - value:
            usage = MAX_INT64  # capped at MaxInt64 on overflow, as upstream
            break
        usage = wrap_int64(usage + value)
    result = usage_ratio_replica_count(current_replicas, fdiv(usage, target_usage), tolerances, pods)
    return _with_usage(result, usage)


def external_average_replicas(
    *, status_replicas: int, target_average: int, reading: ExternalReading, tolerances: Tolerances
) -> Calculation:
    """GetExternalPerPodMetricReplicas: the sum of the series per status replica."""
    if not reading.values:
        raise MetricComputationError("no metrics returned from external metrics API")
    usage = 0
    for value in reading.values:
        usage = wrap_int64(usage + value)
        if usage < 0:
            usage = MAX_INT64  # upstream reads a negative running sum as an int64 overflow
            break
    replicas = status_replicas
    usage_ratio = fdiv(usage, float(target_average) * float(status_replicas))
    within = tolerances.is_within(usage_ratio)
    if not within:
        wanted = _ceil(fdiv(usage, target_average))
        replicas = MAX_INT32 if wanted > MAX_INT32 else ceil_int32(wanted)
    if status_replicas > 0 and float(usage) >= float(MAX_INT64):
        average = MAX_INT64  # an overflowed sum is reported as the cap itself, undivided (upstream)
    else:
        average = per_replica_usage(usage, status_replicas)
    return Calculation(
        replicas=replicas,
        usage=average,
        usage_ratio=usage_ratio,
        within_tolerance=within,
        note=(
            "usage ratio within tolerance"
            if within
            else f"ceil({usage} / {target_average}) = {replicas} (sum / target average)"
        ),
    )


def per_replica_usage(usage: int, status_replicas: int) -> int:
    """The usage per replica an AverageValue target reports in status: ceil(usage / status.replicas).

    0 when the target has no replicas, instead of a division by zero whose infinity Go turns into
    -9223372036854775808m (kubernetes/kubernetes#140958, merged after 1.36.0); clamped to the int64 range
    where the float quotient rounds past it, so the status never shows a wrapped (negative) quantity.
    """
    if status_replicas <= 0:
        return 0
    average = math.ceil(fdiv(float(usage), float(status_replicas)))
    return max(MIN_INT64, min(MAX_INT64, average))


def _ceil(value: float) -> float:
    """math.Ceil on a float64: infinities and NaN stay as they are."""
    return float(math.ceil(value)) if math.isfinite(value) else value


def _with_usage(result: Calculation, usage: int) -> Calculation:
    return Calculation(
        replicas=result.replicas,
        usage=usage,
        usage_ratio=result.usage_ratio,
        within_tolerance=result.within_tolerance,
        ready_pod_count=result.ready_pod_count,
        note=result.note,
    )
