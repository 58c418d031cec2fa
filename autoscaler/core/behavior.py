"""The HPA's normalization: stabilization windows, rate limits and min/max, with and without `behavior`.

Held beside horizontal.go (Kubernetes 1.36): normalizeDesiredReplicas and its helpers for HPAs without
`behavior` (the legacy path), normalizeDesiredReplicasWithBehaviors and its helpers otherwise, and
storeScaleEvent. The HPA keeps recommendations and scale events in controller maps behind locks; here they
are a `BehaviorState` value passed in and returned, and the clock is the `now` argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from autoscaler.core.gomath import MAX_INT32, MIN_INT32, saturated_int32
from autoscaler.core.types import (
    Behavior,
    BehaviorState,
    Recommendation,
    ScaleEvent,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
    Settings,
)
from autoscaler.core.values import quick_init

# Reasons and messages of the AbleToScale and ScalingLimited conditions (horizontal.go).
READY_FOR_NEW_SCALE = ("ReadyForNewScale", "recommended size matches current size")
SCALE_UP_STABILIZED = (
    "ScaleUpStabilized",
    "recent recommendations were lower than current one, applying the lowest recent recommendation",
)
SCALE_DOWN_STABILIZED = (
    "ScaleDownStabilized",
    "recent recommendations were higher than current one, applying the highest recent recommendation",
)
SCALE_UP_LIMIT = (
    "ScaleUpLimit",
    "the desired replica count is increasing faster than the maximum scale rate",
)
SCALE_DOWN_LIMIT = (
    "ScaleDownLimit",
    "the desired replica count is decreasing faster than the maximum scale rate",
)
TOO_MANY_REPLICAS = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
TOO_FEW_REPLICAS = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
DESIRED_WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")


@quick_init
@dataclass(frozen=True, slots=True)
class PolicyLimit:
    """One rate policy evaluated: the replicas at the start of its period and the bound it allows."""

    type: ScalingPolicyType
    value: int
    period_seconds: int
    period_start_replicas: int
    limit: int


@quick_init
@dataclass(frozen=True, slots=True)
class Stabilization:
    """What the stabilization window(s) saw and what they made of the proposal."""

    proposal: int
    stabilized: int
    scale_up_window_seconds: float | None  # None on the legacy path (no scale-up window)
    scale_down_window_seconds: float
    # Recommendations inside each window (the new proposal included), as (replicas, timestamp).
    scale_up_window: tuple[Recommendation, ...]
    scale_down_window: tuple[Recommendation, ...]
    reason: str
    message: str


@quick_init
@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds applied after stabilization, and which of them clipped the result."""

    desired: int
    reason: str
    message: str
    min_allowed: int | None
    max_allowed: int | None
    clipped: bool
    policies: tuple[PolicyLimit, ...] = ()
    select_policy: SelectPolicy | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Normalized:
    desired: int
    stabilization: Stabilization
    limits: Limits
    recommendations: tuple[Recommendation, ...]


# ---------------------------------------------------------------------------------------------------
# Without behavior (the legacy path)
# ---------------------------------------------------------------------------------------------------


def normalize_legacy(
    *,
    current_replicas: int,
    proposal: int,
    min_replicas: int,
    max_replicas: int,
    recommendations: tuple[Recommendation, ...],
    settings: Settings,
    now: datetime,
) -> Normalized:
    """normalizeDesiredReplicas: downscale stabilization, then the scale-up limit and min/max."""
    cutoff = now - timedelta(seconds=settings.downscale_stabilization_window_seconds)
    highest = proposal
    old_index: int | None = None
    window: list[Recommendation] = []
    for i, rec in enumerate(recommendations):
        if rec.timestamp < cutoff:
            old_index = i
        else:
            window.append(rec)
            highest = max(highest, rec.replicas)
    new_rec = Recommendation(proposal, now)
    recs = list(recommendations)
    if old_index is not None:
        recs[old_index] = new_rec
    else:
        recs.append(new_rec)

    reason, message = SCALE_DOWN_STABILIZED if highest != proposal else READY_FOR_NEW_SCALE
    stabilization = Stabilization(
        proposal=proposal,
        stabilized=highest,
        scale_up_window_seconds=None,
        scale_down_window_seconds=settings.downscale_stabilization_window_seconds,
        scale_up_window=(),
        scale_down_window=(*window, new_rec),
        reason=reason,
        message=message,
    )

    # convertDesiredReplicasWithRules
    scale_up_limit = saturated_int32(
        max(settings.scale_up_limit_factor * float(current_replicas), settings.scale_up_limit_minimum)
    )
    if max_replicas > scale_up_limit:
        max_allowed, (limit_reason, limit_message) = scale_up_limit, SCALE_UP_LIMIT
    else:
        max_allowed, (limit_reason, limit_message) = max_replicas, TOO_MANY_REPLICAS
    if highest < min_replicas:
        desired, (limit_reason, limit_message) = min_replicas, TOO_FEW_REPLICAS
    elif highest > max_allowed:
        desired = max_allowed
    else:
        desired, (limit_reason, limit_message) = highest, DESIRED_WITHIN_RANGE
    limits = Limits(
        desired=desired,
        reason=limit_reason,
        message=limit_message,
        min_allowed=min_replicas,
        max_allowed=max_allowed,
        clipped=desired != highest,
    )
    return Normalized(desired, stabilization, limits, tuple(recs))


# ---------------------------------------------------------------------------------------------------
# With behavior
# ---------------------------------------------------------------------------------------------------


def stabilize_with_behaviors(
    *,
    current_replicas: int,
    proposal: int,
    behavior: Behavior,
    recommendations: tuple[Recommendation, ...],
    settings: Settings,
    now: datetime,
) -> tuple[Stabilization, tuple[Recommendation, ...]]:
    """stabilizeRecommendationWithBehaviors: the lowest recommendation of the scale-up window and the
    highest of the scale-down window bound the proposal; the proposal joins the history."""
    up_seconds = float(behavior.scale_up.stabilization_window_seconds or 0)
    configured_down = behavior.scale_down.stabilization_window_seconds
    # maybeInitScaleDownStabilizationWindow: unset means the controller-wide default, in whole seconds.
    down_seconds = float(
        configured_down if configured_down is not None else int(settings.downscale_stabilization_window_seconds)
    )
    up_cutoff = now - timedelta(seconds=up_seconds)
    down_cutoff = now - timedelta(seconds=down_seconds)

    up_recommendation = proposal
    down_recommendation = proposal
    old_index: int | None = None
    up_window: list[Recommendation] = []
    down_window: list[Recommendation] = []
    for i, rec in enumerate(recommendations):
        if rec.timestamp > up_cutoff:
            up_recommendation = min(rec.replicas, up_recommendation)
            up_window.append(rec)
        if rec.timestamp > down_cutoff:
            down_recommendation = max(rec.replicas, down_recommendation)
            down_window.append(rec)
        if rec.timestamp < up_cutoff and rec.timestamp < down_cutoff:
            old_index = i

    stabilized = current_replicas
    stabilized = max(stabilized, up_recommendation)
    stabilized = min(stabilized, down_recommendation)

    new_rec = Recommendation(proposal, now)
    recs = list(recommendations)
    if old_index is not None:
        recs[old_index] = new_rec
    else:
        recs.append(new_rec)

    if stabilized == proposal:
        reason, message = READY_FOR_NEW_SCALE
    elif proposal >= current_replicas:
        reason, message = SCALE_UP_STABILIZED
    else:
        reason, message = SCALE_DOWN_STABILIZED
    stabilization = Stabilization(
        proposal=proposal,
        stabilized=stabilized,
        scale_up_window_seconds=up_seconds,
        scale_down_window_seconds=down_seconds,
        scale_up_window=(*up_window, new_rec),
        scale_down_window=(*down_window, new_rec),
        reason=reason,
        message=message,
    )
    return stabilization, tuple(recs)


def replicas_change_per_period(period_seconds: int, events: tuple[ScaleEvent, ...], now: datetime) -> int:
    """getReplicasChangePerPeriod: the replicas changed by events strictly after now - period."""
    if not events:
        return 0  # no cutoff to compute (for each policy, each direction, each decision)
    cutoff = now - timedelta(seconds=period_seconds)
    return sum(e.replica_change for e in events if e.timestamp > cutoff)


def _policy_limits(
    current_replicas: int, state: BehaviorState, rules: ScalingRules, now: datetime, *, up: bool
) -> tuple[PolicyLimit, ...]:
    limits = []
    for policy in rules.policies:
        added = replicas_change_per_period(policy.period_seconds, state.scale_up_events, now)
        deleted = replicas_change_per_period(policy.period_seconds, state.scale_down_events, now)
        start = current_replicas - added + deleted
        if policy.type == ScalingPolicyType.PODS:
            proposed = start + policy.value if up else start - policy.value
        elif up:
            # Rounded up, or a small target could never grow (calculateScaleUpLimitWithScalingRules).
            proposed = saturated_int32(math.ceil(float(start) * (1 + float(policy.value) / 100)))
        else:
            proposed = saturated_int32(float(start) * (1 - float(policy.value) / 100))
        limits.append(PolicyLimit(policy.type, policy.value, policy.period_seconds, start, proposed))
    return tuple(limits)


def scale_up_limit(
    current_replicas: int, state: BehaviorState, rules: ScalingRules, now: datetime
) -> tuple[int, tuple[PolicyLimit, ...]]:
    """calculateScaleUpLimitWithScalingRules."""
    if rules.select_policy == SelectPolicy.DISABLED:
        return current_replicas, ()
    limits = _policy_limits(current_replicas, state, rules, now, up=True)
    if rules.select_policy == SelectPolicy.MIN:
        return min([MAX_INT32, *(p.limit for p in limits)]), limits
    return max([MIN_INT32, *(p.limit for p in limits)]), limits


def scale_down_limit(
    current_replicas: int, state: BehaviorState, rules: ScalingRules, now: datetime
) -> tuple[int, tuple[PolicyLimit, ...]]:
    """calculateScaleDownLimitWithBehaviors."""
    if rules.select_policy == SelectPolicy.DISABLED:
        return current_replicas, ()
    limits = _policy_limits(current_replicas, state, rules, now, up=False)
    if rules.select_policy == SelectPolicy.MIN:
        return max([MIN_INT32, *(p.limit for p in limits)]), limits
    return min([MAX_INT32, *(p.limit for p in limits)]), limits


def limit_with_behaviors(
    *,
    current_replicas: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    behavior: Behavior,
    state: BehaviorState,
    now: datetime,
) -> Limits:
    """convertDesiredReplicasWithBehaviorRate: the rate policies, then min and max."""
    if desired > current_replicas:
        rules = behavior.scale_up
        limit, policies = scale_up_limit(current_replicas, state, rules, now)
        limit = max(limit, current_replicas)  # no further scale-up until old events age out
        if max_replicas > limit:
            bound, (reason, message) = limit, SCALE_UP_LIMIT
        else:
            bound, (reason, message) = max_replicas, TOO_MANY_REPLICAS
        clipped = desired > bound
    elif desired < current_replicas:
        rules = behavior.scale_down
        limit, policies = scale_down_limit(current_replicas, state, rules, now)
        limit = min(limit, current_replicas)  # no further scale-down until old events age out
        if min_replicas < limit:
            bound, (reason, message) = limit, SCALE_DOWN_LIMIT
        else:
            bound, (reason, message) = min_replicas, TOO_FEW_REPLICAS
        clipped = desired < bound
    else:
        return Limits(desired, *DESIRED_WITHIN_RANGE, min_allowed=None, max_allowed=None, clipped=False)
    if not clipped:
        reason, message = DESIRED_WITHIN_RANGE
    up = desired > current_replicas
    return Limits(
        desired=bound if clipped else desired,
        reason=reason,
        message=message,
        min_allowed=None if up else bound,
        max_allowed=bound if up else None,
        clipped=clipped,
        policies=policies,
        select_policy=rules.select_policy,
    )


def normalize_with_behaviors(
    *,
    current_replicas: int,
    proposal: int,
    min_replicas: int,
    max_replicas: int,
    behavior: Behavior,
    state: BehaviorState,
    recommendations: tuple[Recommendation, ...],
    settings: Settings,
    now: datetime,
) -> Normalized:
    """normalizeDesiredReplicasWithBehaviors."""
    stabilization, recs = stabilize_with_behaviors(
        current_replicas=current_replicas,
        proposal=proposal,
        behavior=behavior,
        recommendations=recommendations,
        settings=settings,
        now=now,
    )
    limits = limit_with_behaviors(
        current_replicas=current_replicas,
        desired=stabilization.stabilized,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        behavior=behavior,
        state=state,
        now=now,
    )
    return Normalized(limits.desired, stabilization, limits, recs)


# ---------------------------------------------------------------------------------------------------
# Scale events
# ---------------------------------------------------------------------------------------------------


def _longest_period(policies: tuple[ScalingPolicy, ...]) -> int:
    return max([0, *(p.period_seconds for p in policies)])


def _record(events: tuple[ScaleEvent, ...], change: int, longest: int, now: datetime) -> tuple[ScaleEvent, ...]:
    cutoff = now - timedelta(seconds=longest)
    marked = [ScaleEvent(e.replica_change, e.timestamp, True) if e.timestamp < cutoff else e for e in events]
    new_event = ScaleEvent(change, now, False)
    outdated = [i for i, event in enumerate(marked) if event.outdated]
    if outdated:
        marked[outdated[-1]] = new_event  # the last outdated slot is reused in place, as upstream does
        return tuple(marked)
    return (*marked, new_event)


def store_scale_event(
    behavior: Behavior | None, state: BehaviorState, *, previous: int, new: int, now: datetime
) -> BehaviorState:
    """storeScaleEvent: remember a scale write for the rate policies (only when `behavior` is set)."""
    if behavior is None:
        return state
    if new > previous:
        up = _record(state.scale_up_events, new - previous, _longest_period(behavior.scale_up.policies), now)
        return state.with_scale_events(up, state.scale_down_events)
    down = _record(state.scale_down_events, previous - new, _longest_period(behavior.scale_down.policies), now)
    return state.with_scale_events(state.scale_up_events, down)
