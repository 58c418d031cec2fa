"""The loop: due targets by their own sync period (fake clock), leadership, real scheduler ticks, SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from autoscaler.daemon.app import Daemon, due_targets
from autoscaler.daemon.check import staleness_warnings
from autoscaler.daemon.model import Target, TargetKey, TickReport
from autoscaler.daemon.observe import Observer
from autoscaler.daemon.recorder import FlightRecorder
from autoscaler.metrics import MetricsReader, MetricsSettings
from autoscaler.spec.objects import load_autoscaler
from tests.daemon.fakes import FakeClock, FakeReconciler, StaticSource, spec_object, target
from tests.kube.test_cache import eventually

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("elapsed", "due"),
    [
        pytest.param(None, ["fast", "slow"], id="never evaluated: all due"),
        pytest.param(4.9, [], id="before the shortest period: none due"),
        pytest.param(5.0, ["fast"], id="exactly the fast period: the fast one is due"),
        pytest.param(30.0, ["fast", "slow"], id="past both periods: both due"),
    ],
)
def test_due_targets_honour_each_sync_period(elapsed: float | None, due: list[str]) -> None:
    targets = [target("fast", period=5.0), target("slow", period=30.0)]
    clock = FakeClock(T0)
    last = {} if elapsed is None else {t.key: T0 for t in targets}
    if elapsed is not None:
        clock.advance(elapsed)
    assert [t.key.name for t in due_targets(targets, last, now=clock())] == due


def _daemon(source: StaticSource, reconciler: FakeReconciler, clock: FakeClock, **kw: object) -> Daemon:
    return Daemon(
        reconciler=reconciler, sources=[source], observer=Observer(), recorder=FlightRecorder(3),
        tick_seconds=1.0, shutdown_grace_seconds=2.0, clock=clock, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def test_ticks_evaluate_each_target_at_its_own_period() -> None:
    clock = FakeClock(T0)
    reconciler = FakeReconciler()
    daemon = _daemon(StaticSource([target("fast", period=2.0), target("slow", period=5.0)]), reconciler, clock)
    for _ in range(6):
        daemon.tick()
        clock.advance(1.0)
    evaluated = [(int((now - T0).total_seconds()), [k.name for k in keys]) for now, keys, _ in reconciler.calls]
    assert evaluated == [(0, ["fast", "slow"]), (2, ["fast"]), (4, ["fast"]), (5, ["slow"])]
    assert all(write for _, _, write in reconciler.calls)


def test_a_removed_target_is_forgotten_everywhere() -> None:
    clock = FakeClock(T0)
    reconciler = FakeReconciler()
    source = StaticSource([target("web"), target("api")])
    daemon = _daemon(source, reconciler, clock)
    daemon.tick()
    assert set(daemon.recorder.snapshots()) == {"shop/web", "shop/api"}
    source.targets = [target("api")]
    daemon.tick()
    assert reconciler.forgotten == [TargetKey("shop", "web")]
    assert set(daemon.recorder.snapshots()) == {"shop/api"}
    scrape = daemon.observer.exposition()[0].decode()
    assert 'name="web"' not in scrape and 'name="api"' in scrape


class FakeElector:
    def __init__(self) -> None:
        self.leading = False
        self.epoch = 0
        self.started = self.stopped = False

    def is_leader(self) -> bool:
        return self.leading

    def start(self) -> None:
        self.started = True

    def stop(self, timeout: float = 5.0) -> None:
        self.stopped = True
        self.leading = False


def test_only_the_leader_reconciles_and_a_new_leadership_forgets() -> None:
    clock = FakeClock(T0)
    reconciler = FakeReconciler()
    elector = FakeElector()
    daemon = _daemon(StaticSource([target("web")]), reconciler, clock, elector=elector)
    daemon.tick()
    assert reconciler.calls == [], "a standby reconciles nothing"
    assert daemon.readyz().ok and daemon.readyz().why == "ok: standby"
    elector.leading, elector.epoch = True, 1  # took the lease
    clock.advance(1)
    daemon.tick()
    assert len(reconciler.calls) == 1 and reconciler.forgotten == [None]
    clock.advance(1)
    daemon.tick()
    assert len(reconciler.calls) == 1, "not due again before its sync period"
    assert 'autoscaler_target_replicas{kind="desired",name="web",namespace="shop"}' in (
        daemon.observer.exposition()[0].decode()
    )
    elector.leading = False
    daemon.tick()
    scrape = daemon.observer.exposition()[0].decode()
    assert "autoscaler_leader 0.0" in scrape
    assert 'name="web"' not in scrape, "a standby exports no per-target series"
    assert reconciler.forgotten == [None], "a loss alone keeps the memory: only a new leadership makes it stale"
    # The lease taken back while it still named this replica (its renewals failed for a while): the same epoch,
    # nobody led in between, the memory continues; every target is due at once all the same.
    elector.leading = True
    daemon.tick()
    assert reconciler.forgotten == [None] and len(reconciler.calls) == 2
    elector.leading = False
    clock.advance(1)
    daemon.tick()
    elector.leading, elector.epoch = True, 2  # taken from another holder: it may have written
    daemon.tick()
    assert reconciler.forgotten == [None, None] and len(reconciler.calls) == 3


def test_a_loss_and_regain_between_two_ticks_forgets() -> None:
    """`is_leader()` is true at both ticks, but the elector became leader again in between: another replica
    may have written, so the memory goes and every target is due at once."""
    clock = FakeClock(T0)
    reconciler = FakeReconciler()
    elector = FakeElector()
    elector.leading, elector.epoch = True, 1
    daemon = _daemon(StaticSource([target("web")]), reconciler, clock, elector=elector)
    daemon.tick()
    clock.advance(1)
    daemon.tick()
    assert len(reconciler.calls) == 1 and reconciler.forgotten == []
    elector.epoch = 2
    clock.advance(1)
    daemon.tick()
    assert reconciler.forgotten == [None]
    assert len(reconciler.calls) == 2, "every target is due again after a new leadership"


@dataclass
class _SlowTick(FakeReconciler):
    """A tick during which /healthz is probed at given seconds into it (the monotonic clock moved by the probe)."""

    monotonic: list[float] = field(default_factory=lambda: [0.0])
    probe_at: tuple[float, ...] = ()
    daemon: Daemon | None = None
    probed: list[tuple[float, bool, str]] = field(default_factory=list)

    def reconcile(self, targets: Sequence[Target], *, now: datetime, write: bool = True) -> TickReport:
        start = self.monotonic[0]
        for at in self.probe_at:
            self.monotonic[0] = start + at
            assert self.daemon is not None
            check = self.daemon.healthz()
            self.probed.append((at, check.ok, check.why))
        return super().reconcile(targets, now=now, write=write)


def test_healthz_holds_through_a_slow_tick_and_fails_a_hung_one() -> None:
    clock = FakeClock(T0)
    reconciler = _SlowTick()
    daemon = _daemon(StaticSource([target("web")]), reconciler, clock, monotonic=lambda: reconciler.monotonic[0])
    reconciler.daemon = daemon
    daemon.tick()  # a quick first tick: the loop has ticked
    clock.advance(15)
    reconciler.probe_at = (0.5, 30.0, 119.0, 121.0)
    daemon.tick()
    assert [(at, ok) for at, ok, _ in reconciler.probed] == [(0.5, True), (30.0, True), (119.0, True), (121.0, False)]
    assert "a tick in flight for 30.0s" in reconciler.probed[1][2]
    assert "not ticking" in reconciler.probed[3][2] and "in flight for 121.0s" in reconciler.probed[3][2]
    assert daemon.healthz().ok, "the tick ended: alive again"
    reconciler.monotonic[0] += 3 * 1.0 + 121.0 + 1.0
    assert not daemon.healthz().ok, "no tick since, none in flight"


def test_the_scheduler_runs_real_ticks() -> None:
    reconciler = FakeReconciler()
    daemon = Daemon(
        reconciler=reconciler, sources=[StaticSource([target("web", period=0.05)])], observer=Observer(),
        recorder=FlightRecorder(3), tick_seconds=0.05, shutdown_grace_seconds=2.0, http_address="127.0.0.1:0",
    )  # fmt: skip
    daemon.start()
    try:
        eventually(lambda: len(reconciler.calls) >= 3)
        assert daemon.healthz().ok and daemon.readyz().ok
    finally:
        assert daemon.stop()
    calls = len(reconciler.calls)
    assert daemon.tick() is None, "no tick after stop"
    assert len(reconciler.calls) == calls


def test_stop_waits_for_the_tick_in_flight_only_within_the_grace() -> None:
    release = threading.Event()
    reconciler = FakeReconciler(block=release)
    daemon = Daemon(
        reconciler=reconciler, sources=[StaticSource([target("web")])], observer=Observer(),
        recorder=FlightRecorder(3), tick_seconds=0.05, shutdown_grace_seconds=0.2,
    )  # fmt: skip
    daemon.start()
    assert reconciler.entered.wait(5)
    started = time.monotonic()
    assert daemon.stop() is False, "the tick did not finish within the grace"
    assert time.monotonic() - started < 5
    release.set()


SCRIPT = """
import sys, threading
import structlog
structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
from autoscaler.daemon.app import Daemon, run
from autoscaler.daemon.observe import Observer
from autoscaler.daemon.recorder import FlightRecorder
from tests.daemon.fakes import FakeReconciler, StaticSource, target

block = threading.Event() if sys.argv[1] == "stuck" else None
reconciler = FakeReconciler(block=block)
original = reconciler.reconcile
def reconcile(targets, *, now, write=True):
    print("tick", flush=True)
    return original(targets, now=now, write=write)
reconciler.reconcile = reconcile
daemon = Daemon(reconciler=reconciler, sources=[StaticSource([target("web", period=0.1)])], observer=Observer(),
                recorder=FlightRecorder(3), tick_seconds=0.1, shutdown_grace_seconds=float(sys.argv[2]),
                http_address="127.0.0.1:0")
raise SystemExit(run(daemon))
"""


@pytest.mark.parametrize(
    ("mode", "grace"),
    [
        pytest.param("normal", "5", id="ticks finish: exit 0"),
        pytest.param("stuck", "0.5", id="a tick that never ends: exit 0 after the grace"),
    ],
)
def test_sigterm_exits_zero_within_the_grace(tmp_path: Path, mode: str, grace: str) -> None:
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, mode, grace], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(root)}, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "tick"
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, proc.stderr.read() if proc.stderr else ""
    assert took < float(grace) + 10, "the grace bounds the wait (slack for a slow machine)"
    stderr = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in stderr
    if mode == "stuck":
        assert "shutdown_tick_abandoned" in stderr


LATE_SIGNAL_SCRIPT = """
import os, signal, sys, threading
import structlog
structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
from autoscaler.daemon.app import Daemon, run
from autoscaler.daemon.observe import Observer
from autoscaler.daemon.recorder import FlightRecorder
from tests.daemon.fakes import FakeReconciler, StaticSource, target

reconciler = FakeReconciler(block=threading.Event() if sys.argv[2] == "stuck" else None)

class Late(Daemon):
    def start(self):
        super().start()
        if sys.argv[2] == "stuck":
            reconciler.entered.wait(10)  # the first tick is in flight and never ends
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))  # the loop runs; run() has not seen it start yet

daemon = Late(reconciler=reconciler, sources=[StaticSource([target("web", period=0.1)])], observer=Observer(),
              recorder=FlightRecorder(3), tick_seconds=0.1, shutdown_grace_seconds=0.5, http_address="127.0.0.1:0")
raise SystemExit(run(daemon))
"""


@pytest.mark.parametrize(
    ("signame", "tick", "expected"),
    [
        pytest.param("SIGTERM", "quick", 0, id="SIGTERM: 0"),
        pytest.param("SIGINT", "quick", 130, id="SIGINT: 130"),
        pytest.param("SIGTERM", "stuck", 0, id="SIGTERM, the first tick stuck: 0 after the grace"),
    ],
)
def test_a_signal_while_the_loop_starts_ends_the_start_up_cleanly(signame: str, tick: str, expected: int) -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", LATE_SIGNAL_SCRIPT, signame, tick], cwd=root, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert done.returncode == expected, done.stderr
    assert "Traceback" not in done.stderr
    assert "startup_interrupted" in done.stderr


@pytest.mark.parametrize(
    ("targets", "timing"),
    [
        pytest.param(
            [target("web")],
            {"refresh_seconds": 2.0, "reconcile_seconds": 0.02, "report_seconds": 7.98, "total_seconds": 10.0},
            id="a reconciling tick logs its phases",
        ),
        pytest.param([], None, id="a tick with nothing due logs none"),
    ],
)
def test_tick_timing_splits_the_whole_tick(targets: list[Target], timing: dict[str, float] | None) -> None:
    # The monotonic clock: the tick starts at 100, the specs are read by 102, the tick ends at 110.
    readings = iter([100.0, 102.0, 110.0, 110.0])
    daemon = _daemon(StaticSource(targets), FakeReconciler(), FakeClock(T0), monotonic=lambda: next(readings))
    with capture_logs() as logs:
        daemon.tick()
    lines = [
        {k: v for k, v in line.items() if k.endswith("_seconds")} for line in logs if line["event"] == "tick_timing"
    ]
    assert lines == ([] if timing is None else [timing])


def test_skipped_ticks_are_one_warning_a_minute_with_the_count() -> None:
    from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobExecutionEvent
    from structlog.testing import capture_logs

    mono = [1000.0]
    daemon = _daemon(StaticSource([]), FakeReconciler(), FakeClock(T0), monotonic=lambda: mono[0])
    overrun = JobExecutionEvent(EVENT_JOB_MAX_INSTANCES, "tick", None, T0)
    missed = JobExecutionEvent(EVENT_JOB_MISSED, "tick", None, T0)
    with capture_logs() as logs:
        for at in (0.0, 1.0, 30.0, 59.9, 60.0, 61.0, 125.0):
            mono[0] = 1000.0 + at
            daemon._skipped(overrun)
        daemon._skipped(missed)
    lines = [(e["event"], e["skipped"], e["log_level"]) for e in logs]
    assert lines == [
        ("tick_overrun", 1, "warning"),
        ("tick_overrun", 4, "warning"),  # at 60 s: the ones at 1, 30, 59.9 and this one
        ("tick_overrun", 2, "warning"),  # at 125 s: 61 and this one
        ("tick_missed", 1, "warning"),
    ]
    scrape = daemon.observer.exposition()[0].decode()
    assert 'autoscaler_ticks_skipped_total{reason="overrun"} 7.0' in scrape


def test_the_daemon_runs_the_cyclic_collector_on_its_own_schedule() -> None:
    """Before start-up the collector is paused for a tick (it would walk the tick's objects again and again: ~40 %
    of the daemon's CPU at 5,000 targets) and runs again after it, even after a failed tick. Once the caches
    synced, start-up's objects are frozen and the collector runs only after a tick, at most once a minute."""
    import gc

    from autoscaler.daemon.app import COLLECT_EVERY_SECONDS

    seen: list[bool] = []

    class Recording(FakeReconciler):
        def reconcile(self, targets: Sequence[Target], *, now: datetime, write: bool = True) -> TickReport:
            seen.append(gc.isenabled())
            if len(seen) == 2:
                raise RuntimeError("a bug in one tick")
            return super().reconcile(targets, now=now, write=write)

    clock = FakeClock(T0)
    monotonic = [1000.0]
    daemon = _daemon(StaticSource([target("web", period=1.0)]), Recording(), clock, monotonic=lambda: monotonic[0])
    assert gc.isenabled()
    gc.unfreeze()  # an earlier test's start-up may have frozen
    for _ in range(2):
        daemon.tick()
        clock.advance(1.0)
        assert gc.isenabled()
    assert seen == [False, False]
    try:
        daemon.start_caches()  # no caches here: start-up ends with the freeze
        assert gc.get_freeze_count() > 0 and not gc.isenabled()
        with capture_logs() as logs:
            for step in (1.0, COLLECT_EVERY_SECONDS - 2.0, 1.5, 1.0):
                monotonic[0] += step
                daemon.tick()
                clock.advance(1.0)
        ran = [line for line in logs if line["event"] == "collector_ran"]
        assert len(ran) == 1 and ran[0]["seconds"] >= 0, ran  # 60.5 s after start-up, not again 1 s later
        assert not gc.isenabled()
    finally:
        daemon.stop_caches()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_outcomes_the_reconciler_recorded_are_not_recorded_again() -> None:
    """A reconciler that hands each outcome to the recorder itself says so (`TickReport.recorded`): the loop
    does not record them a second time (a run's `repeated` would count every decision twice)."""

    class Recording(FakeReconciler):
        def reconcile(self, targets: Sequence[Target], *, now: datetime, write: bool = True) -> TickReport:
            report = super().reconcile(targets, now=now, write=write)
            return replace(report, recorded=True)

    clock = FakeClock(T0)
    daemon = _daemon(StaticSource([target("web")]), Recording(), clock)
    daemon.tick()
    assert daemon.recorder.snapshots() == {}
    plain = _daemon(StaticSource([target("web")]), FakeReconciler(), clock)
    plain.tick()
    assert [e["repeated"] for e in plain.recorder.snapshots()["shop/web"]] == [1]


def test_the_daemons_hook_reports_each_outcome_at_once_and_keeps_it_without_the_decision() -> None:
    """`autoscaler run`'s reconciler hook records the outcome, writes its log line and series at once, and gives
    the tick's report the outcome without its decision and snapshot, its error resolved as the report needs it."""
    from autoscaler.daemon.app import _report_at_once
    from tests.daemon.fakes import outcome_for

    recorder, observer = FlightRecorder(3), Observer()
    hand_on = _report_at_once(recorder, observer)
    web, api = target("web"), target("api")
    failing = replace(outcome_for(api), error="status write failed: 500", error_type="kube")
    with capture_logs() as logs:
        kept = [hand_on(outcome_for(web), T0), hand_on(failing, T0)]
    assert [(k.decision, k.snapshot) for k in kept] == [(None, None), (None, None)]
    assert [(k.error, k.error_type) for k in kept] == [("", ""), ("status write failed: 500", "kube")]
    assert [line["target"] for line in logs if line["event"] == "decision"] == ["shop/web", "shop/api"]
    assert sorted(recorder.snapshots()) == ["shop/api", "shop/web"]
    exported = observer.exposition()[0].decode()
    assert 'autoscaler_errors_total{type="kube"} 1.0' in exported


def test_a_recorder_that_fails_costs_the_target_no_log_line() -> None:
    from autoscaler.daemon.app import _report_at_once
    from tests.daemon.fakes import outcome_for

    class Broken(FlightRecorder):
        def record(self, outcome: object, *, now: datetime) -> None:
            raise OSError("disk full")

    hand_on = _report_at_once(Broken(3), Observer())
    with capture_logs() as logs:
        kept = hand_on(outcome_for(target("web")), T0)
    assert kept.decision is None
    assert [(line["event"], line.get("step")) for line in logs] == [
        ("outcome_handler_failed", "record"),
        ("decision", None),
    ]


def _queue_target(name: str, query: str) -> Target:
    doc = spec_object(name)
    doc["spec"]["metrics"] = [
        {
            "type": "External",
            "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "30"}},
            "prometheus": {"query": query},
        }
    ]
    return replace(target(name), autoscaler=load_autoscaler(doc, scale_to_zero=False))


def test_a_metric_without_staleness_check_is_one_warning_per_spec_as_read() -> None:
    """The daemon plans each new or changed spec's metrics once (as `check --config` does for files): a query
    with no sample time is a warning line, once, not every tick; a changed spec is checked again."""
    settings = MetricsSettings.model_validate({"servers": {"main": {"url": "http://127.0.0.1:9"}}})
    reader = MetricsReader(settings, clients={})
    ratio = _queue_target("ratio", 'sum(queue_depth{queue="jobs"}) / sum(consumers)')
    queue = _queue_target("queue", 'sum(queue_depth{queue="jobs"})')
    source = StaticSource([ratio, queue])
    daemon = _daemon(
        source, FakeReconciler(), FakeClock(T0), unguarded=lambda autoscaler: staleness_warnings(autoscaler, reader)
    )
    with capture_logs() as logs:
        daemon.tick()
        daemon.tick()
        source.targets = [_queue_target("ratio", "sum(a) / sum(b)"), queue]  # changed: read anew
        daemon.tick()
    warned = [line for line in logs if line["event"] == "metric_without_staleness_check"]
    assert [(line["target"], line["field"]) for line in warned] == [
        ("shop/ratio", "spec.metrics[0].prometheus"),
        ("shop/ratio", "spec.metrics[0].prometheus"),
    ]
    assert "no staleness check" in warned[0]["message"] and warned[0]["log_level"] == "warning"


def test_a_callback_for_a_change_already_seen_changes_nothing() -> None:
    """The elector's callback can come after a tick already saw the change it reports (a replica frozen past its
    lease, then resumed): the next tick neither forgets again nor logs the change a second time."""
    clock = FakeClock(T0)
    reconciler = FakeReconciler()
    elector = FakeElector()
    elector.leading, elector.epoch = True, 1
    changed = threading.Event()
    daemon = _daemon(StaticSource([target("web")]), reconciler, clock, elector=elector, leadership_changed=changed)
    with capture_logs() as logs:
        changed.set()  # started leading before the first tick
        daemon.tick()
        elector.leading = False
        clock.advance(1)
        daemon.tick()  # sees the loss
        changed.set()  # the loss's callback, late
        clock.advance(1)
        daemon.tick()
    assert [e["leader"] for e in logs if e["event"] == "leadership_changed"] == [True, False]
    assert reconciler.forgotten == []  # nothing held at the first tick; a loss alone keeps the memory


def test_a_replica_leading_at_its_first_tick_says_so_once() -> None:
    """The first tick can see the lease held before the elector's callback comes: it logs the leadership all
    the same, and the late callback adds nothing. A replica that starts as a standby logs nothing."""
    for leading, expected in ((True, [True]), (False, [])):
        clock = FakeClock(T0)
        elector = FakeElector()
        elector.leading, elector.epoch = leading, int(leading)
        changed = threading.Event()
        daemon = _daemon(
            StaticSource([target("web")]), FakeReconciler(), clock, elector=elector, leadership_changed=changed
        )
        with capture_logs() as logs:
            daemon.tick()
            changed.set()  # the callback, after the first tick
            clock.advance(1)
            daemon.tick()
        assert [e["leader"] for e in logs if e["event"] == "leadership_changed"] == expected
