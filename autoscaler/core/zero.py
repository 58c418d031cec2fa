"""Scale to zero and back: activation thresholds, the cooldown before zero, the idle replica count.

An extension (docs/spec.md, "scaleToZero") on top of the HPAScaleToZero rules of decision.py (`ZeroRules`):
a spec with `scaleToZero` opts in whatever the controller-wide gate. A metric is *active* when its value
(`fallback.observed_value`: Object value, External sum, Pods or Resource average) is above its activation
threshold (0 by default). The rules:

- at 0 replicas (a zero the autoscaler set: ScaledToZero=True; any zero with `wake_from_manual_zero`), the target
  leaves 0 only when a metric is active, and then for at least 1 replica; otherwise it stays at 0 whatever the
  proposals say;
- above 0, the metrics path never goes below 1; the target goes to `idle_replicas` only when every metric has
  been readable and at or below its threshold for the whole cooldown (`idle_since` in the behaviour state is
  the first evaluation of that idle stretch). A failed metric is never read as idle: it restarts the cooldown.

Time is the `now` passed in. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from autoscaler.core.behavior import DESIRED_WITHIN_RANGE, TOO_FEW_REPLICAS, Limits
from autoscaler.core.fallback import describe_metric, observed_value
from autoscaler.core.queue import ExtraResult
from autoscaler.core.types import MetricFailure, MetricInput, MetricSpec

# ScalingLimited while the floor of 1 above zero holds a target whose minReplicas is 0: no minimum limits it, the
# cooldown does (TooFewReplicas would name a minimum replica count of 1 that the spec does not have).
HELD_ABOVE_ZERO = (
    "ScaleToZeroCooldown",
    "the desired replica count is less than 1, the least above zero until every metric has been idle for the "
    "scale-to-zero cooldown",
)


@dataclass(frozen=True, slots=True)
class ScaleToZero:
    """A spec's `scaleToZero` with its per-metric activation thresholds (milli-units; None: 0)."""

    cooldown_seconds: int = 300
    idle_replicas: int = 0
    activation_thresholds: tuple[int | None, ...] = ()
    # Also leave a zero the autoscaler did not set (no ScaledToZero=True), rather than the HPA's maintenance mode.
    wake_from_manual_zero: bool = False

    def threshold(self, index: int) -> int:
        if index < len(self.activation_thresholds):
            return self.activation_thresholds[index] or 0
        return 0


@dataclass(frozen=True, slots=True)
class Activity:
    """The metrics' activity at one evaluation, and the idle stretch it continues, starts or ends."""

    active: tuple[str, ...]  # "metric 0 (queue) 12 > 0" for each active metric
    unreadable: tuple[str, ...]  # each metric that failed, or read through a fallback
    idle_since: datetime | None  # the start of the idle stretch (None: active or unreadable now)
    idle_seconds: float

    @property
    def is_active(self) -> bool:
        return bool(self.active)

    @property
    def idle(self) -> bool:
        return self.idle_since is not None


def activity(
    rules: ScaleToZero,
    *,
    specs: Sequence[MetricSpec],
    readings: Sequence[MetricInput],
    substituted: Sequence[bool],
    idle_since: datetime | None,
    now: datetime,
    extras: Sequence[ExtraResult] = (),
) -> Activity:
    """Which metrics are active, which unreadable, and how long every metric has been idle (at `now`).

    `readings` are the ones the metrics were computed from (a `lastKnownGood` value in place of a failure, with
    `substituted` True): such a value may activate, but is never proof of idleness. `extras`, the drain time's
    and the formula's proposals (core/queue.py), count as metrics with a threshold of 0: active while they
    propose a replica (a backlog, a formula above 0), unreadable when they failed.
    """
    active: list[str] = []
    unreadable: list[str] = []
    for index, (spec, reading, stood_in) in enumerate(zip(specs, readings, substituted, strict=True)):
        name = describe_metric(index, spec)
        value = observed_value(spec, reading)
        if value is None or isinstance(reading, MetricFailure):
            unreadable.append(name)
            continue
        threshold = rules.threshold(index)
        if value > threshold:
            active.append(f"{name} {value / 1000:g} > {threshold / 1000:g}")
        if stood_in:
            unreadable.append(f"{name} (last known good value)")
    for extra in extras:
        if extra.error is not None or extra.proposed_replicas is None:
            unreadable.append(extra.name)
        elif extra.proposed_replicas > 0:
            active.append(f"{extra.name} proposes {extra.proposed_replicas}")
    if active or unreadable:
        return Activity(tuple(active), tuple(unreadable), None, 0.0)
    since = idle_since if idle_since is not None and idle_since <= now else now
    return Activity((), (), since, (now - since).total_seconds())


def cooled_down(rules: ScaleToZero, found: Activity) -> bool:
    """Whether every metric has been readable and idle for the whole cooldown."""
    return found.idle and found.idle_seconds >= rules.cooldown_seconds


def explain(rules: ScaleToZero, found: Activity) -> str:
    """The activity in words, for summaries and events."""
    if found.active:
        return "active: " + ", ".join(found.active)
    if found.unreadable:
        return "not idle: unreadable " + ", ".join(found.unreadable) + " (a failed metric never counts as idle)"
    if cooled_down(rules, found):
        return (
            f"every metric at or below its activation threshold for {round(found.idle_seconds, 1):g} s "
            f"(cooldown {rules.cooldown_seconds} s)"
        )
    return (
        f"idle for {round(found.idle_seconds, 1):g} s of the {rules.cooldown_seconds} s cooldown "
        "(every metric at or below its activation threshold)"
    )


def scaling_limited(limits: Limits, *, min_replicas: int, floor: int, idle_replicas: int | None) -> Limits:
    """The limit step as the ScalingLimited condition tells it for a scaleToZero spec.

    `floor` is the least the limits were given (1 above zero when minReplicas is 0); `idle_replicas` is the
    count the cooldown sends the target to this evaluation (None: not this one). Going to the idle count is
    within minReplicas and maxReplicas, as the HPA says of 1 -> 0 at minReplicas 0 (DesiredWithinRange); the
    floor of 1 that holds it until then is the cooldown's, not a minimum replica count's.
    """
    if idle_replicas is not None:
        return Limits(idle_replicas, *DESIRED_WITHIN_RANGE, min_allowed=min_replicas, max_allowed=None, clipped=False)
    if limits.clipped and limits.reason == TOO_FEW_REPLICAS[0] and limits.desired == floor > min_replicas:
        reason, message = HELD_ABOVE_ZERO
        return replace(limits, reason=reason, message=message)
    return limits
