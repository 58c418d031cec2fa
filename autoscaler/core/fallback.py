"""Fallback when a metric fails: what a spec's `fallback` does after N consecutive failed evaluations of a metric.

An extension (docs/spec.md, "fallback"); the HPA only holds. Two passes around the HPA's metrics path:

- `prepare` (before the metrics are computed): counts each metric's consecutive failed evaluations (a reading
  that is a `MetricFailure`: Prometheus down, an error, an empty, NaN, infinite or stale answer) in the
  behaviour state, and for `lastKnownGood` puts the last good value in place of a failed reading while it is
  younger than the staleness budget;
- `apply` (after the proposals): `replicas` proposes the fixed count, `scaleUpOnly` proposes at least the
  fixed count and never fewer than the current replicas; `hold` and an expired `lastKnownGood` leave the HPA's
  rule (a failed metric never scales down; all failed holds).

A failed reading never counts as a value, least of all as zero. Time is the `now` passed in. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    ContainerUsage,
    ExternalReading,
    MetricFailure,
    MetricHealth,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    ObjectReading,
    Pod,
    PodsReading,
    PodUsage,
    PodValue,
    ResourceReading,
)

# The default window a substituted Resource or Pods sample covers (metricServerDefaultMetricWindow).
_WINDOW_SECONDS = 60.0


class FallbackAction(StrEnum):
    HOLD = "hold"
    SCALE_UP_ONLY = "scaleUpOnly"
    REPLICAS = "replicas"
    LAST_KNOWN_GOOD = "lastKnownGood"


@dataclass(frozen=True, slots=True)
class Fallback:
    """A spec's `fallback`: after `failure_threshold` consecutive failed evaluations of a metric, `action`."""

    failure_threshold: int = 3
    action: FallbackAction = FallbackAction.HOLD
    replicas: int | None = None  # required by `replicas` and `scaleUpOnly`
    staleness_seconds: int = 600  # `lastKnownGood`: the oldest value substituted
    # After a fallback ends, no scale-down until the metric has been readable this long: the first readings
    # after an outage come from windows the outage emptied (a rate over a few new samples reads low).
    recovery_seconds: int = 120


def metric_key(spec: MetricSpec) -> str:
    """A metric's identity in the stored state, so a reordered or edited spec never inherits another's memory."""
    described = spec.described_object
    parts = [
        str(spec.type),
        spec.resource_name,
        spec.container,
        spec.metric_name,
        f"{described.kind}/{described.name}" if described else "",
        repr(spec.metric_selector) if spec.metric_selector else "",
    ]
    return "|".join(parts)


def describe_metric(index: int, spec: MetricSpec) -> str:
    """ "metric 0 (queue_depth)", as summaries, conditions and events name a metric."""
    name = spec.metric_name or spec.resource_name
    return f"metric {index} ({name})"


def observed_value(spec: MetricSpec, reading: MetricInput) -> int | None:
    """A reading's value as scale-to-zero and `lastKnownGood` compare and keep it, in milli-units, or None.

    Object: the value; External: the sum of the values (the whole backlog, not per replica); Pods: the
    average over the pods that have a sample; Resource and ContainerResource: the average usage per pod (of the
    named container). None for a failure, or for a reading with no value (no series, no pods).
    """
    if isinstance(reading, MetricFailure):
        return None
    if isinstance(reading, ObjectReading):
        return reading.value
    if isinstance(reading, ExternalReading):
        return sum(reading.values) if reading.values else None
    if isinstance(reading, PodsReading):
        if not reading.items:
            return None
        return sum(item.value for item in reading.items) // len(reading.items)
    usages = []
    for item in reading.pods:
        containers = [c for c in item.containers if not spec.container or c.name == spec.container]
        values = [c.usage.get(spec.resource_name) for c in containers]
        if containers and all(v is not None for v in values):
            usages.append(sum(v for v in values if v is not None))
    if not usages:
        return None
    return sum(usages) // len(usages)


def synthetic_reading(spec: MetricSpec, value: int, *, pods: Sequence[Pod], now: datetime) -> MetricInput:
    """A reading that carries `value` as `observed_value` reads it: the last good value put in place of a failure."""
    match spec.type:
        case MetricSourceType.OBJECT:
            return ObjectReading(value=value, timestamp=now)
        case MetricSourceType.EXTERNAL:
            return ExternalReading(values=(value,), timestamp=now)
        case MetricSourceType.PODS:
            return PodsReading(items=tuple(PodValue(p.name, value, now, _WINDOW_SECONDS) for p in pods))
    container = spec.container or "main"
    return ResourceReading(
        pods=tuple(
            PodUsage(p.name, now, _WINDOW_SECONDS, (ContainerUsage(container, {spec.resource_name: value}),))
            for p in pods
        )
    )


@dataclass(frozen=True, slots=True)
class MetricFallback:
    """One metric after `prepare`: its failure count, whether its fallback is active, and what stood in."""

    index: int
    name: str
    failed: bool
    failures: int
    active: bool
    started: bool  # active this evaluation, not the one before
    ended: bool  # active the evaluation before, readable again now
    substituted: int | None = None  # the last good value put in place of the failed reading
    substituted_age_seconds: float | None = None
    expired: bool = False  # lastKnownGood had no value young enough: the HPA's hold
    # Readable again after its fallback, for this many seconds (None: not recovering): no scale-down yet.
    recovering_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class Prepared:
    """The readings to compute from (with any last good values in place) and the updated behaviour state."""

    metrics: tuple[MetricInput, ...]
    state: BehaviorState
    per_metric: tuple[MetricFallback, ...]

    @property
    def active(self) -> tuple[MetricFallback, ...]:
        return tuple(m for m in self.per_metric if m.active)


def prepare(
    spec: AutoscalerSpec,
    fallback: Fallback,
    *,
    metrics: Sequence[MetricInput],
    state: BehaviorState,
    pods: Sequence[Pod],
    now: datetime,
) -> Prepared:
    """Count failed evaluations, keep last good values, and substitute them for `lastKnownGood`."""
    previous = {h.key: h for h in state.metric_health}
    health: list[MetricHealth] = []
    out: list[MetricInput] = []
    per_metric: list[MetricFallback] = []
    for index, (metric, reading) in enumerate(zip(spec.metrics, metrics, strict=True)):
        key = metric_key(metric)
        before = previous.get(key, MetricHealth(key=key))
        value = observed_value(metric, reading)
        failed = isinstance(reading, MetricFailure)
        was_active = before.failures >= fallback.failure_threshold
        if not failed:
            good = (value, now) if value is not None else (before.last_good, before.last_good_time)
            recovered_at = now if was_active else before.recovered_at
            if recovered_at is not None and (now - recovered_at).total_seconds() >= fallback.recovery_seconds:
                recovered_at = None
            health.append(
                MetricHealth(key=key, failures=0, last_good=good[0], last_good_time=good[1], recovered_at=recovered_at)
            )
            out.append(reading)
            per_metric.append(
                MetricFallback(
                    index,
                    describe_metric(index, metric),
                    False,
                    0,
                    False,
                    False,
                    was_active,
                    recovering_seconds=(now - recovered_at).total_seconds() if recovered_at is not None else None,
                )
            )
            continue
        failures = before.failures + 1
        health.append(replace(before, failures=failures, recovered_at=None))
        active = failures >= fallback.failure_threshold
        item = MetricFallback(
            index, describe_metric(index, metric), True, failures, active, active and not was_active, False
        )
        if active and fallback.action == FallbackAction.LAST_KNOWN_GOOD:
            age = (now - before.last_good_time).total_seconds() if before.last_good_time is not None else None
            if before.last_good is not None and age is not None and 0 <= age <= fallback.staleness_seconds:
                reading = synthetic_reading(metric, before.last_good, pods=pods, now=now)
                item = replace(item, substituted=before.last_good, substituted_age_seconds=age)
            else:
                item = replace(item, expired=True)
        out.append(reading)
        per_metric.append(item)
    return Prepared(tuple(out), replace(state, metric_health=tuple(health)), tuple(per_metric))


@dataclass(frozen=True, slots=True)
class Applied:
    """What the fallback action makes of the metrics' proposal: the new proposal (None: hold) and why."""

    proposal: int | None
    reason: str


def apply(fallback: Fallback, prepared: Prepared, *, proposal: int | None, current_replicas: int) -> Applied | None:
    """`replicas` and `scaleUpOnly` while a metric's fallback is active; no scale-down while a metric recovers
    from one (every action); None when the HPA's rule stands."""
    active = prepared.active
    recovering = [m for m in prepared.per_metric if m.recovering_seconds is not None]
    if not active and recovering and proposal is not None and proposal < current_replicas:
        names = ", ".join(
            f"{m.name} readable again for {round(m.recovering_seconds or 0.0, 1):g} s" for m in recovering
        )
        return Applied(
            current_replicas,
            f"no scale-down after the fallback until the metric has been readable for {fallback.recovery_seconds} s "
            f"({names})",
        )
    if not active or fallback.replicas is None:
        return None
    names = ", ".join(m.name for m in active)
    if fallback.action == FallbackAction.REPLICAS:
        return Applied(fallback.replicas, f"fallback replicas {fallback.replicas} ({names} failing)")
    if fallback.action == FallbackAction.SCALE_UP_ONLY:
        floor = max(current_replicas, fallback.replicas)
        wanted = max(floor, proposal) if proposal is not None else floor
        return Applied(wanted, f"fallback scaleUpOnly: at least {floor} ({names} failing)")
    return None


def explain(fallback: Fallback, item: MetricFallback) -> str:
    """One metric's fallback in words: "fallback lastKnownGood for metric 0 (queue), 4 of 3 failures: ..."."""
    head = (
        f"fallback {fallback.action} for {item.name}, {item.failures} failures (threshold {fallback.failure_threshold})"
    )
    if item.substituted is not None:
        age = item.substituted_age_seconds or 0.0
        return f"{head}: last good value {item.substituted / 1000:g} from {round(age, 1):g} s ago"
    if item.expired:
        return f"{head}: no good value within {fallback.staleness_seconds} s, holding as the HPA does"
    if fallback.action in (FallbackAction.REPLICAS, FallbackAction.SCALE_UP_ONLY):
        return f"{head}: {fallback.action} {fallback.replicas}"
    return f"{head}: holding as the HPA does"
