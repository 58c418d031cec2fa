"""One reconcile of one target, as the HPA's reconcileAutoscaler does it, returned as a `Decision` value.

Inputs: the spec, the target's Scale, its pods, one reading (or failure) per metric, the behaviour state,
the previous conditions and status, the controller settings and `now`. Output: the desired replicas,
whether to write the scale, the conditions and events the HPA would set, the status it would write, the
new behaviour state, and the explanation of every step. Held beside horizontal.go (Kubernetes 1.36):
reconcileAutoscaler, computeReplicasForMetrics, computeReplicasForMetric and the computeStatusFor* family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from autoscaler.core.behavior import (
    Limits,
    Normalized,
    Stabilization,
    normalize_legacy,
    normalize_with_behaviors,
    store_scale_event,
)
from autoscaler.core.conditions import set_condition
from autoscaler.core.errors import InvalidSpecError
from autoscaler.core.labels import SelectorSyntaxError, parse_selector
from autoscaler.core.metric import MetricResult, MetricStatus, compute_metric, tolerances_for
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    Condition,
    ConditionType,
    MetricInput,
    Pod,
    Recommendation,
    Scale,
    ScaleFailure,
    Settings,
)


@dataclass(frozen=True, slots=True)
class Event:
    """A Kubernetes Event the HPA would emit: type Normal or Warning, reason, message."""

    type: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """The autoscaler status the HPA would write after this reconcile."""

    current_replicas: int | None
    desired_replicas: int | None
    last_scale_time: datetime | None
    current_metrics: tuple[MetricStatus | None, ...] | None


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of one reconcile and its explanation.

    `desired_replicas` is the count the target should have after this reconcile (the current count when
    nothing is written); `rescale` says whether the scale would be written.
    """

    current_replicas: int | None
    desired_replicas: int | None
    rescale: bool
    min_replicas: int
    max_replicas: int
    conditions: tuple[Condition, ...]
    events: tuple[Event, ...]
    status: StatusUpdate
    state: BehaviorState
    # A one-line human summary of why.
    summary: str
    rescale_reason: str = ""
    # The combined proposal of the metrics before stabilization and limits (None when not computed).
    metric_proposal: int | None = None
    proposing_metric: str = ""
    metrics: tuple[MetricResult, ...] = ()
    invalid_metrics: int = 0
    stabilization: Stabilization | None = None
    limits: Limits | None = None
    # The error the reconcile ends with (also set when a partial failure still scales up).
    error: str | None = None


@dataclass
class _Reconcile:
    """Mutable scratch of one reconcile (never escapes `decide`)."""

    conditions: list[Condition]
    now: datetime
    events: list[Event] = field(default_factory=list)

    def condition(self, type_: str, status: str, reason: str, message: str) -> None:
        self.conditions = set_condition(self.conditions, type_, status, reason, message, now=self.now)

    def event(self, type_: str, reason: str, message: str) -> None:
        self.events.append(Event(type_, reason, message))


def decide(
    *,
    spec: AutoscalerSpec,
    scale: Scale | ScaleFailure,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    state: BehaviorState,
    settings: Settings,
    now: datetime,
    conditions: Sequence[Condition] = (),
    last_scale_time: datetime | None = None,
    previous_desired_replicas: int | None = None,
) -> Decision:
    """reconcileAutoscaler for one target, assuming the scale write (if any) succeeds."""
    if len(metrics) != len(spec.metrics):
        raise InvalidSpecError(f"{len(spec.metrics)} metrics in the spec but {len(metrics)} readings")
    run = _Reconcile(conditions=list(conditions), now=now)
    min_replicas = spec.min_replicas

    if isinstance(scale, ScaleFailure):
        message = f"the HPA controller was unable to get the target's current scale: {scale.message}"
        run.event("Warning", "FailedGetScale", scale.message)
        run.condition(ConditionType.ABLE_TO_SCALE, "False", "FailedGetScale", message)
        return Decision(
            current_replicas=None,
            desired_replicas=None,
            rescale=False,
            min_replicas=min_replicas,
            max_replicas=spec.max_replicas,
            conditions=tuple(run.conditions),
            events=tuple(run.events),
            status=StatusUpdate(None, previous_desired_replicas, last_scale_time, None),
            state=state,
            error=f"unable to get the target's current scale: {scale.message}",
            summary="the target's scale could not be read: nothing decided",
        )

    run.condition(
        ConditionType.ABLE_TO_SCALE,
        "True",
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
    )
    current = scale.spec_replicas
    # recordInitialRecommendation: a target seen for the first time starts its history at its current size.
    if state.recommendations is None:
        state = BehaviorState((Recommendation(current, now),), state.scale_up_events, state.scale_down_events)
    recommendations = state.recommendations or ()

    results: tuple[MetricResult, ...] = ()
    invalid = 0
    proposal: int | None = None
    proposing_metric = ""
    normalized: Normalized | None = None
    error: str | None = None
    rescale_reason = ""
    desired = 0

    if current == 0 and min_replicas != 0:
        run.condition(
            ConditionType.SCALING_ACTIVE,
            "False",
            "ScalingDisabled",
            "scaling is disabled since the replica count of the target is zero",
        )
        return _finish(
            run, spec, state, current, current, False, "", results, invalid, None, "", None, None,
            last_scale_time, summary="the target has 0 replicas and minReplicas > 0: autoscaling is disabled",
        )  # fmt: skip
    if current > spec.max_replicas:
        rescale_reason = "Current number of replicas above Spec.MaxReplicas"
        desired = spec.max_replicas
    elif current < min_replicas:
        rescale_reason = "Current number of replicas below Spec.MinReplicas"
        desired = min_replicas
    else:
        outcome = _compute_metrics(run, spec, scale, pods, metrics, settings, now)
        results, invalid, error = outcome.results, outcome.invalid, outcome.error
        if outcome.replicas is None:
            message = error or "no metric could be computed"
            run.event("Warning", "FailedComputeMetricsReplicas", message)
            status = StatusUpdate(
                current, previous_desired_replicas, last_scale_time, _statuses(results, outcome.selector_ok)
            )
            return Decision(
                current_replicas=current,
                desired_replicas=current,
                rescale=False,
                min_replicas=min_replicas,
                max_replicas=spec.max_replicas,
                metrics=results,
                invalid_metrics=invalid,
                conditions=tuple(run.conditions),
                events=tuple(run.events),
                status=status,
                state=state,
                error=(
                    "failed to compute desired number of replicas based on listed metrics for "
                    f"{_reference(spec)}: {message}"
                ),
                summary=_hold_summary(outcome),
            )
        proposal, proposing_metric = outcome.replicas, outcome.metric
        if proposal > desired:
            desired = proposal
        if desired > current:
            rescale_reason = f"{proposing_metric} above target"
        if desired < current:
            rescale_reason = "All metrics below target"
        if spec.behavior is None:
            normalized = normalize_legacy(
                current_replicas=current,
                proposal=desired,
                min_replicas=min_replicas,
                max_replicas=spec.max_replicas,
                recommendations=recommendations,
                settings=settings,
                now=now,
            )
        else:
            normalized = normalize_with_behaviors(
                current_replicas=current,
                proposal=desired,
                min_replicas=min_replicas,
                max_replicas=spec.max_replicas,
                behavior=spec.behavior,
                state=state,
                recommendations=recommendations,
                settings=settings,
                now=now,
            )
        run.condition(
            ConditionType.ABLE_TO_SCALE,
            "True",
            normalized.stabilization.reason,
            normalized.stabilization.message,
        )
        limits = normalized.limits
        run.condition(
            ConditionType.SCALING_LIMITED,
            "True" if limits.clipped else "False",
            limits.reason,
            limits.message,
        )
        state = BehaviorState(normalized.recommendations, state.scale_up_events, state.scale_down_events)
        desired = normalized.desired

    rescale = desired != current
    return _finish(
        run, spec, state, current, desired, rescale, rescale_reason, results, invalid, proposal,
        proposing_metric, normalized, error, last_scale_time,
    )  # fmt: skip


def _finish(
    run: _Reconcile,
    spec: AutoscalerSpec,
    state: BehaviorState,
    current: int,
    desired: int,
    rescale: bool,
    rescale_reason: str,
    results: tuple[MetricResult, ...],
    invalid: int,
    proposal: int | None,
    proposing_metric: str,
    normalized: Normalized | None,
    error: str | None,
    last_scale_time: datetime | None,
    *,
    summary: str = "",
) -> Decision:
    """The tail of reconcileAutoscaler: the scale write, its event and condition, and setStatus."""
    if rescale:
        run.condition(
            ConditionType.ABLE_TO_SCALE,
            "True",
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {desired}",
        )
        run.event("Normal", "SuccessfulRescale", f"New size: {desired}; reason: {rescale_reason}")
        state = store_scale_event(spec.behavior, state, previous=current, new=desired, now=run.now)
        last_scale_time = run.now
    else:
        desired = current
    statuses = _statuses(results, True) if results else None
    return Decision(
        current_replicas=current,
        desired_replicas=desired,
        rescale=rescale,
        rescale_reason=rescale_reason,
        min_replicas=spec.min_replicas,
        max_replicas=spec.max_replicas,
        metric_proposal=proposal,
        proposing_metric=proposing_metric,
        metrics=results,
        invalid_metrics=invalid,
        stabilization=normalized.stabilization if normalized else None,
        limits=normalized.limits if normalized else None,
        conditions=tuple(run.conditions),
        events=tuple(run.events),
        status=StatusUpdate(current, desired, last_scale_time, statuses),
        state=state,
        error=error,
        summary=summary or _summary(current, desired, rescale_reason, normalized, proposal),
    )


@dataclass(frozen=True, slots=True)
class _MetricsOutcome:
    replicas: int | None  # None: hold (computeReplicasForMetrics returned -1)
    metric: str
    results: tuple[MetricResult, ...]
    invalid: int
    error: str | None
    selector_ok: bool


def _compute_metrics(
    run: _Reconcile,
    spec: AutoscalerSpec,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    settings: Settings,
    now: datetime,
) -> _MetricsOutcome:
    """computeReplicasForMetrics: the largest proposal; a failure holds unless the rest scale up."""
    if scale.selector == "":
        run.event("Warning", "SelectorRequired", "selector is required")
        run.condition(
            ConditionType.SCALING_ACTIVE,
            "False",
            "InvalidSelector",
            "the HPA target's scale is missing a selector",
        )
        return _MetricsOutcome(None, "", (), 0, "selector is required", False)
    try:
        parse_selector(scale.selector)
    except SelectorSyntaxError as err:
        message = f"couldn't convert selector into a corresponding internal selector object: {err}"
        run.event("Warning", "InvalidSelector", message)
        run.condition(ConditionType.SCALING_ACTIVE, "False", "InvalidSelector", message)
        return _MetricsOutcome(None, "", (), 0, message, False)

    tolerances = tolerances_for(spec, settings)
    results: list[MetricResult] = []
    replicas = 0
    metric_name = ""
    invalid = 0
    first_error: MetricResult | None = None
    for index, (metric_spec, reading) in enumerate(zip(spec.metrics, metrics, strict=True)):
        result = compute_metric(
            index,
            metric_spec,
            reading,
            spec_replicas=scale.spec_replicas,
            status_replicas=scale.status_replicas,
            pods=pods,
            tolerances=tolerances,
            settings=settings,
            now=now,
        )
        results.append(result)
        if result.error is not None:
            run.event("Warning", result.error_reason, result.error)
            if invalid == 0:
                first_error = result
            invalid += 1
            continue
        assert result.proposed_replicas is not None
        if replicas == 0 or result.proposed_replicas > replicas:
            replicas = result.proposed_replicas
            metric_name = result.name

    error = None
    if first_error is not None:
        error = f"invalid metrics ({invalid} invalid out of {len(spec.metrics)}), first error is: {first_error.error}"
    if invalid >= len(spec.metrics) or (invalid > 0 and replicas < scale.spec_replicas):
        if first_error is not None:
            run.condition(
                ConditionType.SCALING_ACTIVE,
                "False",
                first_error.error_reason,
                f"the HPA was unable to compute the replica count: {first_error.error}",
            )
        return _MetricsOutcome(None, "", tuple(results), invalid, error, True)
    run.condition(
        ConditionType.SCALING_ACTIVE,
        "True",
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {metric_name}",
    )
    return _MetricsOutcome(replicas, metric_name, tuple(results), invalid, error, True)


def _statuses(results: tuple[MetricResult, ...], selector_ok: bool) -> tuple[MetricStatus | None, ...] | None:
    if not selector_ok:
        return None
    return tuple(r.status for r in results)


def _reference(spec: AutoscalerSpec) -> str:
    ref = spec.scale_target_ref
    return f"{ref.kind}/{ref.name}"


def _hold_summary(outcome: _MetricsOutcome) -> str:
    if not outcome.selector_ok:
        return f"hold: {outcome.error}"
    if outcome.invalid >= len(outcome.results):
        return "hold: no metric could be computed"
    return "hold: a metric failed and the others would scale down (partial data never scales down)"


def _summary(current: int, desired: int, reason: str, normalized: Normalized | None, proposal: int | None) -> str:
    if normalized is None:
        return f"{current} -> {desired}: {reason}" if desired != current else f"stay at {current}"
    parts = [f"metrics propose {proposal}"]
    stab = normalized.stabilization
    if stab.stabilized != stab.proposal:
        parts.append(f"stabilized to {stab.stabilized} ({stab.reason})")
    if normalized.limits.clipped:
        parts.append(f"limited to {normalized.limits.desired} ({normalized.limits.reason})")
    verdict = f"scale {current} -> {desired}" if desired != current else f"stay at {current}"
    return f"{verdict}: " + ", ".join(parts)
