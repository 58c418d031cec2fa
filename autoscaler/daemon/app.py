"""The daemon's running shell: the tick loop, leadership, start-up and shutdown, and `autoscaler run`.

Each tick (APScheduler's BackgroundScheduler, every `tickSeconds`, one at a time, late ticks coalesced) reads
the clock once, refreshes the spec sources, picks the due targets (never evaluated, or last evaluated at
least their sync period ago), hands them to the reconciler with `now`, and reports what came back (logs,
/metrics, the flight recorder, health). With leader election on, only the leader reconciles; a standby keeps
its caches and sources warm. SIGTERM/SIGINT stop the scheduling, give the tick in flight
`shutdownGraceSeconds`, release the lease and stop the caches. The reconciling itself lives in
reconciler.py; this module owns only the schedule and the per-target bookkeeping.
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import FrameType
from typing import Any, Protocol, cast

import structlog
from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobExecutionEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

from autoscaler.daemon.check import staleness_warnings
from autoscaler.daemon.config import DaemonConfig
from autoscaler.daemon.logs import batched_lines, write_pending
from autoscaler.daemon.model import Origin, Target, TargetKey, TargetOutcome, TickReport
from autoscaler.daemon.observe import Observer, outcome_error
from autoscaler.daemon.recorder import FlightRecorder
from autoscaler.daemon.server import Check, Endpoints, HttpServer, RequestError
from autoscaler.daemon.sources import FileSource, ResourceSource, SpecProblem, SpecSource, TargetDefaults, merge
from autoscaler.metrics.evaluate import collector_paused
from autoscaler.spec.objects import Autoscaler

log = structlog.get_logger(__name__)

# Waiting for the caches' first list at start-up; past it the daemon exits with a clear line.
CACHE_SYNC_TIMEOUT_SECONDS = 300.0
# /healthz: the loop is alive while its last tick ended within this many tick periods (+ that tick's length).
HEALTHY_TICKS = 3
# ... or while the tick in flight has run less than this: a slow tick (retries waiting out Retry-After, a slow
# Prometheus) is progress, not a hung loop, and a liveness probe must not restart the daemon for it.
TICK_IN_FLIGHT_LIMIT_SECONDS = 120.0
# The cyclic collector's full run, after a tick, at most this often (docs/daemon.md, "The loop").
COLLECT_EVERY_SECONDS = 60.0
# A skipped tick (overrun, missed) is logged at most once in this many seconds, with the count since.
SKIP_LOG_SECONDS = 60.0
# `autoscaler run` interrupted by SIGINT before the loop started: 128 + SIGINT, as a shell reports Ctrl-C.
EXIT_SIGINT = 128 + 2
# The Warning Event on a PrometheusAutoscaler object that does not validate.
INVALID_SPEC_REASON = "InvalidSpec"


class StartupError(Exception):
    """The daemon cannot start (bad settings, API server unreachable, caches never synced): one clear line."""


class StartupInterrupted(BaseException):
    """SIGINT or SIGTERM before the loop started (a BaseException, as KeyboardInterrupt: no handler takes it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _interrupt_startup(signum: int, frame: FrameType | None) -> None:
    raise StartupInterrupted(signum)


def _on_startup_signals() -> None:
    """Until the loop runs, SIGINT and SIGTERM end the start-up (waits on the API server and caches included)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt_startup)
        signal.signal(signal.SIGINT, _interrupt_startup)


class TickReconciler(Protocol):
    """What the loop needs from `reconciler.Reconciler`."""

    def reconcile(self, targets: Sequence[Target], *, now: datetime, write: bool = True) -> TickReport: ...

    def forget(self, key: TargetKey | None = None) -> None: ...


class Cache(Protocol):
    """PodCache, WorkloadCache, AutoscalerCache."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def has_synced(self) -> bool: ...

    def wait_for_sync(self, timeout: float | None = None) -> bool: ...


class StateStore(Protocol):
    """`kube.state.ConfigMapStateStore`: the stored state of file specs."""

    def delete(self, namespace: str, name: str) -> None: ...


class Elector(Protocol):
    """`kube.leader.LeaderElector`: started and stopped by the daemon; `stop()` releases the lease."""

    def is_leader(self) -> bool: ...

    @property
    def epoch(self) -> int: ...

    def start(self) -> None: ...

    def stop(self, timeout: float = 5.0) -> None: ...


def due_targets(targets: Iterable[Target], last: Mapping[TargetKey, datetime], *, now: datetime) -> list[Target]:
    """The targets never evaluated, or last evaluated at least their own sync period before `now`."""
    due = []
    for target in targets:
        when = last.get(target.key)
        if when is None or (now - when).total_seconds() >= target.sync_period_seconds:
            due.append(target)
    return due


@dataclass(slots=True)
class _Health:
    started: float | None = None  # monotonic time the loop started
    last_end: float | None = None  # monotonic time the last tick ended
    last_seconds: float = 0.0
    ticks: int = 0
    in_flight: float | None = None  # monotonic time the tick in flight started


@dataclass(slots=True)
class _Closers:
    """Things built for the daemon that must be closed after it stops (clients, the metrics reader)."""

    items: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        items, self.items = self.items, []
        for close in reversed(items):
            try:
                close()
            except Exception as err:  # closing is best effort at exit
                log.warning("close_failed", error=str(err))


class Daemon:
    """The loop around a reconciler. `tick()` runs one tick now (tests call it with a fake clock)."""

    def __init__(
        self,
        *,
        reconciler: TickReconciler,
        sources: Sequence[SpecSource],
        observer: Observer,
        recorder: FlightRecorder,
        tick_seconds: float,
        shutdown_grace_seconds: float,
        caches: Sequence[Cache] = (),
        elector: Elector | None = None,
        leadership_changed: threading.Event | None = None,
        http_address: str | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
        cache_sync_timeout_seconds: float = CACHE_SYNC_TIMEOUT_SECONDS,
        closers: Sequence[Callable[[], None]] = (),
        states: StateStore | None = None,
        unguarded: Callable[[Autoscaler], list[tuple[str, str]]] | None = None,
    ) -> None:
        self.reconciler = reconciler
        self.sources = list(sources)
        self.observer = observer
        self.recorder = recorder
        self.tick_seconds = tick_seconds
        self.shutdown_grace_seconds = shutdown_grace_seconds
        self.caches = list(caches)
        self.elector = elector
        self.states = states
        # Set by the elector's callbacks (its own thread); the tick acts on it (forget, re-evaluate all).
        self._leadership_changed = leadership_changed or threading.Event()
        self._clock = clock
        self._monotonic = monotonic
        self._cache_sync_timeout = cache_sync_timeout_seconds
        self._closers = _Closers(list(closers))
        self._tick_lock = threading.Lock()
        self._stopping = threading.Event()
        self._last: dict[TargetKey, datetime] = {}
        self._known: dict[TargetKey, Origin] = {}
        self._duplicates: set[tuple[TargetKey, str]] = set()
        # What a spec's metrics lack (check.staleness_warnings), logged once per spec as read (the object kept).
        self._unguarded = unguarded
        self._checked: dict[TargetKey, Autoscaler] = {}
        self._was_leader: bool | None = None
        self._epoch: int | None = None  # the elector's epoch at the last tick
        self._health = _Health()
        self._scheduler: BackgroundScheduler | None = None
        self._skip_lock = threading.Lock()
        self._skips: dict[str, int] = {}  # by reason: skipped since the last line logged
        self._collected_at: float | None = None  # monotonic time of the last full collection, once the daemon runs it
        self._skip_logged: dict[str, float] = {}  # by reason: monotonic time of the last line
        self.http: HttpServer | None = None
        if http_address is not None:
            endpoints = Endpoints(
                metrics=observer.exposition, healthz=self.healthz, readyz=self.readyz, snapshots=self._snapshots
            )
            try:
                self.http = HttpServer(http_address, endpoints)
            except ValueError as err:
                raise StartupError(f"http.listenAddress: {err}") from err
            except OSError as err:  # the address is in use, not ours to bind, or not an address of this host
                raise StartupError(f"cannot listen on {http_address}: {err.strerror or err}") from err

    # --- one tick ------------------------------------------------------------------------------------

    def refresh(self) -> list[Target]:
        """Every source's targets, merged (the custom resource wins a clash); vanished targets forgotten."""
        groups = []
        failed = False
        for source in self.sources:
            try:
                groups.append(source.refresh())
            except Exception:  # a source is not meant to raise; one that does must not stop the loop
                log.exception("source_failed", origin=str(source.origin))
                self.observer.error("source")
                groups.append([])
                failed = True
            self.observer.set_specs(str(source.origin), source.counts())
        targets, duplicates = merge(groups)
        current = {(d.key, d.ignored) for d in duplicates}
        for dup in duplicates:
            if (dup.key, dup.ignored) not in self._duplicates:
                log.warning("spec_duplicate", target=str(dup.key), kept=dup.kept, ignored=dup.ignored)
                self.observer.error("spec_duplicate")
        self._duplicates = current
        known = {t.key: t.origin for t in targets}
        for gone in sorted(self._known.keys() - known.keys()):
            log.info("target_removed", target=str(gone))
            self._last.pop(gone, None)
            self.observer.forget(gone)
            self.recorder.forget(gone)
            self.reconciler.forget(gone)
            if self._known[gone] == Origin.FILE and not failed:
                self._delete_state(gone)
        self._known = known
        self._warn_unguarded(targets)
        return targets

    def _warn_unguarded(self, targets: Sequence[Target]) -> None:
        """A warning line per metric a new or changed spec reads without a staleness check (as `autoscaler check
        --config` prints for files): custom resources are never checked before the daemon reads them."""
        if self._unguarded is None:
            return
        checked: dict[TargetKey, Autoscaler] = {}
        for target in targets:
            checked[target.key] = target.autoscaler
            if self._checked.get(target.key) is target.autoscaler:
                continue
            try:
                warnings = self._unguarded(target.autoscaler)
            except Exception as err:  # a warning, never a reason to stop the tick
                log.error("staleness_check_failed", target=str(target.key), error=f"{type(err).__name__}: {err}")
                continue
            for path, message in warnings:
                log.warning("metric_without_staleness_check", target=str(target.key), field=path, message=message)
        self._checked = checked

    def _delete_state(self, key: TargetKey) -> None:
        """A file spec removed from its source: its stored state goes too (the leader's job; a re-added spec
        starts afresh, as a deleted and re-created HPA does)."""
        from autoscaler.kube.errors import KubeError

        if self.states is None or (self.elector is not None and not self.elector.is_leader()):
            return
        try:
            self.states.delete(key.namespace, key.name)
        except KubeError as err:  # not retried: `kubectl delete configmap -l` cleans up (docs/daemon.md)
            log.warning("state_delete_failed", target=str(key), error=str(err))
            self.observer.error("state_delete")
        else:
            log.info("state_deleted", target=str(key))

    def _leading(self) -> bool:
        leading = self.elector is None or self.elector.is_leader()
        epoch = None if self.elector is None else self.elector.epoch
        # A loss and regain between two ticks leaves `leading` unchanged; the epoch tells it. The elector's callbacks
        # (the event) only hint: one can come after a tick already saw the change it reports (a replica frozen past
        # its lease, then resumed), and counting it again logged the change twice and forgot the memory again.
        hinted = self._leadership_changed.is_set()
        self._leadership_changed.clear()
        moved = (self._was_leader is not None and leading != self._was_leader) or (
            self._epoch is not None and epoch != self._epoch
        )
        # The first tick: a replica that starts leading says so, even when the elector's callback comes later.
        first = self._was_leader is None and self.elector is not None
        changed = moved or (first and (hinted or leading))
        # What the reconciler holds in memory is stale only if another replica may have led since: a new epoch. A
        # lease lost and taken back while it still named this replica (renewals that failed for a while) is the
        # same epoch: nobody led in between, and the memory continues the windows where a restore from the stored
        # status would restart them (`persist.memory_from_status`).
        takeover = self._epoch is not None and epoch != self._epoch
        self._epoch = epoch
        if changed:
            log.info("leadership_changed", leader=leading, epoch=epoch)
            if takeover:
                self.reconciler.forget()
            self._last.clear()
            if not leading:  # a standby evaluates nothing: its per-target series would show the old leader's view
                self.observer.forget_all()
        if changed or self._was_leader is None:
            self.observer.set_leader(leading)
        self._was_leader = leading
        return leading

    def tick(self) -> TickReport | None:
        """Refresh the sources and, when leading, reconcile the due targets; None when nothing was reconciled."""
        with self._tick_lock, collector_paused():
            if self._stopping.is_set():
                return None
            started = self._monotonic()
            self._health.in_flight = started
            now = self._clock()
            report: TickReport | None = None
            refreshed = started
            try:
                targets = self.refresh()
                refreshed = self._monotonic()
                leading = self._leading()
                if leading:
                    due = due_targets(targets, self._last, now=now)
                    if due:
                        report = self._reconcile(due, now=now)
            except Exception:  # the loop must outlive a bug in one tick
                log.exception("tick_failed")
                self.observer.error("tick")
                leading = self._was_leader is True
            if report is not None:
                # The whole tick, beside tick_finished's reconciling: reading the specs, then the reporting.
                ended = self._monotonic()
                log.info(
                    "tick_timing",
                    targets=len(report.outcomes),
                    refresh_seconds=round(refreshed - started, 4),
                    reconcile_seconds=round(report.seconds, 4),
                    report_seconds=round(max(0.0, ended - refreshed - report.seconds), 4),
                    total_seconds=round(ended - started, 4),
                )
            self._beat(started, role="leader" if leading else "standby")
        self._collect_if_due()
        return report

    def _collect_if_due(self) -> None:
        """The cyclic collector's full run, at most every COLLECT_EVERY_SECONDS, after a tick (outside its timing):
        once the caches synced, the daemon collects on this schedule instead of the collector's own."""
        if self._collected_at is None or self._monotonic() - self._collected_at < COLLECT_EVERY_SECONDS:
            return
        started = self._monotonic()
        collected = gc.collect()
        self._collected_at = self._monotonic()
        log.info("collector_ran", collected=collected, seconds=round(self._collected_at - started, 4))

    def _reconcile(self, due: Sequence[Target], *, now: datetime) -> TickReport:
        # The tick's decision lines a batch per write (logs.batched_lines), all out by the tick's end.
        with structlog.contextvars.bound_contextvars(tick=now.isoformat()), batched_lines():
            try:
                report = self.reconciler.reconcile(due, now=now)
            finally:
                # Even when the reconciler failed as a whole: the next try is a sync period away, not a tick.
                for target in due:
                    self._last[target.key] = now
            if not report.recorded:
                for outcome in report.outcomes:
                    self.recorder.record(outcome, now=now)
            self.observer.report_tick(report, ended_at=time.time())
        return report

    def _beat(self, started: float, *, role: str) -> None:
        end = self._monotonic()
        self._health.last_end = end
        self._health.in_flight = None
        self._health.last_seconds = end - started
        self._health.ticks += 1
        self.observer.tick_done(role=role, ended_at=time.time())

    # --- health --------------------------------------------------------------------------------------

    def healthz(self) -> Check:
        """Alive while the last tick ended within 3 tick periods plus that tick's own length, or a tick in flight
        has run less than TICK_IN_FLIGHT_LIMIT_SECONDS (slow is not hung)."""
        health = self._health
        reference = health.last_end if health.last_end is not None else health.started
        if reference is None:
            return Check(True, "starting: waiting for the caches")
        allowed = HEALTHY_TICKS * self.tick_seconds + health.last_seconds
        age = self._monotonic() - reference
        if age > allowed:
            in_flight = health.in_flight
            running = self._monotonic() - in_flight if in_flight is not None else None
            if running is not None and running <= max(allowed, TICK_IN_FLIGHT_LIMIT_SECONDS):
                return Check(True, f"ok: a tick in flight for {running:.1f}s")
            what = "the last tick ended" if health.last_end is not None else "the loop started with no tick since"
            limit = f", a tick in flight for {running:.1f}s" if running is not None else ""
            return Check(False, f"not ticking: {what} {age:.1f}s ago (allowed {allowed:.1f}s{limit})")
        return Check(True, f"ok: {health.ticks} ticks, the last {age:.1f}s ago")

    def readyz(self) -> Check:
        """Ready when the specs are loaded, the caches synced, and this replica leads or is a healthy standby."""
        problems = [f"{s.origin} specs not loaded yet" for s in self.sources if not s.loaded]
        if self._health.ticks == 0:
            problems.append("no tick yet")
        if not all(c.has_synced() for c in self.caches):
            problems.append("caches not synced yet")
        health = self.healthz()
        if not health.ok:
            problems.append(health.why)
        if problems:
            return Check(False, "; ".join(problems))
        if self.elector is None:
            return Check(True, "ok: running (no leader election)")
        return Check(True, "ok: leader" if self.elector.is_leader() else "ok: standby")

    def _snapshots(self, target: str | None) -> Any:
        """The flight recorder's entries; of one target ("namespace/name") when given: 400 malformed, 404 unknown."""
        if target is None:
            return self.recorder.snapshots()
        namespace, _, name = target.partition("/")
        if not namespace or not name or "/" in name:
            raise RequestError(400, f"target must be namespace/name, not {target!r}")
        key = TargetKey(namespace, name)
        if key not in self._known:
            raise RequestError(404, f"no target {key}: not among the specs this daemon runs")
        return self.recorder.snapshots(key)

    # --- start and stop ------------------------------------------------------------------------------

    def start_caches(self) -> None:
        """Start the caches and wait for their first list; StartupError when they do not sync in time."""
        for cache in self.caches:
            cache.start()
        deadline = self._monotonic() + self._cache_sync_timeout
        for cache in self.caches:
            left = max(0.0, deadline - self._monotonic())
            if not cache.wait_for_sync(left):
                raise StartupError(
                    f"the caches did not sync within {self._cache_sync_timeout:g}s ({type(cache).__name__}): "
                    "is the API server reachable, and does the daemon's role allow list and watch (docs/rbac.md)?"
                )
        # What start-up made (modules, settings, the caches' first lists) lives as long as the process: moved out
        # of the cyclic collector's reach. From now on the collector runs on the daemon's schedule, at most once
        # every COLLECT_EVERY_SECONDS after a tick, not on its own: each tick makes hundreds of thousands of
        # objects freed by their reference counts, and its own schedule ran a full collection nearly every tick.
        gc.collect()
        gc.freeze()
        gc.disable()
        self._collected_at = self._monotonic()
        log.info("caches_synced", caches=len(self.caches), frozen_objects=gc.get_freeze_count())

    def stop_caches(self) -> None:
        for cache in self.caches:
            cache.stop()
        self._closers.close()
        if self._collected_at is not None:  # the collector back on its own schedule
            self._collected_at = None
            gc.unfreeze()
            gc.enable()

    def start(self) -> None:
        """Serve HTTP, start and wait for the caches, start the election and the scheduler (first tick now)."""
        if self.http is not None:
            self.http.start()
        self.start_caches()
        if self.elector is not None:
            self.elector.start()
        scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(1)},
            # A late tick still runs (it picks the due targets from the clock); several late ones run once.
            job_defaults={"max_instances": 1, "coalesce": True, "misfire_grace_time": None},
            timezone=UTC,
        )
        scheduler.add_listener(self._skipped, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)
        scheduler.add_job(self.tick, "interval", seconds=self.tick_seconds, id="tick", next_run_time=datetime.now(UTC))
        self._health.started = self._monotonic()
        scheduler.start()
        self._scheduler = scheduler
        log.info("loop_started", tick_seconds=self.tick_seconds, leader_election=self.elector is not None)

    def _skipped(self, event: JobExecutionEvent) -> None:
        reason = "overrun" if event.code == EVENT_JOB_MAX_INSTANCES else "missed"
        self.observer.skipped_tick(reason)
        now = self._monotonic()
        with self._skip_lock:
            skipped = self._skips[reason] = self._skips.get(reason, 0) + 1
            last = self._skip_logged.get(reason)
            if last is not None and now - last < SKIP_LOG_SECONDS:
                return
            self._skips[reason] = 0
            self._skip_logged[reason] = now
        # One line a minute at most, with how many were skipped since the last one (this one included).
        log.warning(f"tick_{reason}", skipped=skipped, tick_seconds=self.tick_seconds)

    def stop(self) -> bool:
        """Stop scheduling, wait up to the grace for the tick in flight, release the lease, stop everything.

        Returns whether the tick in flight (if any) finished within the grace.
        """
        self._stopping.set()
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None
        finished = self._tick_lock.acquire(timeout=self.shutdown_grace_seconds)
        if finished:
            self._tick_lock.release()
        else:
            log.warning("shutdown_tick_abandoned", grace_seconds=self.shutdown_grace_seconds)
        if self.elector is not None:
            self.elector.stop()  # is_leader() turns false first (no write starts after it), then the release
            self.observer.set_leader(False)
        if self.http is not None:
            self.http.stop()
        self.stop_caches()
        log.info("stopped", tick_finished=finished)
        return finished


def run(daemon: Daemon, *, stop: threading.Event | None = None) -> int:
    """Run until SIGTERM/SIGINT (or `stop`), then shut down; 0, even when the tick in flight had to be abandoned.

    A signal before the loop runs ends the start-up (130 for SIGINT, 0 for SIGTERM); one after it stops the loop
    gracefully. One handler decides which, so a signal landing while the loop starts is never lost nor raised out.
    """
    stop = stop or threading.Event()
    started = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if not started.is_set():
            raise StartupInterrupted(signum)
        log.info("signal_received", signal=signal.Signals(signum).name)
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    try:
        daemon.start()
        started.set()
    except OSError as err:  # a socket or file the start needed (each known one has its own message)
        daemon.stop()
        raise StartupError(f"cannot start: {err}") from err
    except StartupInterrupted as err:
        log.warning("startup_interrupted", signal=str(err), message="interrupted during start-up")
        return _stopped(daemon, EXIT_SIGINT if err.signum == signal.SIGINT else 0)
    except BaseException:
        daemon.stop()
        raise
    while not stop.wait(1.0):
        pass
    return _stopped(daemon, 0)


def _stopped(daemon: Daemon, code: int) -> int:
    """Stop the daemon and return `code`; when the tick in flight had to be abandoned, exit with it at once."""
    if not daemon.stop():
        # The abandoned tick runs on a worker thread that the interpreter would wait for at exit.
        write_pending()  # its decision lines made so far
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _problem_sink(observer: Observer, events: Any, may_write: Callable[[], bool]) -> Callable[[SpecProblem], None]:
    """Count a spec problem; a PrometheusAutoscaler object also gets a Warning Event (from the leader only)."""
    from autoscaler.core.events import EventReason
    from autoscaler.kube.events import InvolvedObject

    def sink(problem: SpecProblem) -> None:
        observer.error(problem.kind)
        if problem.obj is None or problem.key is None or events is None or not may_write():
            return
        uid = str((problem.obj.get("metadata") or {}).get("uid") or "")
        obj = InvolvedObject.autoscaler(problem.key.namespace, problem.key.name, uid)
        # Not one of the HPA's reasons (core/events.py holds only those): the object never reached an HPA.
        events.warning(obj, cast(EventReason, INVALID_SPEC_REASON), problem.message)

    return sink


def _guarded(step: str, key: TargetKey, call: Callable[[], None]) -> None:
    """`call`, its failure logged (`outcome_handler_failed`) instead of raised."""
    try:
        call()
    except Exception as err:
        log.error("outcome_handler_failed", target=str(key), step=step, error=f"{type(err).__name__}: {err}")


def _report_at_once(recorder: FlightRecorder, observer: Observer) -> Callable[[TargetOutcome, datetime], TargetOutcome]:
    """The reconciler's hook: each outcome recorded and reported (its log line and series) as soon as it is final,
    and what the tick's report keeps of it: its error resolved (`outcome_error`), without the decision and the
    snapshot, so the tick holds no target's decision after that target is done."""

    def hand_on(outcome: TargetOutcome, now: datetime) -> TargetOutcome:
        # Each on its own: a recorder that fails must not cost the target its log line and series.
        _guarded("record", outcome.key, lambda: recorder.record(outcome, now=now))
        _guarded("report", outcome.key, lambda: observer.report_outcome(outcome, evaluated_at=now.timestamp()))
        error, error_type = outcome_error(outcome)
        return replace(outcome, decision=None, snapshot=None, error=error, error_type=error_type)

    return hand_on


def probe_prometheus(settings: Any) -> None:
    """Ask every configured Prometheus for `vector(1)`: one that does not answer is a warning, not a failure."""
    from autoscaler.metrics.client import PrometheusClient
    from autoscaler.metrics.errors import MetricsError

    for name, server in settings.servers.items():
        client = PrometheusClient(name, server, pool_size=1)
        try:
            client.query("vector(1)", time=datetime.now(UTC), budget_seconds=2.0, deadline_seconds=5.0)
        except MetricsError as err:
            log.warning("prometheus_unreachable_at_start", server=name, error=str(err))
        else:
            log.info("prometheus_reachable", server=name)
        finally:
            client.close()


def build(config: DaemonConfig, *, kubeconfig: str | None = None, plan: bool = False) -> Daemon:
    """Every part of the daemon from a DaemonConfig; `plan`: no election, no HTTP.

    Raises StartupError when the API server cannot be reached.
    """
    from autoscaler.daemon import config as daemon_config
    from autoscaler.daemon.reconciler import Reconciler
    from autoscaler.kube.cache import PodCache, WorkloadCache
    from autoscaler.kube.client import connect
    from autoscaler.kube.errors import KubeError, RequestContext
    from autoscaler.kube.events import EventRecorder
    from autoscaler.kube.leader import LeaderElectionConfigError, LeaderElector
    from autoscaler.kube.pods import PodAnnotator
    from autoscaler.kube.scale import ScaleClient
    from autoscaler.kube.shadow import ShadowCache
    from autoscaler.kube.state import ConfigMapStateStore
    from autoscaler.kube.status import AutoscalerCache, StatusWriter
    from autoscaler.metrics.evaluate import MetricsReader
    from autoscaler.spec.settings import HPA_SCALE_TO_ZERO

    closers: list[Callable[[], None]] = []
    try:
        kube = connect(daemon_config.client_settings(config, kubeconfig))
    except Exception as err:  # the client's config loaders raise their own types (no kubeconfig, bad file)
        raise StartupError(f"cannot configure the Kubernetes client: {err}") from err
    closers.append(kube.close)
    try:
        import kubernetes.client as k8s

        kube.request_json(k8s.VersionApi(kube.api_client).get_code, context=RequestContext(verb="get", resource=""))
    except KubeError as err:
        raise StartupError(f"the API server does not answer: {err}") from err
    namespaces = list(config.namespaces)
    # PodCache and WorkloadCache watch one namespace or all: several namespaces are watched as all.
    one = namespaces[0] if len(namespaces) == 1 else None
    pods = PodCache(kube, namespace=one)
    workloads = WorkloadCache(kube, namespace=one)
    caches: list[Cache] = [pods, workloads]
    shadows = ShadowCache(kube, namespace=one)  # started on the first spec in shadow mode (kube/shadow.py)
    closers.append(shadows.stop)
    observer = Observer()
    flight = config.flight_recorder
    try:
        recorder = FlightRecorder(flight.size, flight.directory)
    except OSError as err:
        raise StartupError(f"flightRecorder.directory {flight.directory}: {err.strerror or err}") from err
    leadership_changed = threading.Event()
    elector: LeaderElector | None = None
    if config.leader_election.enabled and not plan:
        try:
            elector = LeaderElector(
                kube,
                daemon_config.leader_election_config(config),
                on_started_leading=leadership_changed.set,
                on_stopped_leading=leadership_changed.set,
            )
        except LeaderElectionConfigError as err:
            raise StartupError(f"leaderElection: {err}") from err
    may_write: Callable[[], bool] = elector.is_leader if elector is not None else (lambda: not plan)
    probe_prometheus(config.metrics)
    reader = MetricsReader(config.metrics, on_query=observer.on_query)
    closers.append(reader.close)
    events = None if plan else EventRecorder(kube)
    states = ConfigMapStateStore(kube, namespace=daemon_config.state_namespace(config))
    reconciler = Reconciler(
        settings=daemon_config.core_settings(config),
        reader=reader,
        pods=pods,
        workloads=workloads,
        scales=ScaleClient(kube),
        events=events,
        status=None if plan else StatusWriter(kube),
        states=states,
        write_concurrency=config.concurrency.writes,
        may_write=may_write,
        state_refresh_seconds=config.state.refresh_seconds,
        shadows=shadows,
        annotator=None if plan else PodAnnotator(kube, concurrency=config.concurrency.writes),
        on_outcome=_report_at_once(recorder, observer),
    )
    defaults = TargetDefaults(
        sync_period_seconds=float(config.sync_period_seconds),
        dry_run=bool(config.dry_run),
        scale_to_zero=config.controller.gates()[HPA_SCALE_TO_ZERO],
    )
    sink = _problem_sink(observer, events, may_write)
    sources: list[SpecSource] = []
    if config.specs.custom_resources:
        autoscalers = AutoscalerCache(kube, namespaces=namespaces or None)
        caches.append(autoscalers)
        sources.append(
            ResourceSource(autoscalers, defaults=defaults, label_selector=config.label_selector, on_problem=sink)
        )
    if config.specs.files:
        sources.append(FileSource(list(config.specs.files), defaults=defaults, on_problem=sink))
    return Daemon(
        unguarded=lambda autoscaler: staleness_warnings(autoscaler, reader),
        reconciler=reconciler,
        sources=sources,
        observer=observer,
        recorder=recorder,
        tick_seconds=float(config.tick_seconds),
        shutdown_grace_seconds=float(config.shutdown_grace_seconds),
        caches=caches,
        elector=elector,
        leadership_changed=leadership_changed,
        http_address=None if plan else config.http.listen_address,
        closers=closers,
        states=None if plan else states,
    )


def load(config_path: str) -> DaemonConfig:
    """The settings file, validated, and logging configured from it; StartupError lists every problem."""
    from autoscaler.daemon.config import ConfigError, load_config
    from autoscaler.daemon.logs import configure_logging

    try:
        config = load_config(config_path)
    except ConfigError as err:
        raise StartupError(str(err)) from err
    configure_logging(config.log.format, config.log.level)
    return config


# glibc's malloc raises its mmap threshold each time it frees an mmapped block (up to 32 MiB); after that a
# tick's large, short-lived buffers (answers, watch events, request bodies) come from the heap, and the small
# long-lived blocks allocated between them keep it from shrinking: at 10,000 targets 64 MiB of the heap was free
# and never given back (docs/performance.md). A fixed threshold keeps them mmapped, returned when freed.
MMAP_THRESHOLD_BYTES = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def fix_mmap_threshold() -> bool:
    """Fix glibc malloc's mmap threshold at MMAP_THRESHOLD_BYTES, unless MALLOC_MMAP_THRESHOLD_ sets it already;
    False where there is no `mallopt` (a C library other than glibc) or it refused."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def main_run(config_path: str, *, kubeconfig: str | None = None) -> int:
    """`autoscaler run`: load the settings, build the daemon, run it. Start-up failures are one line, exit 1.

    SIGINT during start-up exits 130 (as Ctrl-C does), SIGTERM 0 (as after start), each with a log line.
    """
    _on_startup_signals()
    fix_mmap_threshold()
    try:
        config = load(config_path)
        try:
            daemon = build(config, kubeconfig=kubeconfig)
        except OSError as err:  # a file or socket the start needed (each known one has its own message)
            raise StartupError(f"cannot start: {err}") from err
        return run(daemon)
    except StartupError as err:
        print(f"autoscaler run: {err}", file=sys.stderr)
        return 1
    except StartupInterrupted as err:
        log.warning("startup_interrupted", signal=str(err), message="interrupted during start-up")
        return EXIT_SIGINT if err.signum == signal.SIGINT else 0
