"""One reconcile of one target, as the HPA's reconcileAutoscaler does it, returned as a `Decision` value.

Inputs: the spec, the target's Scale, its pods, one reading (or failure) per metric, the behaviour state,
the previous conditions and status, the controller settings and `now`. Output: the desired replicas,
whether to write the scale, the conditions and events the HPA would set, the status it would write, the
new behaviour state, and the explanation of every step. Held beside horizontal.go (Kubernetes 1.36):
reconcileAutoscaler, computeReplicasForMetrics, computeReplicasForMetric and the computeStatusFor* family,
with the HPAScaleToZero rules of 1.36 (hasObjectOrExternalMetrics, getScaledToZeroConditionStatus,
shouldComputeMetricsForZeroReplicas and the ScaledToZero condition).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from autoscaler.core import fallback as fallbacks
from autoscaler.core import zero as zeros
from autoscaler.core.behavior import (
    Limits,
    Normalized,
    Stabilization,
    normalize_legacy,
    normalize_with_behaviors,
    store_scale_event,
)
from autoscaler.core.conditions import set_condition, shared_text
from autoscaler.core.errors import InvalidSpecError
from autoscaler.core.events import Event, EventReason, EventType, failed_rescale_message, rescale_message
from autoscaler.core.labels import SelectorSyntaxError, parse_selector
from autoscaler.core.metric import MetricResult, MetricStatus, compute_metric, tolerances_for
from autoscaler.core.pause import Pause, hold, resumed
from autoscaler.core.predictive import Forecast, forecast_hook, note_scale_write
from autoscaler.core.queue import ExtraResult, proposals
from autoscaler.core.rollout import adjusted as rollout_adjusted
from autoscaler.core.rollout import rollout_count
from autoscaler.core.rollout import status_replicas as rollout_status_replicas
from autoscaler.core.shadow import ShadowComparison, ShadowReading, compare
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    Condition,
    ConditionType,
    MetricInput,
    MetricSourceType,
    Pod,
    Recommendation,
    Scale,
    ScaleFailure,
    Settings,
)
from autoscaler.core.values import quick_init

# recordInitialRecommendation reads the clock itself, an instant before stabilization reads it again in the
# same reconcile; the initial recommendation is stamped that instant before `now` so that it leaves the
# legacy downscale window (which keeps a recommendation stamped exactly at the cutoff) at first tick + window,
# as upstream's does, and not one tick later. One microsecond is datetime's smallest step.
INITIAL_RECOMMENDATION_LEAD = timedelta(microseconds=1)
# The proposing metric's name when no metric could be computed and a fallback's fixed count proposes instead.
FALLBACK_PROPOSER = "fallback"


@quick_init
@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """The autoscaler status the HPA would write after this reconcile."""

    current_replicas: int | None
    desired_replicas: int | None
    last_scale_time: datetime | None
    current_metrics: tuple[MetricStatus | None, ...] | None


@quick_init
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
    # Shadow mode: this decision beside the shadowed autoscaler's count (core/shadow.py).
    shadow: ShadowComparison | None = None
    # The drain-time and formula proposals (core/queue.py), beside `metrics`; empty without them.
    extra_metrics: tuple[ExtraResult, ...] = ()
    # `mode: predictive`: what it forecast and chose (None on the HPA path).
    forecast: Forecast | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class ZeroRules:
    """What the HPAScaleToZero rules make of a target at, or going to, 0 replicas (horizontal.go, 1.36).

    `scaled_to_zero` is getScaledToZeroConditionStatus under the gate: the ScaledToZero condition the
    autoscaler set when it scaled the target to zero. It is how a zero the autoscaler set is told from a zero a
    person set (the HPA's implicit maintenance mode, which is left alone).
    """

    gate: bool
    object_or_external: bool
    scaled_to_zero: bool

    @classmethod
    def of(cls, spec: AutoscalerSpec, conditions: Sequence[Condition], settings: Settings) -> ZeroRules:
        # A spec's scaleToZero opts in whatever the controller-wide gate (core/zero.py).
        gate = settings.hpa_scale_to_zero or spec.scale_to_zero is not None
        object_or_external = any(m.type in (MetricSourceType.OBJECT, MetricSourceType.EXTERNAL) for m in spec.metrics)
        object_or_external = object_or_external or spec.extra_metrics is not None  # External-like inputs
        condition = next((c for c in conditions if c.type == ConditionType.SCALED_TO_ZERO), None)
        scaled = gate and condition is not None and condition.status == "True"
        if spec.scale_to_zero is not None and spec.scale_to_zero.wake_from_manual_zero:
            scaled = True  # the spec takes any zero as its own (core/zero.py)
        return cls(gate=gate, object_or_external=object_or_external, scaled_to_zero=scaled)

    @property
    def can_scale_from_zero(self) -> bool:
        return self.scaled_to_zero and self.object_or_external

    def computes_at_zero(self, min_replicas: int) -> bool:
        """shouldComputeMetricsForZeroReplicas: compute (and maybe scale up) rather than stay disabled."""
        return (min_replicas != 0 and self.scaled_to_zero) or self.can_scale_from_zero

    def why_disabled(self) -> str:
        if not self.gate:
            return "the target has 0 replicas and the HPAScaleToZero gate is off: autoscaling is disabled"
        if not self.scaled_to_zero:
            return (
                "the target has 0 replicas that the autoscaler did not set (no ScaledToZero=True condition): "
                "autoscaling is disabled, as for a target scaled to zero by hand"
            )
        return (
            "the target was scaled to zero but the spec has no Object or External metric to scale it up from "
            "zero: autoscaling is disabled"
        )


@quick_init
@dataclass(frozen=True, slots=True)
class _Computed:
    """What the metrics path produced: the proposals, the normalization and any (partial) error."""

    results: tuple[MetricResult, ...]
    invalid: int
    proposal: int
    proposing_metric: str
    normalized: Normalized
    error: str | None
    extras: tuple[ExtraResult, ...] = ()
    forecast: Forecast | None = None


@dataclass
class _Reconcile:
    """Mutable scratch of one reconcile (never escapes `decide`)."""

    conditions: list[Condition]
    now: datetime
    events: list[Event] = field(default_factory=list)

    def condition(self, type_: str, status: str, reason: str, message: str) -> None:
        self.conditions = set_condition(self.conditions, type_, status, reason, message, now=self.now)

    def event(self, type_: EventType, reason: EventReason, message: str) -> None:
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
    controllers: Sequence[str] = (),
    pause: Pause | None = None,
    shadow: ShadowReading | None = None,
    inputs: Sequence[MetricInput] = (),
) -> Decision:
    """reconcileAutoscaler for one target, assuming the scale write (if any) succeeds.

    `controllers` names every autoscaler ("namespace/name") whose scale selector matches a pod of this target
    (`controlling_autoscalers`); more than one is validateAndParseSelector's AmbiguousSelector. Extensions:
    `pause` (core/pause.py) holds the target before any metric is computed; `shadow` (core/shadow.py) is the
    count of the autoscaler this one would replace, compared with the decision.
    (`controlling_autoscalers`); more than one is validateAndParseSelector's AmbiguousSelector. `inputs` are
    the readings of the spec's drain time and formula (`spec.extra_metrics.inputs()`, in order; a missing one
    counts as failed).
    """
    if shadow is not None:
        decision = decide(
            spec=spec,
            scale=scale,
            pods=pods,
            metrics=metrics,
            state=state,
            settings=settings,
            now=now,
            conditions=conditions,
            last_scale_time=last_scale_time,
            previous_desired_replicas=previous_desired_replicas,
            controllers=controllers,
            pause=pause,
        )
        return replace(decision, shadow=compare(decision.desired_replicas, shadow))
    if len(metrics) != len(spec.metrics):
        raise InvalidSpecError(f"{len(spec.metrics)} metrics in the spec but {len(metrics)} readings")
    run = _Reconcile(conditions=list(conditions), now=now)
    min_replicas = spec.min_replicas

    if isinstance(scale, ScaleFailure):
        message = f"the HPA controller was unable to get the target's current scale: {scale.message}"
        run.event(EventType.WARNING, EventReason.FAILED_GET_SCALE, scale.message)
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
    if state.recommendations is None:
        # recordInitialRecommendation: a target seen for the first time starts its history at its current size.
        state = state.with_recommendations((Recommendation(current, now - INITIAL_RECOMMENDATION_LEAD),))
    # Extension hook (core/fallback.py): count failed evaluations, put last good values in place of failures.
    fallen = None
    if spec.fallback is not None:
        fallen = fallbacks.prepare(spec, spec.fallback, metrics=metrics, state=state, pods=pods, now=now)
        metrics, state = fallen.metrics, fallen.state
        _fallback_report(run, spec.fallback, fallen)
    notes = [fallbacks.explain(spec.fallback, m) for m in fallen.active] if spec.fallback and fallen else []
    zero = ZeroRules.of(spec, conditions, settings)
    if not zero.gate:
        # With HPAScaleToZero off the condition means nothing and is removed (as 1.36 is described to do).
        run.conditions = [c for c in run.conditions if c.type != ConditionType.SCALED_TO_ZERO]

    if pause is not None:  # paused by annotation: metrics do not move the target (core/pause.py)
        held = hold(pause, current=current, conditions=conditions)
        run.conditions = set_condition(run.conditions, *_fields(held.condition), now=now)
        run.events.extend(held.events)
        return _finish(
            run,
            spec,
            state=state,
            current=current,
            desired=held.desired,
            rescale_reason=held.rescale_reason,
            computed=None,
            zero=zero,
            last_scale_time=last_scale_time,
            summary=held.summary,
        )
    resume = resumed(conditions)
    if resume is not None:
        run.events.append(resume)
        run.condition(ConditionType.SCALING_ACTIVE, "True", "ScalingResumed", resume.message)

    if current == 0 and not zero.computes_at_zero(min_replicas):
        run.condition(
            ConditionType.SCALING_ACTIVE,
            "False",
            "ScalingDisabled",
            "scaling is disabled since the replica count of the target is zero",
        )
        return _finish(
            run,
            spec,
            state=state,
            current=0,
            desired=0,
            rescale_reason="",
            computed=None,
            zero=zero,
            last_scale_time=last_scale_time,
            summary=_noted(zero.why_disabled(), notes),
        )
    if current > spec.max_replicas:
        return _finish(
            run,
            spec,
            state=state,
            current=current,
            desired=spec.max_replicas,
            rescale_reason="Current number of replicas above Spec.MaxReplicas",
            computed=None,
            zero=zero,
            last_scale_time=last_scale_time,
        )
    if current != 0 and current < min_replicas:
        return _finish(
            run,
            spec,
            state=state,
            current=current,
            desired=min_replicas,
            rescale_reason="Current number of replicas below Spec.MinReplicas",
            computed=None,
            zero=zero,
            last_scale_time=last_scale_time,
        )

    outcome = _compute_metrics(run, spec, scale, pods, metrics, settings, now, controllers, inputs)
    # Extension hooks after the proposals: activity for scaleToZero (core/zero.py), the fallback action.
    found = None
    if spec.scale_to_zero is not None and outcome.selector_ok:
        found = zeros.activity(
            spec.scale_to_zero,
            specs=spec.metrics,
            readings=metrics,
            substituted=[m.substituted is not None for m in fallen.per_metric] if fallen else [False] * len(metrics),
            idle_since=state.idle_since,
            now=now,
            extras=outcome.extras,
        )
        state = replace(state, idle_since=found.idle_since)
        notes.append(zeros.explain(spec.scale_to_zero, found))
    elif spec.scale_to_zero is not None:
        state = replace(state, idle_since=None)  # nothing could be read: no proof of idleness
    applied = None
    if spec.fallback is not None and fallen is not None and outcome.selector_ok:
        applied = fallbacks.apply(spec.fallback, fallen, proposal=outcome.replicas, current_replicas=current)
    if applied is not None:
        notes.insert(0, applied.reason)
    if outcome.replicas is None and applied is not None:
        outcome = replace(outcome, replicas=applied.proposal, metric=FALLBACK_PROPOSER)
    if outcome.replicas is None:
        message = outcome.error or "no metric could be computed"
        run.event(EventType.WARNING, EventReason.FAILED_COMPUTE_METRICS_REPLICAS, message)
        status = StatusUpdate(
            current, previous_desired_replicas, last_scale_time, _statuses(outcome.results, outcome.selector_ok)
        )
        return Decision(
            current_replicas=current,
            desired_replicas=current,
            rescale=False,
            min_replicas=min_replicas,
            max_replicas=spec.max_replicas,
            metrics=outcome.results,
            invalid_metrics=outcome.invalid,
            conditions=tuple(run.conditions),
            events=tuple(run.events),
            status=status,
            state=state,
            error=(
                "failed to compute desired number of replicas based on listed metrics for "
                f"{_reference(spec)}: {message}"
            ),
            summary=_noted(_hold_summary(outcome) + _explain_extras(outcome.extras), notes),
            extra_metrics=outcome.extras,
        )

    # reconcileAutoscaler starts from desiredReplicas 0 and takes the metrics' proposal only above it: a
    # negative proposal (a negative metric, an int32 conversion gone out of range) is 0 from here on.
    proposal = max(outcome.replicas, 0)
    forecast = None
    if spec.predictive is not None:
        proposal, state, forecast = forecast_hook(
            spec.predictive, outcome.results, state, proposal, current, now, pods=pods
        )
    rescale_reason = ""
    if proposal > current:
        rescale_reason = f"{outcome.metric} above target"
    if proposal < current:
        rescale_reason = "All metrics below target"
    floor = min_replicas
    if spec.scale_to_zero is not None and found is not None:
        if current == 0 and not found.is_active:
            proposal, rescale_reason = 0, ""  # leaves 0 only above an activation threshold
            notes.insert(0, "stays at zero: no metric above its activation threshold")
        elif current == 0:
            proposal = max(proposal, 1)
            rescale_reason = "activated from zero: " + ", ".join(found.active)
        else:
            floor = max(min_replicas, 1)  # above 0, only the cooldown goes below 1
    if applied is not None and applied.proposal is not None:
        proposal, rescale_reason = applied.proposal, applied.reason
    recommendations = state.recommendations or ()
    if spec.behavior is None:
        normalized = normalize_legacy(
            current_replicas=current,
            proposal=proposal,
            min_replicas=floor,
            max_replicas=spec.max_replicas,
            recommendations=recommendations,
            settings=settings,
            now=now,
        )
    else:
        normalized = normalize_with_behaviors(
            current_replicas=current,
            proposal=proposal,
            min_replicas=floor,
            max_replicas=spec.max_replicas,
            behavior=spec.behavior,
            state=state,
            recommendations=recommendations,
            settings=settings,
            now=now,
        )
    run.condition(
        ConditionType.ABLE_TO_SCALE, "True", normalized.stabilization.reason, normalized.stabilization.message
    )
    state = state.with_recommendations(normalized.recommendations)
    desired = normalized.desired
    if current == 0 and min_replicas != 0 and zero.scaled_to_zero and desired < min_replicas:
        # Back from a zero the autoscaler set, after minReplicas was raised: never below the new minimum.
        desired = min_replicas
        rescale_reason = rescale_reason or "Current number of replicas below Spec.MinReplicas"
    if spec.scale_to_zero is not None and found is not None:
        idle_to = None
        if current == 0 and found.is_active and applied is None:
            desired = max(desired, 1)  # activation leaves 0 whatever the scale-up policies allow
        elif current > 0 and applied is None and zeros.cooled_down(spec.scale_to_zero, found):
            desired = idle_to = spec.scale_to_zero.idle_replicas
            idle = "scaled to zero" if desired == 0 else f"scaled to the idle count {desired}"
            rescale_reason = f"{idle}: " + zeros.explain(spec.scale_to_zero, found)
        limited = zeros.scaling_limited(
            normalized.limits, min_replicas=min_replicas, floor=floor, idle_replicas=idle_to
        )
        normalized = replace(normalized, limits=limited)
    limits = normalized.limits
    run.condition(ConditionType.SCALING_LIMITED, "True" if limits.clipped else "False", limits.reason, limits.message)
    computed = _Computed(
        results=outcome.results,
        invalid=outcome.invalid,
        proposal=outcome.replicas,
        proposing_metric=outcome.metric,
        normalized=normalized,
        error=outcome.error,
        extras=outcome.extras,
        forecast=forecast,
    )
    decision = _finish(
        run,
        spec,
        state=state,
        current=current,
        desired=desired,
        rescale_reason=rescale_reason,
        computed=computed,
        zero=zero,
        last_scale_time=last_scale_time,
        notes=notes,
    )
    return replace(decision, summary=f"{decision.summary}; {outcome.note}") if outcome.note else decision


def _noted(summary: str, notes: Sequence[str]) -> str:
    """A summary with what the extensions did appended ("...; fallback hold for metric 0 (queue), ..."), shared:
    the few summaries of steady targets ("stay at 10: metrics propose 10") are then one string each, however many
    decisions the flight recorder keeps."""
    return shared_text("; ".join([summary, *notes]) if notes else summary)


def _fallback_report(run: _Reconcile, rules: fallbacks.Fallback, prepared: fallbacks.Prepared) -> None:
    """The FallbackActive condition and the FallbackStarted / FallbackEnded events of this evaluation."""
    for item in prepared.per_metric:
        if item.started:
            run.event(EventType.WARNING, EventReason.FALLBACK_STARTED, fallbacks.explain(rules, item))
        if item.ended:
            run.event(
                EventType.NORMAL,
                EventReason.FALLBACK_ENDED,
                f"fallback {rules.action} for {item.name} ended: the metric is readable again",
            )
    active = prepared.active
    if active:
        reason = "Fallback" + str(rules.action)[0].upper() + str(rules.action)[1:]
        message = "; ".join(fallbacks.explain(rules, m) for m in active)
        run.condition(ConditionType.FALLBACK_ACTIVE, "True", reason, message)
    else:
        run.condition(
            ConditionType.FALLBACK_ACTIVE,
            "False",
            "MetricsReadable",
            f"no metric has failed {rules.failure_threshold} evaluations in a row",
        )


def _finish(
    run: _Reconcile,
    spec: AutoscalerSpec,
    *,
    state: BehaviorState,
    current: int,
    desired: int,
    rescale_reason: str,
    computed: _Computed | None,
    zero: ZeroRules,
    last_scale_time: datetime | None,
    summary: str = "",
    notes: Sequence[str] = (),
) -> Decision:
    """The tail of reconcileAutoscaler: the scale write (when `desired` differs), its event and conditions,
    and setStatus. `computed` is None on the paths that decide without metrics."""
    rescale = desired != current
    if rescale:
        run.condition(
            ConditionType.ABLE_TO_SCALE,
            "True",
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {desired}",
        )
        run.event(EventType.NORMAL, EventReason.SUCCESSFUL_RESCALE, rescale_message(desired, rescale_reason))
        state = store_scale_event(spec.behavior, state, previous=current, new=desired, now=run.now)
        if spec.predictive is not None:
            state = note_scale_write(state, previous=current, new=desired, now=run.now)
        last_scale_time = run.now
        if zero.gate:
            if current > 0 and desired == 0 and spec.min_replicas == 0 and zero.object_or_external:
                run.condition(
                    ConditionType.SCALED_TO_ZERO,
                    "True",
                    "ScaledToZero",
                    "the HPA controller scaled the workload to zero",
                )
            else:
                run.condition(
                    ConditionType.SCALED_TO_ZERO,
                    "False",
                    "NotScaledToZero",
                    "the HPA controller did not scale the workload to zero",
                )
    results = computed.results if computed else ()
    normalized = computed.normalized if computed else None
    proposal = computed.proposal if computed else None
    statuses = _statuses(results, True) if results else None
    return Decision(
        current_replicas=current,
        desired_replicas=desired,
        rescale=rescale,
        rescale_reason=rescale_reason,
        min_replicas=spec.min_replicas,
        max_replicas=spec.max_replicas,
        metric_proposal=proposal,
        proposing_metric=computed.proposing_metric if computed else "",
        metrics=results,
        invalid_metrics=computed.invalid if computed else 0,
        stabilization=normalized.stabilization if normalized else None,
        limits=normalized.limits if normalized else None,
        conditions=tuple(run.conditions),
        events=tuple(run.events),
        status=StatusUpdate(current, desired, last_scale_time, statuses),
        state=state,
        error=computed.error if computed else None,
        summary=_noted(
            (summary or _summary(current, desired, rescale_reason, normalized, proposal, computed))
            + _explain_extras(computed.extras if computed else ()),
            notes,
        ),
        extra_metrics=computed.extras if computed else (),
        forecast=computed.forecast if computed else None,
    )


def _fields(condition: Condition) -> tuple[str, str, str, str]:
    return condition.type, condition.status, condition.reason, condition.message


@quick_init
@dataclass(frozen=True, slots=True)
class _MetricsOutcome:
    replicas: int | None  # None: hold (computeReplicasForMetrics returned -1)
    metric: str
    results: tuple[MetricResult, ...]
    invalid: int
    error: str | None
    selector_ok: bool
    extras: tuple[ExtraResult, ...] = ()
    note: str = ""  # what an extension did to the proposals (rollout-aware counting)


def _compute_metrics(
    run: _Reconcile,
    spec: AutoscalerSpec,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    settings: Settings,
    now: datetime,
    controllers: Sequence[str],
    inputs: Sequence[MetricInput] = (),
) -> _MetricsOutcome:
    """computeReplicasForMetrics: the largest proposal; a failure holds unless the rest scale up."""
    if scale.selector == "":
        run.event(EventType.WARNING, EventReason.SELECTOR_REQUIRED, "selector is required")
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
        run.event(EventType.WARNING, EventReason.INVALID_SELECTOR, message)
        run.condition(ConditionType.SCALING_ACTIVE, "False", "InvalidSelector", message)
        return _MetricsOutcome(None, "", (), 0, message, False)
    if len(controllers) > 1:
        message = ambiguous_selector_message(scale.selector, controllers)
        run.event(EventType.WARNING, EventReason.AMBIGUOUS_SELECTOR, message)
        run.condition(ConditionType.SCALING_ACTIVE, "False", "AmbiguousSelector", message)
        return _MetricsOutcome(None, "", (), 0, message, False)

    tolerances = tolerances_for(spec, settings)
    rollout = rollout_count(pods, scale.spec_replicas) if spec.rollout_aware else None  # core/rollout.py
    status_replicas = rollout_status_replicas(rollout, scale.status_replicas) if rollout else scale.status_replicas
    results: list[MetricResult] = []
    replicas = 0
    metric_name = ""
    invalid = 0
    # The first failed proposal, metric or extra: (its reason, its message, the error it returned).
    first_failure: tuple[str, str, str] | None = None
    for index, (metric_spec, reading) in enumerate(zip(spec.metrics, metrics, strict=True)):
        result = compute_metric(
            index,
            metric_spec,
            reading,
            spec_replicas=scale.spec_replicas,
            status_replicas=status_replicas,
            pods=pods,
            tolerances=tolerances,
            settings=settings,
            now=now,
            missing_pods=spec.missing_pods,
        )
        if rollout is not None:
            result = rollout_adjusted(result, rollout)
        results.append(result)
        if result.error is not None:
            assert result.error_reason is not None
            run.event(EventType.WARNING, result.error_reason, result.error)
            if invalid == 0:
                first_failure = (str(result.error_reason), result.error, str(result.returned_error))
            invalid += 1
            continue
        assert result.proposed_replicas is not None
        if replicas == 0 or result.proposed_replicas > replicas:
            replicas = result.proposed_replicas
            metric_name = result.name

    # The drain time and the formula (core/queue.py) join the largest proposal as metrics of their own.
    extras: tuple[ExtraResult, ...] = ()
    if spec.extra_metrics is not None:
        extras = proposals(
            spec.extra_metrics,
            inputs,
            spec_replicas=scale.spec_replicas,
            status_replicas=scale.status_replicas,
            pods=pods,
            tolerances=tolerances,
            now=now,
        )
        for extra in extras:
            if extra.error is not None:
                run.event(EventType.WARNING, EventReason.FAILED_GET_EXTERNAL_METRIC, extra.error)
                if invalid == 0:
                    first_failure = (str(EventReason.FAILED_GET_EXTERNAL_METRIC), extra.error, extra.error)
                invalid += 1
                continue
            assert extra.proposed_replicas is not None
            if replicas == 0 or extra.proposed_replicas > replicas:
                replicas = extra.proposed_replicas
                metric_name = extra.name
    count = len(spec.metrics) + len(extras)

    error = None
    if first_failure is not None:
        error = f"invalid metrics ({invalid} invalid out of {count}), first error is: {first_failure[2]}"
    if invalid >= count or (invalid > 0 and replicas < scale.spec_replicas):
        if first_failure is not None:
            run.condition(
                ConditionType.SCALING_ACTIVE,
                "False",
                first_failure[0],
                f"the HPA was unable to compute the replica count: {first_failure[1]}",
            )
        return _MetricsOutcome(None, "", tuple(results), invalid, error, True, extras)
    run.condition(
        ConditionType.SCALING_ACTIVE,
        "True",
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {metric_name}",
    )
    note = rollout.describe() if rollout is not None and rollout.surplus else ""
    return _MetricsOutcome(replicas, metric_name, tuple(results), invalid, error, True, extras, note)


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
    counted = [
        f"{r.name}: {len(r.pods.ready)} ready, {len(r.pods.unready)} unready, {len(r.pods.missing)} missing, "
        f"{len(r.pods.ignored)} ignored pods"
        for r in outcome.results
        if r.error is not None and r.pods is not None
    ]
    detail = f" ({'; '.join(counted)})" if counted else ""
    if outcome.invalid >= len(outcome.results) + len(outcome.extras):
        return f"hold: no metric could be computed{detail}"
    return f"hold: a metric failed and the others would scale down (a failed metric never scales down){detail}"


def _explain_extras(extras: tuple[ExtraResult, ...]) -> str:
    """The drain time's and the formula's explanations, appended to the summary ("" without them)."""
    return "".join(f"; {extra.explanation}" for extra in extras)


def _summary(
    current: int,
    desired: int,
    reason: str,
    normalized: Normalized | None,
    proposal: int | None,
    computed: _Computed | None = None,
) -> str:
    if normalized is None:
        return f"{current} -> {desired}: {reason}" if desired != current else f"stay at {current}"
    proposer = computed.proposing_metric if computed is not None else ""
    parts = [f"the fallback proposes {proposal}" if proposer == FALLBACK_PROPOSER else f"metrics propose {proposal}"]
    if computed is not None and computed.forecast is not None:
        parts = [computed.forecast.explain()]
    stab = normalized.stabilization
    if stab.stabilized != stab.proposal:
        parts.append(f"stabilized to {stab.stabilized} ({stab.reason})")
    if normalized.limits.clipped:
        parts.append(f"limited to {normalized.limits.desired} ({normalized.limits.reason})")
    verdict = f"scale {current} -> {desired}" if desired != current else f"stay at {current}"
    return f"{verdict}: " + ", ".join(parts)


def controlling_autoscalers(pods: Sequence[Pod], selectors: Mapping[str, str]) -> tuple[str, ...]:
    """hpasControllingPodsUnderSelector: the autoscalers whose selector matches any of `pods`, sorted.

    `selectors` maps each autoscaler of the pods' namespace ("namespace/name") to its scale's selector string
    (the HPA's selector index); an unparsable or empty selector selects nothing, as labels.Nothing() does.
    Upstream returns them in map order; sorted here so messages are stable.
    """
    parsed = []
    for key, text in selectors.items():
        if not text:
            continue
        try:
            parsed.append((key, parse_selector(text)))
        except SelectorSyntaxError:
            continue
    # Each selector's pods are matched only until one matches: a target's own selector (one of these, in the
    # daemon) matches its first pod, so that is one match per autoscaler rather than one per pod.
    found = [key for key, selector in parsed if any(selector.matches(pod.labels) for pod in pods)]
    return tuple(sorted(found))


def ambiguous_selector_message(selector: str, controllers: Sequence[str]) -> str:
    """validateAndParseSelector's message: "pods by selector app=web are controlled by multiple HPAs: [a/x a/y]"."""
    return f"pods by selector {selector} are controlled by multiple HPAs: [{' '.join(controllers)}]"


def failed_rescale(
    decision: Decision,
    error: str,
    *,
    reference: str,
    state: BehaviorState,
    conditions: Sequence[Condition],
    previous_desired_replicas: int | None,
    last_scale_time: datetime | None,
    now: datetime,
) -> Decision:
    """reconcileAutoscaler when the scale write fails: FailedRescale, AbleToScale False FailedUpdateScale.

    `state`, `conditions`, `previous_desired_replicas` and `last_scale_time` are the inputs `decision` was
    made from: the recommendations are kept (upstream stores them before the write), the scale event is not
    (storeScaleEvent runs after a successful write), and the status keeps its desired count and scale time
    (setCurrentReplicasAndMetricsInStatus).
    """
    assert decision.desired_replicas is not None
    kept = [c for c in decision.conditions if c.type != ConditionType.SCALED_TO_ZERO]
    before = next((c for c in conditions if c.type == ConditionType.SCALED_TO_ZERO), None)
    if before is not None and any(c.type == ConditionType.SCALED_TO_ZERO for c in decision.conditions):
        kept.append(before)
    kept = set_condition(
        kept,
        ConditionType.ABLE_TO_SCALE,
        "False",
        "FailedUpdateScale",
        f"the HPA controller was unable to update the target scale: {error}",
        now=now,
    )
    events = [e for e in decision.events if e.reason != EventReason.SUCCESSFUL_RESCALE]
    events.append(
        Event(
            EventType.WARNING,
            EventReason.FAILED_RESCALE,
            failed_rescale_message(decision.desired_replicas, decision.rescale_reason, error),
        )
    )
    return replace(
        decision,
        conditions=tuple(kept),
        events=tuple(events),
        state=replace(
            decision.state,
            scale_up_events=state.scale_up_events,
            scale_down_events=state.scale_down_events,
            last_scale_down=state.last_scale_down,
        ),
        status=replace(decision.status, desired_replicas=previous_desired_replicas, last_scale_time=last_scale_time),
        error=f"failed to rescale {reference}: {error}",
        summary=f"{decision.summary} (the scale write failed: {error})",
    )


def not_written(decision: Decision) -> Decision:
    """A rescale the daemon did not write (its leader fence closed, or the re-read scale already had the count):
    reported as no rescale, the summary saying so. The decision's state and lastScaleTime hold a scale that never
    happened; the daemon neither stores nor remembers them."""
    if not decision.rescale:
        return decision
    return replace(decision, rescale=False, summary=f"{decision.summary} (not written)")


def dry_run(
    decision: Decision, *, state: BehaviorState, conditions: Sequence[Condition], last_scale_time: datetime | None
) -> Decision:
    """A rescale decided but not applied (dry-run): what the status and events say instead of a rescale.

    AbleToScale stays True with reason DryRun; the rescale is reported by a DryRunRescale event rather than
    SuccessfulRescale; no scale event is stored and lastScaleTime is unchanged (nothing was scaled);
    desiredReplicas shows what would have been written. A decision without a rescale is returned as is.
    """
    if not decision.rescale or decision.desired_replicas is None:
        return decision
    kept = [c for c in decision.conditions if c.type != ConditionType.SCALED_TO_ZERO]
    before = next((c for c in conditions if c.type == ConditionType.SCALED_TO_ZERO), None)
    if before is not None:
        kept.append(before)
    able = [
        Condition(
            c.type,
            c.status,
            "DryRun",
            f"dry run: the HPA controller would update the target scale to {decision.desired_replicas}; not written",
            c.last_transition_time,
        )
        if c.type == ConditionType.ABLE_TO_SCALE
        else c
        for c in kept
    ]
    events = [
        Event(EventType.NORMAL, EventReason.DRY_RUN_RESCALE, e.message + "; dry run: not written")
        if e.reason == EventReason.SUCCESSFUL_RESCALE
        else e
        for e in decision.events
    ]
    return replace(
        decision,
        conditions=tuple(able),
        events=tuple(events),
        state=replace(
            decision.state,
            scale_up_events=state.scale_up_events,
            scale_down_events=state.scale_down_events,
            last_scale_down=state.last_scale_down,
        ),
        status=replace(decision.status, last_scale_time=last_scale_time),
        summary=f"dry run: {decision.summary} (not written)",
    )
