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
from autoscaler.core.events import Event, EventReason, EventType, failed_rescale_message, rescale_message
from autoscaler.core.labels import SelectorSyntaxError, parse_selector
from autoscaler.core.metric import MetricResult, MetricStatus, compute_metric, tolerances_for
from autoscaler.core.predictive import Forecast, forecast_hook
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

# recordInitialRecommendation reads the clock itself, an instant before stabilization reads it again in the
# same reconcile; the initial recommendation is stamped that instant before `now` so that it leaves the
# legacy downscale window (which keeps a recommendation stamped exactly at the cutoff) at first tick + window,
# as upstream's does, and not one tick later. One microsecond is datetime's smallest step.
INITIAL_RECOMMENDATION_LEAD = timedelta(microseconds=1)


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
    # `mode: predictive`: what it forecast and chose (None on the HPA path).
    forecast: Forecast | None = None


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
        gate = settings.hpa_scale_to_zero
        object_or_external = any(m.type in (MetricSourceType.OBJECT, MetricSourceType.EXTERNAL) for m in spec.metrics)
        condition = next((c for c in conditions if c.type == ConditionType.SCALED_TO_ZERO), None)
        scaled = gate and condition is not None and condition.status == "True"
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


@dataclass(frozen=True, slots=True)
class _Computed:
    """What the metrics path produced: the proposals, the normalization and any (partial) error."""

    results: tuple[MetricResult, ...]
    invalid: int
    proposal: int
    proposing_metric: str
    normalized: Normalized
    error: str | None
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
) -> Decision:
    """reconcileAutoscaler for one target, assuming the scale write (if any) succeeds.

    `controllers` names every autoscaler ("namespace/name") whose scale selector matches a pod of this target
    (`controlling_autoscalers`); more than one is validateAndParseSelector's AmbiguousSelector.
    """
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
        state = replace(state, recommendations=(Recommendation(current, now - INITIAL_RECOMMENDATION_LEAD),))
    zero = ZeroRules.of(spec, conditions, settings)
    if not zero.gate:
        # With HPAScaleToZero off the condition means nothing and is removed (as 1.36 is described to do).
        run.conditions = [c for c in run.conditions if c.type != ConditionType.SCALED_TO_ZERO]

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
            summary=zero.why_disabled(),
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

    outcome = _compute_metrics(run, spec, scale, pods, metrics, settings, now, controllers)
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
            summary=_hold_summary(outcome),
        )

    # reconcileAutoscaler starts from desiredReplicas 0 and takes the metrics' proposal only above it: a
    # negative proposal (a negative metric, an int32 conversion gone out of range) is 0 from here on.
    proposal = max(outcome.replicas, 0)
    forecast = None
    if spec.predictive is not None:
        proposal, state, forecast = forecast_hook(spec.predictive, outcome.results, state, proposal, current, now)
    rescale_reason = ""
    if proposal > current:
        rescale_reason = f"{outcome.metric} above target"
    if proposal < current:
        rescale_reason = "All metrics below target"
    recommendations = state.recommendations or ()
    if spec.behavior is None:
        normalized = normalize_legacy(
            current_replicas=current,
            proposal=proposal,
            min_replicas=min_replicas,
            max_replicas=spec.max_replicas,
            recommendations=recommendations,
            settings=settings,
            now=now,
        )
    else:
        normalized = normalize_with_behaviors(
            current_replicas=current,
            proposal=proposal,
            min_replicas=min_replicas,
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
    limits = normalized.limits
    run.condition(ConditionType.SCALING_LIMITED, "True" if limits.clipped else "False", limits.reason, limits.message)
    state = replace(state, recommendations=normalized.recommendations)
    desired = normalized.desired
    if current == 0 and min_replicas != 0 and zero.scaled_to_zero and desired < min_replicas:
        # Back from a zero the autoscaler set, after minReplicas was raised: never below the new minimum.
        desired = min_replicas
        rescale_reason = rescale_reason or "Current number of replicas below Spec.MinReplicas"
    computed = _Computed(
        results=outcome.results,
        invalid=outcome.invalid,
        proposal=outcome.replicas,
        proposing_metric=outcome.metric,
        normalized=normalized,
        error=outcome.error,
        forecast=forecast,
    )
    return _finish(
        run,
        spec,
        state=state,
        current=current,
        desired=desired,
        rescale_reason=rescale_reason,
        computed=computed,
        zero=zero,
        last_scale_time=last_scale_time,
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
        summary=summary or _summary(current, desired, rescale_reason, normalized, proposal, computed),
        forecast=computed.forecast if computed else None,
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
    controllers: Sequence[str],
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
            missing_pods=spec.missing_pods,
        )
        results.append(result)
        if result.error is not None:
            assert result.error_reason is not None
            run.event(EventType.WARNING, result.error_reason, result.error)
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
        error = (
            f"invalid metrics ({invalid} invalid out of {len(spec.metrics)}), first error is: "
            f"{first_error.returned_error}"
        )
    if invalid >= len(spec.metrics) or (invalid > 0 and replicas < scale.spec_replicas):
        if first_error is not None:
            run.condition(
                ConditionType.SCALING_ACTIVE,
                "False",
                str(first_error.error_reason),
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
    counted = [
        f"{r.name}: {len(r.pods.ready)} ready, {len(r.pods.unready)} unready, {len(r.pods.missing)} missing, "
        f"{len(r.pods.ignored)} ignored pods"
        for r in outcome.results
        if r.error is not None and r.pods is not None
    ]
    detail = f" ({'; '.join(counted)})" if counted else ""
    if outcome.invalid >= len(outcome.results):
        return f"hold: no metric could be computed{detail}"
    return f"hold: a metric failed and the others would scale down (a failed metric never scales down){detail}"


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
    parts = [f"metrics propose {proposal}"]
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
    found = {key for pod in pods for key, selector in parsed if selector.matches(pod.labels)}
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
        state=replace(decision.state, scale_up_events=state.scale_up_events, scale_down_events=state.scale_down_events),
        status=replace(decision.status, desired_replicas=previous_desired_replicas, last_scale_time=last_scale_time),
        error=f"failed to rescale {reference}: {error}",
        summary=f"{decision.summary} (the scale write failed: {error})",
    )


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
        state=replace(decision.state, scale_up_events=state.scale_up_events, scale_down_events=state.scale_down_events),
        status=replace(decision.status, last_scale_time=last_scale_time),
        summary=f"dry run: {decision.summary} (not written)",
    )
