"""The HPA's replica calculator: pod grouping and one replica proposal per metric.

Held beside pkg/controller/podautoscaler/replica_calculator.go (Kubernetes 1.36) and
metrics/utilization.go, function by function and in the same order of checks, so that integer
arithmetic, tolerance and the rebalancing of missing and unready pods give the same numbers.
Differences from the Go code are only of form: the clock is the `now` argument, readings come in as
values, and each result carries its explanation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import NamedTuple

from autoscaler.core.errors import MetricComputationError
from autoscaler.core.gomath import (
    MAX_INT32,
    fdiv,
    saturated_ceil_int32,
    trunc_div,
)
from autoscaler.core.types import (
    Container,
    MissingPods,
    Pod,
    PodPhase,
    PodsReading,
    ResourceReading,
    Settings,
)
from autoscaler.core.values import quick_init

# Go's zero time.Time, for a Ready condition without lastTransitionTime.
_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)
# The phases group_pods tests every pod against, looked up once: an enum member's lookup on its class costs more
# than the comparison itself (three per pod per metric).
_PENDING = PodPhase.PENDING
_ENDED = (PodPhase.FAILED, PodPhase.SUCCEEDED)


@quick_init
@dataclass(frozen=True, slots=True)
class Tolerances:
    """Usage-ratio tolerances per direction (replica_calculator.go Tolerances)."""

    scale_down: float
    scale_up: float

    def is_within(self, usage_ratio: float) -> bool:
        return (1.0 - self.scale_down) <= usage_ratio <= (1.0 + self.scale_up)


class PodMetric(NamedTuple):
    """One pod's sample (metricsclient.PodMetric). A named tuple, immutable as a frozen dataclass is, because it
    is made for every pod of every metric of every decision (20 per decision with 10 pods and 2 metrics), and a
    frozen dataclass's __init__ sets each field through object.__setattr__: 0.64 -> 0.32 us each."""

    value: int
    timestamp: datetime
    window_seconds: float


@quick_init
@dataclass(frozen=True, slots=True)
class PodGroups:
    """How the calculator counted the target's pods for one metric (names sorted)."""

    ready: tuple[str, ...]
    unready: tuple[str, ...]
    missing: tuple[str, ...]
    ignored: tuple[str, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class Calculation:
    """One metric's proposal and how it was reached.

    `usage` is what the HPA reports in status: utilization percent for Utilization targets, else the
    (average) value in milli-units. `raw_usage` is the average value beside a utilization.
    """

    replicas: int
    usage: int
    raw_usage: int | None = None
    usage_ratio: float | None = None
    rebalanced_usage_ratio: float | None = None
    within_tolerance: bool | None = None
    pods: PodGroups | None = None
    ready_pod_count: int | None = None
    note: str = ""


# ---------------------------------------------------------------------------------------------------
# Readings into PodMetricsInfo (metrics/client.go: getPodMetrics, getContainerMetrics, GetRawMetric)
# ---------------------------------------------------------------------------------------------------


def resource_pod_metrics(reading: ResourceReading, resource: str, container: str) -> dict[str, PodMetric]:
    """PodMetricsInfo from metrics.k8s.io PodMetrics, for a whole pod or one named container.

    A pod whose metrics lack the container, or the container's resource, is left out (it counts as missing),
    as it is for whole pods (kubernetes/kubernetes#127193, since 1.32).
    """
    columns = reading.one_container_columns()
    if columns is not None:  # a source's compact reading: one container per pod, read without making items
        measured, table, names = columns
        if not table.names:
            raise MetricComputationError("no metrics returned from resource metrics API")
        if measured != resource:
            return {}
        _last_names[0] = table.names
        return {
            pod: PodMetric(value, stamp, window)
            for pod, stamp, window, name, value in zip(
                table.names, table.stamps, table.windows, names, table.values, strict=True
            )
            if not container or name == container
        }
    if not reading.pods:
        raise MetricComputationError("no metrics returned from resource metrics API")
    result: dict[str, PodMetric] = {}
    for item in reading.pods:
        if container:
            for usage in item.containers:
                if usage.name == container:
                    if resource in usage.usage:
                        result[item.pod] = PodMetric(usage.usage[resource], item.timestamp, item.window_seconds)
                    break
        else:
            missing = len(item.containers) == 0
            total = 0
            for usage in item.containers:
                if resource not in usage.usage:
                    missing = True
                    break
                total += usage.usage[resource]
            if not missing:
                result[item.pod] = PodMetric(total, item.timestamp, item.window_seconds)
    return result


def pods_pod_metrics(reading: PodsReading) -> dict[str, PodMetric]:
    """PodMetricsInfo from a custom.metrics.k8s.io MetricValueList."""
    table = reading.columns()
    if table is not None:  # a source's compact reading, read without making items
        if not table.names:
            raise MetricComputationError("no metrics returned from custom metrics API")
        _last_names[0] = table.names
        return {
            pod: PodMetric(value, stamp, window)
            for pod, value, stamp, window in zip(table.names, table.values, table.stamps, table.windows, strict=True)
        }
    if not reading.items:
        raise MetricComputationError("no metrics returned from custom metrics API")
    return {item.pod: PodMetric(item.value, item.timestamp, item.window_seconds) for item in reading.items}


# ---------------------------------------------------------------------------------------------------
# Pod grouping and requests
# ---------------------------------------------------------------------------------------------------


def group_pods(
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    resource: str,
    *,
    settings: Settings,
    now: datetime,
) -> tuple[int, set[str], set[str], set[str]]:
    """groupPods: (ready_pod_count, unready, missing, ignored), with the CPU readiness rules for cpu."""
    ready_count = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    cpu = resource == "cpu"
    # start + period > now, as upstream writes it, is start > now - period: one subtraction, not one per pod.
    initializing_after = now - timedelta(seconds=settings.cpu_initialization_period_seconds)
    readiness_delay = timedelta(seconds=settings.initial_readiness_delay_seconds)
    for pod in pods:
        # Deleted pods and pods that ended (Failed, or Succeeded since kubernetes/kubernetes#141302) count for
        # nothing: a finished pod would otherwise be "missing" and pull the average towards the target.
        if pod.deleted or pod.phase in _ENDED:
            ignored.add(pod.name)
            continue
        if pod.phase == _PENDING:
            unready.add(pod.name)
            continue
        metric = metrics.get(pod.name)
        if metric is None:
            missing.add(pod.name)
            continue
        if cpu:
            if pod.ready is None or pod.start_time is None:
                is_unready = True
            else:
                transition = pod.ready_transition or _ZERO_TIME
                if pod.start_time > initializing_after:
                    # Still within the initialization period: ignore the sample if the pod is unready or
                    # one metric window has not passed since its last readiness transition.
                    is_unready = pod.ready == "False" or metric.timestamp < transition + timedelta(
                        seconds=metric.window_seconds
                    )
                else:
                    # Ignore the metric if the pod is unready and has never been ready.
                    is_unready = pod.ready == "False" and pod.start_time + readiness_delay > transition
            if is_unready:
                unready.add(pod.name)
                continue
        ready_count += 1
    return ready_count, unready, missing, ignored


def _request_containers(pod: Pod) -> Sequence[Container]:
    """The containers whose requests count: regular ones, then restartable (sidecar) init containers."""
    if not pod.init_containers:
        return pod.containers  # most pods: no list made per pod
    return list(pod.containers) + [c for c in pod.init_containers if c.restart_policy_always]


def _aggregate_container_request(pod: Pod, resource: str) -> int | None:
    """resourcehelpers.AggregateContainerRequests for one resource: the running set (containers and
    sidecars) or, when larger, an init container with the sidecars started before it; None when no
    container requests the resource."""
    seen = False
    running = 0
    for c in pod.containers:
        if resource in c.requests:
            seen = True
            running += c.requests[resource]
    sidecars = 0
    init_peak = 0
    for c in pod.init_containers:
        request = c.requests.get(resource)
        seen = seen or request is not None
        if c.restart_policy_always:
            running += request or 0
            sidecars += request or 0
            init_peak = max(init_peak, sidecars)
        else:
            init_peak = max(init_peak, (request or 0) + sidecars)
    return max(running, init_peak) if seen else None


def calculate_requests(pods: Sequence[Pod], container: str, resource: str) -> dict[str, int]:
    """calculateRequests: per pod, the pod-level request, one container's, or the containers' sum.

    Restartable (sidecar) init containers count with the regular containers.
    """
    requests: dict[str, int] = {}
    for pod in pods:
        if container == "" and pod.pod_requests:
            # calculatePodLevelRequests via resourcehelpers.PodRequests: the pod-level request, else the
            # containers' aggregate for a resource the pod level does not set.
            if resource in pod.pod_requests:
                requests[pod.name] = pod.pod_requests[resource]
                continue
            aggregate = _aggregate_container_request(pod, resource)
            if aggregate is None:
                raise MetricComputationError(f"missing pod-level request for {resource} in Pod {pod.name}")
            requests[pod.name] = aggregate
            continue
        candidates = _request_containers(pod)
        total = 0
        found = False
        for c in candidates:
            if container in ("", c.name):
                if resource not in c.requests:
                    raise MetricComputationError(
                        f"missing request for {resource} in container {c.name} of Pod {pod.name}"
                    )
                total += c.requests[resource]
            if container == c.name:
                found = True
                break
        if container and not found:
            raise MetricComputationError(f"container {container} not found in Pod {pod.name}")
        requests[pod.name] = total
    return requests


# The names column of the reading read last (`resource_pod_metrics`, `pods_pod_metrics`): a ready group equal to it
# (every pod ready and measured, the common case) is kept as that same tuple, one per target instead of three at
# 1,000s of targets (docs/performance.md). A cache, never an input: a group equal to it is the same value.
_last_names: list[tuple[str, ...]] = [()]


def _groups(ready: Sequence[Pod], unready: set[str], missing: set[str], ignored: set[str]) -> PodGroups:
    excluded = unready | missing | ignored
    if excluded:
        names = tuple(sorted(p.name for p in ready if p.name not in excluded))
    else:  # every pod ready and measured, the common case: no test per pod (twice per decision)
        names = tuple(sorted([p.name for p in ready]))
    last = _last_names[0]
    return PodGroups(
        ready=last if names == last else names,
        unready=_sorted(unready),
        missing=_sorted(missing),
        ignored=_sorted(ignored),
    )


def _sorted(names: set[str]) -> tuple[str, ...]:
    return tuple(sorted(names)) if names else ()


# ---------------------------------------------------------------------------------------------------
# Usage ratios (metrics/utilization.go)
# ---------------------------------------------------------------------------------------------------


def resource_utilization_ratio(
    metrics: Mapping[str, PodMetric], requests: Mapping[str, int], target_utilization: int
) -> tuple[float, int, int]:
    """GetResourceUtilizationRatio: (ratio, utilization percent, raw average value)."""
    metrics_total = 0
    requests_total = 0
    entries = 0
    for name, metric in metrics.items():
        if name not in requests:
            continue  # extraneous metrics: requests are checked elsewhere
        metrics_total += metric.value
        requests_total += requests[name]
        entries += 1
    if requests_total == 0:
        raise MetricComputationError("no metrics returned matched known pods")
    utilization = max(min(trunc_div(metrics_total * 100, requests_total), MAX_INT32), -MAX_INT32 - 1)
    return fdiv(utilization, target_utilization), utilization, trunc_div(metrics_total, entries)


def metric_usage_ratio(metrics: Mapping[str, PodMetric], target_usage: int) -> tuple[float, int]:
    """GetMetricUsageRatio: (ratio, average usage), over every metric, extraneous ones included."""
    total = sum(m.value for m in metrics.values())
    usage = trunc_div(total, len(metrics))
    return fdiv(usage, target_usage), usage


# ---------------------------------------------------------------------------------------------------
# Per-pod metrics: Resource (Utilization / AverageValue) and Pods
# ---------------------------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True)
class _Grouped:
    ready_count: int
    unready: set[str]
    missing: set[str]
    ignored: set[str]
    groups: PodGroups


def _group_and_drop(
    pods: Sequence[Pod], metrics: dict[str, PodMetric], resource: str, *, settings: Settings, now: datetime
) -> _Grouped:
    """Group the pods and drop the samples of ignored and unready ones; errors when nothing is left."""
    if not pods:
        raise _no_pods()
    ready_count, unready, missing, ignored = group_pods(pods, metrics, resource, settings=settings, now=now)
    for name in ignored | unready:
        metrics.pop(name, None)
    groups = _groups(pods, unready, missing, ignored)
    if not metrics:
        raise MetricComputationError("did not receive metrics for targeted pods (pods might be unready)", pods=groups)
    return _Grouped(ready_count, unready, missing, ignored, groups)


def _fill_in(
    metrics: dict[str, PodMetric],
    missing: set[str],
    unready: set[str],
    usage_ratio: float,
    scale_down_value: Callable[[str], int],
    now: datetime,
) -> None:
    """The rebalancing step: missing pods at `scale_down_value` on a scale-down and at 0 on a scale-up;
    unready pods at 0 on a scale-up."""
    if usage_ratio < 1.0:
        for name in missing:
            metrics[name] = PodMetric(scale_down_value(name), now, 0)
    elif usage_ratio > 1.0:
        for name in missing | unready:
            metrics[name] = PodMetric(0, now, 0)


def _no_pods() -> MetricComputationError:
    return MetricComputationError("no pods returned by selector while calculating replica count")


def resource_replicas(
    *,
    current_replicas: int,
    target_utilization: int,
    resource: str,
    container: str,
    metrics: dict[str, PodMetric],
    pods: Sequence[Pod],
    tolerances: Tolerances,
    settings: Settings,
    now: datetime,
    missing_pods: MissingPods = MissingPods.REBALANCE,
) -> Calculation:
    """GetResourceReplicas: a Utilization target, in integer percent of the pods' requests."""
    grouped = _group_and_drop(pods, metrics, resource, settings=settings, now=now)
    ready_count, unready, missing = grouped.ready_count, grouped.unready, grouped.missing
    try:
        requests = calculate_requests(pods, container, resource)
        usage_ratio, utilization, raw = resource_utilization_ratio(metrics, requests, target_utilization)
    except MetricComputationError as err:
        raise MetricComputationError(err.message, pods=grouped.groups) from err
    # The fields every outcome shares, bound once: each path below makes the one Calculation it returns (a base
    # Calculation copied by dataclasses.replace cost two constructions and replace's walk over the fields).
    outcome = partial(
        Calculation,
        usage=utilization,
        raw_usage=raw,
        usage_ratio=usage_ratio,
        pods=grouped.groups,
        ready_pod_count=ready_count,
    )

    scale_up_with_unready = bool(unready) and usage_ratio > 1.0
    if not scale_up_with_unready and not missing:
        return _direct(outcome, current_replicas, usage_ratio, ready_count, tolerances)
    if held := _hold_for_missing(outcome, current_replicas, missing, usage_ratio, tolerances, missing_pods):
        return held

    # On a scale-down, missing pods count as using 100% of their request, or the target where the target is
    # above 100%.
    fallback = max(100, target_utilization)
    _fill_in(metrics, missing, unready, usage_ratio, lambda name: trunc_div(requests[name] * fallback, 100), now)

    new_ratio, _, _ = resource_utilization_ratio(metrics, requests, target_utilization)
    return _rebalanced(outcome, current_replicas, usage_ratio, new_ratio, len(metrics), tolerances)


def _rebalanced(
    outcome: partial[Calculation],
    current_replicas: int,
    usage_ratio: float,
    new_ratio: float,
    counted: int,
    tolerances: Tolerances,
) -> Calculation:
    """The tail shared by GetResourceReplicas and calcPlainMetricReplicas after rebalancing."""
    if (
        tolerances.is_within(new_ratio)
        or (usage_ratio < 1.0 and new_ratio > 1.0)
        or (usage_ratio > 1.0 and new_ratio < 1.0)
    ):
        return outcome(
            replicas=current_replicas,
            rebalanced_usage_ratio=new_ratio,
            within_tolerance=True,
            note=(
                f"rebalanced usage ratio {new_ratio:g} is within tolerance or would reverse the "
                f"direction of {usage_ratio:g}: hold"
            ),
        )
    new_replicas = saturated_ceil_int32(new_ratio * counted)
    if (new_ratio < 1.0 and new_replicas > current_replicas) or (new_ratio > 1.0 and new_replicas < current_replicas):
        return outcome(
            replicas=current_replicas,
            rebalanced_usage_ratio=new_ratio,
            within_tolerance=False,
            note=f"ceil({new_ratio:g} * {counted}) = {new_replicas} would reverse the direction: hold",
        )
    return outcome(
        replicas=new_replicas,
        rebalanced_usage_ratio=new_ratio,
        within_tolerance=False,
        note=f"rebalanced: ceil({new_ratio:g} * {counted} pods counted) = {new_replicas}",
    )


def _hold_for_missing(
    outcome: partial[Calculation],
    current_replicas: int,
    missing: set[str],
    usage_ratio: float,
    tolerances: Tolerances,
    missing_pods: MissingPods,
) -> Calculation | None:
    """missingPods Hold: a proposal that would scale down while some pods have no sample keeps the current
    count instead of assuming what the missing pods use. Not an HPA rule; None leaves the HPA's rebalancing."""
    if missing_pods != MissingPods.HOLD or not missing or usage_ratio >= 1.0 or tolerances.is_within(usage_ratio):
        return None
    return outcome(
        replicas=current_replicas,
        within_tolerance=False,
        note=(
            f"{len(missing)} pod(s) without a sample ({', '.join(sorted(missing))}) and a usage ratio of "
            f"{usage_ratio:g}: no scale-down until every pod reports (missingPods: Hold)"
        ),
    )


def _direct(
    outcome: partial[Calculation], current_replicas: int, usage_ratio: float, ready_count: int, tolerances: Tolerances
) -> Calculation:
    """No unready pods to rebalance on a scale-up and no missing pods: tolerance, then the ready pods."""
    if tolerances.is_within(usage_ratio):
        return outcome(replicas=current_replicas, within_tolerance=True, note="usage ratio within tolerance")
    replicas = saturated_ceil_int32(usage_ratio * ready_count)
    return outcome(
        replicas=replicas,
        within_tolerance=False,
        note=f"ceil({usage_ratio:g} * {ready_count} ready pods) = {replicas}",
    )


def plain_metric_replicas(
    *,
    current_replicas: int,
    target_usage: int,
    resource: str,
    metrics: dict[str, PodMetric],
    pods: Sequence[Pod],
    tolerances: Tolerances,
    settings: Settings,
    now: datetime,
    missing_pods: MissingPods = MissingPods.REBALANCE,
) -> Calculation:
    """calcPlainMetricReplicas: an AverageValue target over the pods (Resource AverageValue and Pods)."""
    grouped = _group_and_drop(pods, metrics, resource, settings=settings, now=now)
    ready_count, unready, missing = grouped.ready_count, grouped.unready, grouped.missing
    usage_ratio, usage = metric_usage_ratio(metrics, target_usage)
    outcome = partial(  # the fields every outcome shares (as in resource_replicas)
        Calculation, usage=usage, usage_ratio=usage_ratio, pods=grouped.groups, ready_pod_count=ready_count
    )

    scale_up_with_unready = bool(unready) and usage_ratio > 1.0
    if not scale_up_with_unready and not missing:
        return _direct(outcome, current_replicas, usage_ratio, ready_count, tolerances)
    if held := _hold_for_missing(outcome, current_replicas, missing, usage_ratio, tolerances, missing_pods):
        return held

    # On a scale-down, missing pods count as using exactly the target.
    _fill_in(metrics, missing, unready, usage_ratio, lambda _name: target_usage, now)

    new_ratio, _ = metric_usage_ratio(metrics, target_usage)
    return _rebalanced(outcome, current_replicas, usage_ratio, new_ratio, len(metrics), tolerances)
