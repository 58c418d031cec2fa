"""One tick of the daemon: every due target read from the caches, its metrics read in one pass, decided by the
core, and its scale, Events and status written with bounded concurrency (docs/daemon.md, "Reconciling a tick").

The flow, as the HPA's reconcileAutoscaler runs it per HPA, batched per tick:
1. memory: each target's behaviour state, conditions, lastScaleTime and desiredReplicas: from the previous tick,
   or, the first time a target is seen (start, failover, `forget`), from its stored status;
2. scale: apps/v1 kinds from `WorkloadCache`, other kinds through `ScaleClient.read_scale`; pods from
   `PodCache`; the scale selector into the selector index (the HPA's hpaSelectors) for AmbiguousSelector;
3. metrics: ONE `MetricsReader.read` for every metric of every target; a `MetricsError` is a `MetricFailure`;
4. decide: `core.decision.decide` per target;
5. writes, `write_concurrency` targets at a time: the scale (guarded by the cached resourceVersion; on 409 read
   again and decided again with the same readings), the Decision's Events, the status with the behaviour state.
   Before a scale-down of a spec with `scaleDown.podDeletionCost`, the pods' deletion costs are set first
   (`_spare_busy_pods`); that step never stops the scale write.
One target's failure, of any kind, is that target's outcome and never touches the others.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol, cast

import structlog

from autoscaler.core.decision import Decision, controlling_autoscalers, decide, dry_run, failed_rescale, not_written
from autoscaler.core.deletion_cost import plan_deletion_costs
from autoscaler.core.events import EventReason
from autoscaler.core.labels import SelectorSyntaxError
from autoscaler.core.pause import Pause, combine, pause_from_annotations
from autoscaler.core.shadow import ShadowReading
from autoscaler.core.state import compact_recommendations, newest_recommendation_time, refresh_due, refresh_offset
from autoscaler.core.types import BehaviorState, MetricFailure, MetricInput, Pod, Scale, ScaleFailure, Settings
from autoscaler.daemon.model import Origin, Target, TargetKey, TargetOutcome, TickReport
from autoscaler.daemon.persist import Memory, StateStore, memory_from_status, stored_status, write_reason
from autoscaler.kube.cache import APPS_KINDS, PodCache, WorkloadCache
from autoscaler.kube.errors import KubeError
from autoscaler.kube.events import EventRecorder, InvolvedObject
from autoscaler.kube.pods import PodAnnotator
from autoscaler.kube.scale import ScaleClient
from autoscaler.kube.state import UnreadableState
from autoscaler.kube.status import AutoscalerStatus, CachedObject, StatusWriter, status_to_json
from autoscaler.metrics import MetricRequest, MetricsError, MetricsReader, ReadContext
from autoscaler.spec.render import format_reference, format_targets, metric_status, shadow_status
from autoscaler.spec.shadow import SHADOW, ShadowSpec
from autoscaler.spec.snapshot_out import DecisionInputs

log = structlog.get_logger(__name__)

# The write pool writes the targets queued for it when they are this many per worker (see _decide_and_write).
WRITE_BATCH_PER_WORKER = 4
# The key of a target's pod-deletion-cost metric in the tick's metric pass (its scaling metrics have indexes).
COST_METRIC = "podDeletionCost"


class ShadowReader(Protocol):
    """`kube.shadow.ShadowCache`: what the autoscaler a spec in shadow mode would replace wants."""

    def read(self, namespace: str, *, now: datetime, hpa: str = "", scaled_object: str = "") -> ShadowReading: ...


@dataclass(frozen=True, slots=True)
class _Selector:
    """A target's last scale selector: kept until the target is removed (`forget`), as the HPA keeps it."""

    namespace: str
    selector: str
    seen: datetime


@dataclass(slots=True)
class _Owners:
    """One namespace's part of the selector index during a tick: its selectors, and who selects each pod."""

    selectors: dict[str, str] = field(default_factory=dict)  # "ns/name" -> selector
    # pod name -> "ns/name" of the autoscaler selecting it, or a set of them when several do (a set per pod
    # was ~2.4 KiB per target of the tick's memory, for the one owner nearly every pod has)
    pods: dict[str, str | set[str]] = field(default_factory=dict)
    built: bool = False
    # selector -> the pods it selects, this tick: a due target's own selection is its entry in the index too
    selected: dict[str, tuple[Pod, ...]] = field(default_factory=dict)


@dataclass(slots=True)
class _Work:
    """One target's inputs and results through the tick (never leaves `reconcile`)."""

    target: Target
    started: float
    memory: Memory = field(default_factory=Memory)
    inputs: Memory | None = None  # the memory the decision started from (for its snapshot)
    scale: Scale | ScaleFailure | None = None
    resource_version: str = ""  # "" when the scale came from a read without a cached version
    pods: tuple[Pod, ...] = ()
    controllers: tuple[str, ...] = ()
    pause: Pause | None = None  # the spec's or the target's pause annotation (core/pause.py)
    shadow: ShadowReading | None = None  # shadow mode: what the replaced autoscaler wants (core/shadow.py)
    metrics: list[MetricInput] = field(default_factory=list)
    extra_inputs: list[MetricInput] = field(default_factory=list)  # the drain time's and formula's readings
    cost_reading: MetricInput | None = None  # scaleDown.podDeletionCost's per-pod metric, when the spec has one
    costs_set: bool = False  # the deletion costs were handled this tick (once, whatever the 409 re-reads)
    decision: Decision | None = None
    wrote_scale: bool = False
    scale_write_error: str | None = None  # the scale write failed with this (the decision is FailedRescale)
    unwritten: bool = False  # the decision asked for a scale write that did not happen (fenced, or not needed)
    wrote_status: bool = False
    # The status to store for `decision` (computed once): (decision, document or None, write_reason).
    status_plan: tuple[Decision, dict[str, Any] | None, str] | None = None
    # The decision's behaviour state compacted (core.state.compact_recommendations), once per state: the
    # status stores it and the memory keeps it.
    compacted: tuple[BehaviorState, BehaviorState] | None = None
    error: str = ""
    error_type: str = ""
    done: bool = False  # an exception ended this target's tick

    @property
    def key(self) -> TargetKey:
        return self.target.key

    def compacted_state(self) -> BehaviorState:
        """The current decision's behaviour state with only the newest recommendation of each count."""
        assert self.decision is not None
        state = self.decision.state
        if self.compacted is None or self.compacted[0] is not state:
            self.compacted = (state, compact_recommendations(state))
        return self.compacted[1]


def snapshot_of(work: _Work, *, settings: Settings, now: datetime) -> DecisionInputs | None:
    """The decision's inputs, by reference, for replay's format (docs/snapshot.md): replaying their JSON decides
    as this tick did.

    The memory is the one the decision started from (`_Work.inputs`), the scale the last one decided on (a
    re-read after a 409 replaces it). None when nothing was decided.
    """
    if work.scale is None or work.inputs is None:
        return None
    memory = work.inputs
    return DecisionInputs(
        name=work.key.name,
        namespace=work.key.namespace,
        spec_model=work.target.autoscaler.load_model,
        scale=work.scale,
        pods=work.pods,
        metrics=tuple(work.metrics),
        inputs=tuple(work.extra_inputs),
        state=memory.state,
        settings=settings,
        now=now,
        conditions=memory.conditions,
        last_scale_time=memory.last_scale_time,
        previous_desired_replicas=memory.desired_replicas,
        controllers=work.controllers,
        dry_run=work.target.dry_run,
        scale_write_error=work.scale_write_error,
        scale_not_written=work.unwritten,
        pause=work.pause,
        shadow=work.shadow,
    )


def _status_key(work: _Work) -> tuple[Any, ...] | None:
    """Everything of the target's current decision that `persist.write_reason` stores at once when it changes (the
    status fields other than metric values, the TARGETS text and recommendation times): two decisions with equal
    keys, planned against the same stored document, get the same answer from it, but for the refresh. None (plan
    in full) for shadow mode, whose comparison has its own rule. Compared by `==`: a tuple compares each item by
    identity first, so an unchanged spec or conditions tuple costs nothing. Kept for every target between ticks,
    so kept small (~0.3 KiB): sorted tuples for the sets, one number for which value fields each metric has."""
    decision = work.decision
    assert decision is not None
    if decision.shadow is not None:
        return None
    status = decision.status
    state = decision.state
    recommendations = state.recommendations
    current = status.current_replicas
    metrics: list[Any] = []
    for m in status.current_metrics or ():
        if m is None:
            metrics.append(None)
        else:
            metrics.append(m.spec)
            metrics.append((m.value is None) + 2 * (m.average_value is None) + 4 * (m.average_utilization is None))
    return (
        (work.memory.current_replicas or 0) if current is None else current,
        status.desired_replicas or 0,
        status.last_scale_time,
        decision.conditions,
        work.target.generation,
        work.target.autoscaler.spec,  # the reference, and each metric's identity in currentMetrics
        tuple(metrics),
        state.scale_up_events,
        state.scale_down_events,
        None if recommendations is None else tuple(sorted({r.replicas for r in recommendations})),
        state.idle_since,
        tuple(sorted(h.key for h in state.metric_health if h.failures)),
    )


class Reconciler:
    """Runs ticks over due targets; keeps each target's memory and the selector index between them."""

    def __init__(
        self,
        *,
        settings: Settings,
        reader: MetricsReader,
        pods: PodCache,
        workloads: WorkloadCache,
        scales: ScaleClient,
        events: EventRecorder | None,
        status: StatusWriter | None,
        states: StateStore | None,
        write_concurrency: int = 16,
        may_write: Callable[[], bool] = lambda: True,
        state_refresh_seconds: float = 60.0,
        shadows: ShadowReader | None = None,
        annotator: PodAnnotator | None = None,
        on_outcome: Callable[[TargetOutcome, datetime], TargetOutcome | None] | None = None,
    ) -> None:
        if write_concurrency < 1:
            raise ValueError(f"write_concurrency must be at least 1, not {write_concurrency}")
        if not state_refresh_seconds >= 0:
            raise ValueError(f"state_refresh_seconds must be 0 or more, not {state_refresh_seconds}")
        self._refresh = float(state_refresh_seconds)
        self._settings = settings
        self._reader = reader
        self._pods = pods
        self._workloads = workloads
        self._scales = scales
        self._events = events
        self._status = status
        self._states = states
        self._write_concurrency = write_concurrency
        self._may_write = may_write
        self._shadows = shadows
        self._annotator = annotator
        # Given each target's outcome as soon as it is final, on a writing tick (the daemon's flight recorder, log
        # line and metrics). What it returns, when not None, is what the tick's report keeps of the outcome: the
        # tick then lets the decision go at once (~1.5 KiB per target that every target's held to the tick's end).
        self._on_outcome = on_outcome
        self._memory: dict[TargetKey, Memory] = {}
        self._selectors: dict[TargetKey, _Selector] = {}
        self._offsets: dict[TargetKey, timedelta] = {}
        # Per target, the stored status (`Memory.stored`, by identity) and the `_status_key` of the last decision
        # whose full status plan found nothing to store at once against it (`_plan_status`).
        self._clean: dict[TargetKey, tuple[bytes, tuple[Any, ...]]] = {}

    def _offset(self, key: TargetKey) -> timedelta:
        """The target's place in the status refresh period (`core.state.refresh_offset`), computed once."""
        offset = self._offsets.get(key)
        if offset is None:
            offset = self._offsets[key] = refresh_offset(str(key), self._refresh)
        return offset

    def forget(self, key: TargetKey | None = None) -> None:
        """Drop the in-memory state of one target or all (a new leadership epoch): read from storage when next seen."""
        if key is None:
            self._memory.clear()
            self._selectors.clear()
            self._offsets.clear()
            self._clean.clear()
            return
        self._memory.pop(key, None)
        self._selectors.pop(key, None)
        self._offsets.pop(key, None)
        self._clean.pop(key, None)

    # --- the tick ---------------------------------------------------------------------------------------

    def reconcile(self, targets: Sequence[Target], *, now: datetime, write: bool = True) -> TickReport:
        """Decide every target of `targets` at `now`; with `write` False nothing is written anywhere (plan)."""
        started = time.monotonic()
        works = [_Work(target=t, started=started) for t in targets]
        for work in works:
            self._guard(work, lambda w: self._restore(w, now=now, write=write))
        self._read_scales(works)
        self._index_selectors(works, now)
        self._select_all(works)
        pass_seconds, queries = self._read_metrics(works, now)
        outcomes: list[TargetOutcome | None] = [None] * len(works)
        on_outcome = self._on_outcome if write else None

        def finish(index: int, work: _Work) -> None:
            """The target's tick is over: its memory kept, its outcome made and handed on at once (the
            recorder then lets the previous one go during the tick, not after it)."""
            if write and work.decision is not None and not work.done:
                self._remember(work)
            outcome = outcomes[index] = self._outcome(work, now)
            if on_outcome is not None:
                try:
                    kept = on_outcome(outcome, now)
                except Exception as err:  # what the outcome is handed to must not end the tick
                    log.error("outcome_handler_failed", target=str(work.key), error=f"{type(err).__name__}: {err}")
                    return
                if kept is not None:
                    outcomes[index] = kept
                    # The target's tick is over: nothing reads them.
                    work.decision, work.status_plan, work.compacted = None, None, None

        self._decide_and_write(works, now, write=write, finish=finish)
        return TickReport(
            started=now,
            outcomes=tuple(cast(list[TargetOutcome], outcomes)),
            seconds=time.monotonic() - started,
            metric_queries=queries,
            metric_seconds=pass_seconds,
            recorded=on_outcome is not None,
        )

    def _guard(self, work: _Work, step: Callable[[_Work], None]) -> None:
        """Run one step for one target; anything it raises ends that target's tick as an internal error."""
        if work.done:
            return
        try:
            step(work)
        except Exception as err:
            log.error(
                "target_failed",
                target=str(work.key),
                error=f"{type(err).__name__}: {err}",
                traceback="".join(traceback.format_exception(err)),
            )
            work.done = True
            work.error = f"internal error: {type(err).__name__}: {err}"
            work.error_type = "internal"

    # --- 1. memory ---------------------------------------------------------------------------------------

    def _restore(self, work: _Work, *, now: datetime, write: bool) -> None:
        memory = self._memory.get(work.key)
        if memory is None:
            try:
                memory = self._load(work.target, now)
            except KubeError as err:
                # Unreachable, not unreadable: deciding on an empty memory could shorten a window; hold this tick.
                log.warning("stored_status_unreachable", target=str(work.key), error=str(err))
                work.done = True
                work.error, work.error_type = f"stored state could not be read: {err}", "kube"
                return
            if write:
                self._memory[work.key] = memory
        elif memory.stored is not None and isinstance(work.target.stored, CachedObject):
            # The status this daemon stored, as the cache got it back: one copy of it, the cache's.
            packed = work.target.stored.packed_status()
            if packed is not None and packed is not memory.stored and packed == memory.stored:
                memory = replace(memory, stored=packed)
                if write:
                    self._memory[work.key] = memory
        work.memory = memory

    def _load(self, target: Target, now: datetime) -> Memory:
        where = target.source or str(target.key)
        packed = None
        if target.origin == Origin.RESOURCE:
            stored = (target.stored or {}).get("status")
            document = stored if isinstance(stored, Mapping) else None
            if document is not None and isinstance(target.stored, CachedObject):
                packed = target.stored.packed_status()  # the cache's copy of it, kept as is
        elif self._states is None:
            return Memory()
        else:
            try:
                document = self._states.load(target.key.namespace, target.key.name)
            except UnreadableState as err:
                log.warning("stored_status_unreadable", where=where, error=str(err))
                return Memory()
        return memory_from_status(
            document,
            where=where,
            now=now,
            refresh_seconds=self._refresh,
            offset=self._offset(target.key),
            packed=packed,
        )

    # --- 2. scales, pods, the selector index ---------------------------------------------------------------

    def _read_scales(self, works: Sequence[_Work]) -> None:
        custom: list[_Work] = []
        for work in works:
            if work.done:
                continue
            work.pause = work.target.autoscaler.pause  # the target's own annotation is read from the cache below
            ref = work.target.autoscaler.spec.scale_target_ref
            group = ref.api_version.partition("/")[0] if "/" in ref.api_version else ""
            informer_kind = ref.kind in APPS_KINDS and group == "apps" and ref.kind in self._workloads.informers
            if not informer_kind:
                custom.append(work)
                continue
            cached = self._workloads.scale(work.key.namespace, ref.kind, ref.name)
            if cached is None:
                work.scale = ScaleFailure(f'{APPS_KINDS[ref.kind]}.apps "{ref.name}" not found')
            else:
                work.scale, work.resource_version = cached.scale, cached.resource_version
                on_target = pause_from_annotations(cached.annotations, source=f"{ref.kind} {ref.name}")
                work.pause = combine([work.target.autoscaler.pause, on_target])
        if not custom:
            return

        def read(work: _Work) -> None:
            ref = work.target.autoscaler.spec.scale_target_ref
            try:
                got = self._scales.read_scale(work.key.namespace, ref)
            except KubeError as err:
                work.scale = ScaleFailure(str(err))
                return
            work.scale, work.resource_version = got.scale, got.resource_version

        with ThreadPoolExecutor(max_workers=min(self._write_concurrency, len(custom))) as pool:
            list(pool.map(lambda w: self._guard(w, read), custom))

    def _index_selectors(self, works: Sequence[_Work], now: datetime) -> None:
        for work in works:
            if isinstance(work.scale, Scale):  # a failed read keeps the last selector: the target still owns its pods
                self._selectors[work.key] = _Selector(work.key.namespace, work.scale.selector, now)

    def _select(self, namespace: str, selector: str, tick: _Owners) -> tuple[Pod, ...]:
        """The cached pods of `namespace` that `selector` selects, once per selector and tick."""
        found = tick.selected.get(selector)
        if found is not None:
            return found
        if not selector:
            found = ()
        else:
            try:
                found = self._pods.pods(namespace, selector)
            except SelectorSyntaxError:
                found = ()
        tick.selected[selector] = found
        return found

    def _grouped_selectors(self) -> dict[str, _Owners]:
        """The selector index grouped by namespace, for one tick (who selects each pod: filled on first use)."""
        grouped: dict[str, _Owners] = {}
        for key, entry in self._selectors.items():
            grouped.setdefault(entry.namespace, _Owners()).selectors[str(key)] = entry.selector
        return grouped

    def _owners(self, namespace: str, tick: dict[str, _Owners]) -> _Owners:
        """The namespace's selectors and, per pod name, the autoscalers whose selector matches it (once per tick)."""
        found = tick.setdefault(namespace, _Owners())
        if not found.built:
            owned = found.pods
            for key, selector in found.selectors.items():
                for pod in self._select(namespace, selector, found):
                    other = owned.setdefault(pod.name, key)
                    if other == key:
                        continue
                    if isinstance(other, str):
                        owned[pod.name] = {other, key}
                    else:
                        other.add(key)
            found.built = True
        return found

    def _select_all(self, works: Sequence[_Work]) -> None:
        """Every due target's pods and the autoscalers controlling them; the tick's index of selections goes
        when this returns (each due target keeps its own pods)."""
        owners = self._grouped_selectors()
        for work in works:
            self._guard(work, lambda w: self._select_pods_and_controllers(w, owners))

    def _select_pods_and_controllers(self, work: _Work, tick: dict[str, _Owners]) -> None:
        if not isinstance(work.scale, Scale):
            return
        work.pods = self._select(
            work.key.namespace, work.scale.selector, tick.setdefault(work.key.namespace, _Owners())
        )
        if not work.pods:
            return
        owners = self._owners(work.key.namespace, tick)
        keys: set[str] = set()
        for pod in work.pods:
            owner = owners.pods.get(pod.name)
            if isinstance(owner, str):
                keys.add(owner)
            elif owner is not None:
                keys.update(owner)
        index = owners.selectors
        work.controllers = controlling_autoscalers(work.pods, {key: index[key] for key in keys if key in index})

    # --- 3. metrics --------------------------------------------------------------------------------------

    def _requests(self, work: _Work, now: datetime, into: list[MetricRequest]) -> None:
        """This target's metric requests, appended to `into` (keyed by target and index)."""
        if not isinstance(work.scale, Scale):
            return
        spec = work.target.autoscaler.spec
        work.metrics = [MetricFailure("not read") for _ in spec.metrics]
        extra = spec.extra_metrics.inputs() if spec.extra_metrics is not None else ()
        work.extra_inputs = [MetricFailure("not read") for _ in extra]
        if len(work.controllers) > 1 or work.pause is not None:
            return  # refused before any metric is read, as validateAndParseSelector does; or paused
        context = ReadContext(
            namespace=work.key.namespace,
            pods=work.pods,
            selector=work.scale.selector,
            now=now,
            sync_period_seconds=work.target.sync_period_seconds,
            target=spec.scale_target_ref,
        )
        autoscaler = work.target.autoscaler
        models = autoscaler.metric_bindings
        mine = [
            MetricRequest(metric, context, binding=models[i] if i < len(models) else None, key=(work.key, i))
            for i, metric in enumerate(spec.metrics)
        ]
        # The drain time's and the formula's inputs, in the same pass (keyed after the metrics).
        bindings = autoscaler.input_bindings
        mine += [
            MetricRequest(item.metric, context, binding=bindings[j], key=(work.key, len(spec.metrics) + j))
            for j, item in enumerate(extra)
        ]
        into.extend(mine)
        cost = spec.pod_deletion_cost
        if cost is not None:
            binding = autoscaler.cost_binding
            into.append(MetricRequest(cost.metric, context, binding=binding, key=(work.key, COST_METRIC)))

    def _read_metrics(self, works: Sequence[_Work], now: datetime) -> tuple[float, int]:
        """ONE pass over every metric of every target; a `MetricsError` becomes the core's `MetricFailure`."""
        requests: list[MetricRequest] = []
        for work in works:
            self._guard(work, lambda w: self._requests(w, now, requests))
        if not requests:
            return 0.0, 0
        result = self._reader.read(requests)
        by_key = {work.key: work for work in works}
        for request, outcome in zip(requests, result.outcomes, strict=True):
            key, i = cast(tuple[TargetKey, int | str], request.key)
            work = by_key[key]
            value = MetricFailure(str(outcome)) if isinstance(outcome, MetricsError) else outcome
            if i == COST_METRIC:
                work.cost_reading = value
            elif cast(int, i) < len(work.metrics):
                work.metrics[cast(int, i)] = value
            else:
                work.extra_inputs[cast(int, i) - len(work.metrics)] = value
        return result.duration_seconds, result.queries_sent

    # --- 4. decide -----------------------------------------------------------------------------------------

    def _decide_on(self, work: _Work, scale: Scale | ScaleFailure, now: datetime) -> Decision:
        memory = work.memory
        return decide(
            spec=work.target.autoscaler.spec,
            scale=scale,
            pods=work.pods,
            metrics=work.metrics if isinstance(scale, Scale) else [MetricFailure("not read")] * len(work.metrics),
            state=memory.state,
            settings=self._settings,
            now=now,
            conditions=memory.conditions,
            last_scale_time=memory.last_scale_time,
            previous_desired_replicas=memory.desired_replicas,
            controllers=work.controllers,
            pause=work.pause,
            shadow=work.shadow,
            inputs=work.extra_inputs
            if isinstance(scale, Scale)
            else [MetricFailure("not read")] * len(work.extra_inputs),
        )

    def _read_shadow(self, work: _Work, now: datetime) -> None:
        """Shadow mode: what the autoscaler this spec would replace wants (by default the HPA named as the target)."""
        autoscaler = work.target.autoscaler
        if autoscaler.mode != SHADOW:
            return
        named = autoscaler.shadow or ShadowSpec()
        hpa = named.horizontal_pod_autoscaler or autoscaler.spec.scale_target_ref.name
        if self._shadows is None:
            work.shadow = ShadowReading(f"HorizontalPodAutoscaler {hpa}", now, error="this daemon reads no HPAs")
            return
        work.shadow = self._shadows.read(work.key.namespace, now=now, hpa=hpa, scaled_object=named.scaled_object or "")

    def _decide(self, work: _Work, now: datetime) -> None:
        if work.scale is None:
            return
        self._read_shadow(work, now)
        if isinstance(work.scale, ScaleFailure):
            spec = work.target.autoscaler.spec
            work.metrics = [MetricFailure("not read") for _ in spec.metrics]
            extra = spec.extra_metrics.inputs() if spec.extra_metrics is not None else ()
            work.extra_inputs = [MetricFailure("not read") for _ in extra]
        work.inputs = work.memory
        work.decision = self._decide_on(work, work.scale, now)
        if work.target.dry_run:
            work.decision = self._as_dry_run(work, work.decision)

    def _as_dry_run(self, work: _Work, decision: Decision) -> Decision:
        memory = work.memory
        return dry_run(
            decision, state=memory.state, conditions=memory.conditions, last_scale_time=memory.last_scale_time
        )

    # --- 5. writes -----------------------------------------------------------------------------------------

    def _decide_and_write(
        self, works: Sequence[_Work], now: datetime, *, write: bool, finish: Callable[[int, _Work], None]
    ) -> None:
        """Each target decided, then written: on this thread when it has nothing to send (most of a steady
        tick), else queued for the write pool, which writes the queue whenever it holds WRITE_BATCH_PER_WORKER
        targets per worker (this thread waiting); `finish` on this thread as each target is done (a queued one
        once its batch is written: its log line and recorder entry made by one thread, not by the pool's threads
        in turn, which fought over the log handler's lock). Planning every status first held all of a tick's
        documents at once (~12 KiB per target on a tick that stores every status); writing while this thread
        decides made the two fight for the interpreter (~30 % more CPU per tick)."""
        pool: ThreadPoolExecutor | None = None
        queued: list[tuple[int, _Work]] = []

        def write_one(item: tuple[int, _Work]) -> None:
            self._guard(item[1], lambda w: self._write(w, now))

        def flush() -> None:
            nonlocal pool
            if not queued:
                return
            if pool is None:
                pool = ThreadPoolExecutor(max_workers=self._write_concurrency, thread_name_prefix="write")
            list(pool.map(write_one, queued))
            for index, work in queued:
                finish(index, work)
            queued.clear()

        try:
            for index, work in enumerate(works):
                self._guard(work, lambda w: self._decide(w, now))
                if not write or work.decision is None or work.done:
                    finish(index, work)
                    continue
                needs_io = False

                def check(w: _Work) -> None:
                    nonlocal needs_io
                    needs_io = self._needs_io(w, now)
                    if not needs_io:
                        self._write(w, now)

                self._guard(work, check)
                if not needs_io or work.done:
                    finish(index, work)
                    continue
                queued.append((index, work))
                if len(queued) >= WRITE_BATCH_PER_WORKER * self._write_concurrency:
                    flush()
            flush()
        finally:
            if pool is not None:
                pool.shutdown(wait=True)

    def _needs_io(self, work: _Work, now: datetime) -> bool:
        """Whether writing this target may call the API server: a scale write, an Event, or a status to store."""
        decision = work.decision
        assert decision is not None
        if decision.rescale and not work.target.dry_run:
            return True
        if self._events is not None and decision.events:
            return True
        plan = self._plan_status(work, now)
        return plan is not None and bool(plan[2])

    def _write(self, work: _Work, now: datetime) -> None:
        assert work.decision is not None
        if work.decision.rescale and not work.target.dry_run:
            self._write_scale(work, now)
        if not self._may_write():
            work.error, work.error_type = "not the leader: events and status not written", "fenced"
            return
        self._record_events(work)
        try:
            self._write_status(work, now)
        finally:
            plan = work.status_plan
            if plan is not None and plan[1] is not None:  # written (or not): its document is not needed again
                work.status_plan = (plan[0], None, "")

    def _write_scale(self, work: _Work, now: datetime) -> None:
        assert work.decision is not None and isinstance(work.scale, Scale)
        ref = work.target.autoscaler.spec.scale_target_ref
        decided: list[Decision] = [work.decision]

        def desired(scale: Scale) -> int | None:
            if scale != work.scale:  # a re-read after 409: decided again on it, with the same readings
                work.scale = scale
                decided.append(self._decide_on(work, scale, now))
            decision = decided[-1]
            if not decision.rescale or not self._may_write():
                return None
            if decision.desired_replicas is not None and decision.desired_replicas < scale.spec_replicas:
                self._spare_busy_pods(work)
            return decision.desired_replicas

        known = (work.scale, work.resource_version) if work.resource_version else None
        try:
            result = self._scales.write_scale(work.key.namespace, ref, desired, known=known)
        except KubeError as err:
            memory = work.memory
            work.scale_write_error = str(err)
            work.decision = failed_rescale(
                decided[-1],
                str(err),
                reference=format_reference(ref),
                state=memory.state,
                conditions=memory.conditions,
                previous_desired_replicas=memory.desired_replicas,
                last_scale_time=memory.last_scale_time,
                now=now,
            )
            work.error, work.error_type = f"scale write failed: {err}", "kube"
            log.warning("scale_write_failed", target=str(work.key), error=str(err))
            return
        work.decision = decided[-1]
        work.wrote_scale = result.written
        if not result.written and work.decision.rescale:
            # Not written: the fence closed, or the re-read scale already has the desired count. The decision's
            # state and lastScaleTime hold a scale that never happened: neither stored nor remembered.
            work.unwritten = True
            if not self._may_write():
                work.error, work.error_type = "not the leader: the scale was not written", "fenced"
            work.decision = not_written(work.decision)

    def _spare_busy_pods(self, work: _Work) -> None:
        """Before a scale-down: each pod's pod-deletion-cost from its per-pod metric (core/deletion_cost.py),
        so the ReplicaSet controller removes the least busy first. Once per tick; never stops the scale write."""
        if work.costs_set or self._annotator is None or work.target.autoscaler.spec.pod_deletion_cost is None:
            return
        work.costs_set = True
        plan = plan_deletion_costs(pods=work.pods, reading=work.cost_reading or MetricFailure("not read"))
        failed: tuple[tuple[str, str], ...] = ()
        try:
            if plan.patches:
                failed = self._annotator.set_deletion_costs(work.key.namespace, plan.patches).failed
        except Exception as err:  # the scale-down was decided on the scaling metrics: it goes ahead regardless
            failed = tuple((p.pod, f"{type(err).__name__}: {err}") for p in plan.patches)
        emit = log.warning if plan.error or failed else log.info
        emit(
            "pod_deletion_costs",
            target=str(work.key),
            patched=len(plan.patches) - len(failed),
            unchanged=plan.unchanged,
            unsampled=len(plan.unsampled),
            failed=len(failed),
            error=plan.error or (failed[0][1] if failed else ""),
        )

    def _involved(self, target: Target) -> InvolvedObject:
        if target.origin == Origin.RESOURCE:
            return InvolvedObject.autoscaler(target.key.namespace, target.key.name, target.uid)
        return InvolvedObject.target(target.key.namespace, target.autoscaler.spec.scale_target_ref)

    def _record_events(self, work: _Work) -> None:
        if self._events is None or work.decision is None:
            return
        involved = self._involved(work.target)
        for event in work.decision.events:
            if event.reason == EventReason.SUCCESSFUL_RESCALE and not work.wrote_scale:
                continue  # a rescale that was not written is no SuccessfulRescale
            self._events.record(involved, type=event.type, reason=event.reason, message=event.message)

    def _status_of(self, work: _Work) -> AutoscalerStatus:
        decision = work.decision
        assert decision is not None
        spec = work.target.autoscaler.spec
        statuses = decision.status.current_metrics
        current = decision.status.current_replicas
        if current is None:
            current = work.memory.current_replicas or 0
        return AutoscalerStatus(
            current_replicas=current,
            desired_replicas=decision.status.desired_replicas or 0,
            last_scale_time=decision.status.last_scale_time,
            current_metrics=tuple(metric_status(s) for s in statuses) if statuses else (),
            conditions=decision.conditions,
            observed_generation=work.target.generation,
            behavior_state=work.compacted_state(),
            reference=format_reference(spec.scale_target_ref),
            targets=format_targets(spec.metrics, statuses),
            shadow=shadow_status(decision.shadow) if decision.shadow is not None else None,
        )

    def _plan_status(self, work: _Work, now: datetime) -> tuple[Decision, dict[str, Any] | None, str] | None:
        """The status document for the target's current decision and why it must be stored ("": it may wait);
        None when the target has no store. Computed once per decision (a failed scale write makes a new one).

        Most targets of a steady tick store nothing: when the decision's `_status_key` equals the one of an
        earlier decision whose full plan, against the same stored document, found nothing to store at once,
        this one finds nothing either (`write_reason` reads nothing else but the refresh time, checked here), so
        the document is not made (it cost ~80 us per target: rendering it, decoding the stored one, comparing)."""
        if (self._status if work.target.origin == Origin.RESOURCE else self._states) is None:
            return None
        decision = work.decision
        assert decision is not None
        if work.status_plan is not None and work.status_plan[0] is decision:
            return work.status_plan
        memory = work.memory
        key = _status_key(work)
        clean = self._clean.get(work.key)
        if (
            key is not None
            and clean is not None
            and clean[0] is memory.stored
            and memory.saved_at is not None
            and clean[1] == key
            and now < refresh_due(memory.saved_at, refresh_seconds=self._refresh, offset=self._offset(work.key))
        ):
            work.status_plan = (decision, None, "")
            return work.status_plan
        status = self._status_of(work)
        saved = memory.document
        document = status_to_json(status, previous=saved, now=now)
        reason = write_reason(
            saved,
            document,
            saved_at=memory.saved_at,
            now=now,
            refresh_seconds=self._refresh,
            offset=self._offset(work.key),
        )
        if reason or key is None or memory.stored is None:
            self._clean.pop(work.key, None)
        else:
            self._clean[work.key] = (memory.stored, key)
        # A status that need not be stored is not kept to the tick's end (~4 KiB per target).
        work.status_plan = (decision, document if reason else None, reason)
        return work.status_plan

    def _write_status(self, work: _Work, now: datetime) -> None:
        """Store the status when `persist.write_reason` says so: at once on a change that matters, otherwise
        at most every `state_refresh_seconds`, each target at its own place in the period (docs/daemon.md,
        "State persistence")."""
        target = work.target
        if work.unwritten:
            return  # the decision's scale never happened: the stored status stays as it was
        plan = self._plan_status(work, now)
        if plan is None or not plan[2]:
            return
        document = plan[1]
        assert work.decision is not None and document is not None
        try:
            if target.origin == Origin.RESOURCE:
                assert self._status is not None
                # The document made against what this daemon stored last (write_reason compared with it; the
                # cache's copy may lag it), written as it is: the stored status is the one remembered.
                work.wrote_status = self._status.write_document(
                    target.key.namespace, target.key.name, document, current=target.stored, may_write=self._may_write
                )
                if not work.wrote_status:  # the fence closed during the write's 409 re-reads
                    if not work.error:
                        work.error, work.error_type = "not the leader: the status was not written", "fenced"
                    return
            else:
                assert self._states is not None
                self._states.save(target.key.namespace, target.key.name, document)
                work.wrote_status = True
            work.memory = replace(
                work.memory, stored=stored_status(document), saved_at=newest_recommendation_time(work.decision.state)
            )
        except KubeError as err:
            log.warning("status_write_failed", target=str(work.key), error=str(err))
            if not work.error:
                work.error, work.error_type = f"status write failed: {err}", "kube"

    # --- after the tick --------------------------------------------------------------------------------------

    def _remember(self, work: _Work) -> None:
        decision = work.decision
        assert decision is not None
        if work.unwritten:
            return  # the previous memory stays: this decision's scale event and lastScaleTime never happened
        # Only the newest recommendation of each count: the windows' results are the same (core.state).
        self._memory[work.key] = Memory(
            state=work.compacted_state(),
            conditions=decision.conditions,
            last_scale_time=decision.status.last_scale_time,
            desired_replicas=decision.status.desired_replicas,
            current_replicas=(
                decision.status.current_replicas
                if decision.status.current_replicas is not None
                else work.memory.current_replicas
            ),
            stored=work.memory.stored,
            saved_at=work.memory.saved_at,
        )

    def _outcome(self, work: _Work, now: datetime) -> TargetOutcome:
        snapshot = snapshot_of(work, settings=self._settings, now=now) if work.decision is not None else None
        return TargetOutcome(
            key=work.key,
            target=work.target,
            decision=work.decision,
            snapshot=snapshot,
            wrote_scale=work.wrote_scale,
            wrote_status=work.wrote_status,
            dry_run=work.target.dry_run,
            seconds=time.monotonic() - work.started,
            error=work.error,
            error_type=work.error_type,
        )


__all__ = ["Reconciler", "snapshot_of"]
