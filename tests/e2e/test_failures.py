"""The daemon process when things go wrong: Prometheus down, a leader killed, a restart, SIGTERM mid-tick,
a broken spec file, dry-run, and an API server failing at random."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from autoscaler.kube.leader import JITTER_FACTOR
from tests.e2e.conftest import Stack, log_time, metric_samples, spec_document, utc_now, write_spec
from tests.e2e.stack import DaemonProcess, scale_writes, wait_for
from tests.sim.conftest import NS

METRIC_FAILURE_REASONS = {"FailedGetPodsMetric", "FailedComputeMetricsReplicas"}


def writes_of(stack: Stack, name: str) -> list[Any]:
    return scale_writes(stack.emulator.audit.records(name=name, namespace=NS))


def written(record: Any) -> int:
    return int(record.body_json()["spec"]["replicas"])


def decisions(daemon: DaemonProcess, name: str) -> list[dict[str, Any]]:
    return daemon.events("decision", target=f"{NS}/{name}")


def read_ok(daemon: DaemonProcess, name: str, *, current: int) -> list[dict[str, Any]]:
    """Decisions at `current` replicas made with a metric reading (no metric failure)."""
    return [
        d
        for d in decisions(daemon, name)
        if d.get("current") == current and d.get("reason") not in METRIC_FAILURE_REASONS and not d.get("error")
    ]


def warning_events(stack: Stack, name: str) -> list[dict[str, Any]]:
    return [
        e
        for e in stack.emulator.list("v1", "Event", namespace=NS)
        if e["involvedObject"]["name"] == name and e["type"] == "Warning"
    ]


def metric(daemon: DaemonProcess, address: str, series: str, **labels: str) -> float:
    status, body = daemon.get(address, "/metrics")
    assert status == 200, body
    return sum(v for lab, v in metric_samples(body, series) if all(lab.get(k) == x for k, x in labels.items()))


def test_prometheus_down_while_the_load_falls_holds_then_recovers(stack: Stack) -> None:
    # 9.5 requests/s per pod: within the tolerance of the target of 10 at 6 pods, and a 7th pod that an early
    # reading on a loaded machine asked for (a rate over a partly filled window) is given back after the window
    # (at exactly 10 per pod 7 pods read ~8.57 each, proposing 6 or 7 by rounding, and the window kept 7).
    demand = stack.deploy("outage", replicas=6, load=57)
    write_spec(stack.tmp / "specs", "outage", spec_document("outage", window=4))
    daemon, address = stack.daemon("outage", stack.tmp / "specs")
    daemon.start()
    try:
        # The first readings wait for Prometheus to hold two scrapes in the rate window: slow on a loaded machine.
        wait_for(
            lambda: len(read_ok(daemon, "outage", current=6)) >= 3,
            deadline_seconds=60,
            what="steady at 6",
            explain=daemon.tail,
        )
        stack.prometheus.stop()
        down_at = utc_now()
        demand.value = 6  # a controller reading zero or a stale low value now would scale down
        failed = wait_for(
            lambda: [
                d
                for d in decisions(daemon, "outage")
                if log_time(d) > down_at and d.get("reason") in METRIC_FAILURE_REASONS
            ],
            deadline_seconds=20,
            what="a decision failing its metric",
        )
        # Hold the outage until the failures span more than the window (which alone would allow a scale-down).
        wait_for(
            lambda: log_time(decisions(daemon, "outage")[-1]) - log_time(failed[0]) > timedelta(seconds=6),
            deadline_seconds=30,
            what="failures over more than the window",
        )
        warnings = wait_for(
            lambda: [e for e in warning_events(stack, "outage") if e["reason"] in METRIC_FAILURE_REASONS],
            deadline_seconds=10,
            what="a Warning Event for the failed metric",
        )
        failed_queries = metric(
            daemon, address, "autoscaler_prometheus_query_duration_seconds_count", server="main"
        ) - metric(daemon, address, "autoscaler_prometheus_query_duration_seconds_count", outcome="ok")
        assert failed_queries > 0
        assert metric(daemon, address, "autoscaler_target_decision_info", name="outage") == 1
        reasons = {
            lab["reason"]
            for lab, v in metric_samples(daemon.get(address, "/metrics")[1], "autoscaler_target_decision_info")
            if lab["name"] == "outage" and v == 1
        }
        assert reasons & METRIC_FAILURE_REASONS, reasons
        up_at = utc_now()
        assert [w for w in writes_of(stack, "outage") if down_at <= w.time] == [], "a write while Prometheus was down"
        assert stack.replicas("outage") == 6
        assert warnings and daemon.alive()

        stack.prometheus.start()
        wait_for(lambda: stack.replicas("outage") == 1, deadline_seconds=40, what="scaled down after recovery")
        downs = [w for w in writes_of(stack, "outage") if w.time >= down_at]
        assert downs and all(w.time > up_at for w in downs), [(w.time, written(w)) for w in downs]
    finally:
        if stack.prometheus.process is None:
            stack.prometheus.start()
        daemon.terminate()


def test_samples_from_before_a_prometheus_outage_are_not_acted_on_after_it(stack: Stack) -> None:
    """The outage rule in the real process: Prometheus comes back holding only the samples it scraped before it
    went down (its scrape targets are gone until the test restores them, so nothing newer arrives and nothing
    marks the old series stale). Those samples are inside the staleness budget but older than the daemon's
    failed queries: refused, the target holds; written on, they would take it a step further up."""
    name = "pre-outage"
    demand = stack.deploy(name, replicas=2, load=20)
    external = {
        "type": "External",
        "external": {
            "metric": {"name": "load_model_demand", "selector": {"matchLabels": {"name": name}}},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }
    behavior = {
        # One pod per 8 s up: a reading of 100 (10 pods) is a staircase, each step a write of its own.
        "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 8}]},
        "scaleDown": {
            "stabilizationWindowSeconds": 2,
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}],
        },
    }
    write_spec(stack.tmp / "specs", name, spec_document(name, window=2, metrics=[external], behavior=behavior))
    daemon, _ = stack.daemon(name, stack.tmp / "specs")
    targets = stack.prometheus.targets_file.read_text()
    daemon.start()
    try:
        wait_for(lambda: len(read_ok(daemon, name, current=2)) >= 3, deadline_seconds=60, what="steady at 2")
        demand.value = 100
        wait_for(lambda: stack.replicas(name) == 3, deadline_seconds=20, what="the first step up, 2 -> 3")
        stack.prometheus.stop()
        stepped_at = max(w.time for w in writes_of(stack, name))
        stack.prometheus.targets_file.write_text("[]")  # back up with the old samples and nothing newer
        demand.value = 20  # fresh readings would say 2
        down_at = utc_now()
        wait_for(
            lambda: [d for d in decisions(daemon, name) if log_time(d) > down_at and d.get("error_type") == "metrics"],
            deadline_seconds=20,
            what="a decision whose query failed",
        )
        # Past the scale-up policy's period: a reading of 100 may take the next step now.
        wait_for(lambda: utc_now() - stepped_at > timedelta(seconds=9), deadline_seconds=15, what="the period")
        stack.prometheus.start()
        up_at = utc_now()
        assert stack.prometheus.value(f'load_model_demand{{name="{name}"}}') == 100  # the old sample is served
        refused = wait_for(
            lambda: [
                d
                for d in decisions(daemon, name)
                if log_time(d) > up_at and "last failed attempt" in " ".join(map(str, d.get("metrics") or []))
            ],
            deadline_seconds=20,
            what="a decision refusing the sample from before the outage",
            explain=daemon.tail,
        )
        held_until = log_time(refused[-1])
        assert stack.replicas(name) == 3
        assert [written(w) for w in writes_of(stack, name) if w.time > stepped_at] == [], "a write on an old sample"
        stack.prometheus.targets_file.write_text(targets)  # scraped again: the fresh 20
        wait_for(lambda: stack.replicas(name) == 2, deadline_seconds=40, what="2 again on fresh samples")
        after = [written(w) for w in writes_of(stack, name) if w.time > stepped_at]
        assert after == [2], (after, held_until)
    finally:
        if stack.prometheus.targets_file.read_text() != targets:
            stack.prometheus.targets_file.write_text(targets)
        if stack.prometheus.process is None:
            stack.prometheus.start()
        daemon.terminate()


def lease(stack: Stack, name: str) -> dict[str, Any]:
    try:
        return dict(stack.emulator.get("coordination.k8s.io/v1", "Lease", name, namespace=NS)["spec"])
    except Exception:  # not created yet
        return {}


def test_two_daemons_only_the_leader_writes_and_a_killed_leader_is_replaced_within_the_lease(stack: Stack) -> None:
    demand = stack.deploy("ha", replicas=2, load=20)
    write_spec(stack.tmp / "specs", "ha", spec_document("ha", window=2))
    election = {
        "enabled": True,
        "leaseName": "e2e-ha",
        "namespace": NS,
        "leaseDurationSeconds": 3,
        "renewDeadlineSeconds": 2,
        "retryPeriodSeconds": 0.5,
    }
    daemons = {}
    for who in ("a", "b"):
        d, _ = stack.daemon(
            f"ha-{who}", stack.tmp / "specs", token=f"token-{who}", leaderElection={**election, "identity": who}
        )
        daemons[who] = d
        d.start()
    try:
        first = wait_for(lambda: lease(stack, "e2e-ha").get("holderIdentity"), deadline_seconds=30, what="a leader")
        other = "b" if first == "a" else "a"
        leader, standby = daemons[first], daemons[other]
        wait_for(lambda: len(read_ok(leader, "ha", current=2)) >= 2, deadline_seconds=30, what="the leader deciding")
        demand.value = 60
        wait_for(lambda: stack.replicas("ha") == 6, deadline_seconds=30, what="the leader scaled up to 6")
        leader.kill()  # kill -9: no release
        killed_at = utc_now()
        wait_for(lambda: lease(stack, "e2e-ha").get("holderIdentity") == other, deadline_seconds=15, what="failover")
        took_over = utc_now()
        # The standby sees the leader's last renew at its next try (at most one retry period with jitter later),
        # takes the lease at its first try a lease duration after that (another such period at most), and this
        # test sees it at its next poll: 3 + 2 x 0.5 x (1 + 1.2) + 0.1 = 5.3 s at most (5.01 s seen once).
        bound = 3 + 2 * 0.5 * (1 + JITTER_FACTOR) + 0.1
        assert took_over - killed_at <= timedelta(seconds=bound), (killed_at, took_over)
        demand.value = 100
        wait_for(lambda: stack.replicas("ha") == 10, deadline_seconds=30, what="the new leader scaled up to 10")
        demand.value = 20
        wait_for(lambda: stack.replicas("ha") == 2, deadline_seconds=30, what="the new leader scaled down to 2")

        writes = writes_of(stack, "ha")
        tokens = {w.token for w in writes}
        assert tokens <= {f"Bearer token-{first}", f"Bearer token-{other}", f"token-{first}", f"token-{other}"}, tokens
        mine = [w for w in writes if w.token.endswith(f"token-{first}")]
        theirs = [w for w in writes if w.token.endswith(f"token-{other}")]
        assert mine and theirs, tokens
        assert all(w.time <= killed_at for w in mine) and all(w.time >= killed_at for w in theirs)
        # Never a double write: each write is one decision that wrote, of the writer's own decision log.
        # (A decision's line is logged after its write: poll until the log has caught up.)
        # The leader was killed with -9 the moment its last write landed: the line of that last decision may
        # never have been logged, so its log may lack that one write, and only that one.
        for process, its, killed in ((leader, mine, True), (standby, theirs, False)):
            counts = [written(w) for w in its]
            accepted = (counts, counts[:-1]) if killed else (counts,)
            wait_for(
                lambda p=process, a=accepted: [d["desired"] for d in decisions(p, "ha") if d.get("wrote")] in a,
                deadline_seconds=5,
                what=f"the decisions that wrote equal to the writes {counts}",
                explain=process.tail,
            )
        assert not [d for d in decisions(standby, "ha") if log_time(d) < killed_at], "the standby decided"
    finally:
        for d in daemons.values():
            if d.alive():
                d.terminate()


def test_a_restart_in_the_stabilization_window_keeps_the_window(stack: Stack) -> None:
    window = 12
    demand = stack.deploy("restart", replicas=6, load=60)
    write_spec(stack.tmp / "specs", "restart", spec_document("restart", window=window))
    first, _ = stack.daemon("restart-1", stack.tmp / "specs")
    first.start()
    try:
        wait_for(lambda: len(read_ok(first, "restart", current=6)) >= 3, deadline_seconds=30, what="steady at 6")
        fell_at = utc_now()
        demand.value = 6
        wait_for(
            lambda: [d for d in decisions(first, "restart") if d.get("reason") == "ScaleDownStabilized"],
            deadline_seconds=window / 2,
            what="the first daemon holding a scale-down",
        )
    finally:
        assert first.terminate() == 0
    second, _ = stack.daemon("restart-2", stack.tmp / "specs")
    second.start()
    try:
        wait_for(lambda: stack.replicas("restart") < 6, deadline_seconds=window + 30, what="the scale-down")
        writes = writes_of(stack, "restart")
        assert writes and writes[0].time >= fell_at + timedelta(seconds=window - 1), (writes[0].time, fell_at)
        # The test can fail: the restarted daemon decided inside the window (and held, from the stored state).
        inside = [d for d in decisions(second, "restart") if log_time(d) < fell_at + timedelta(seconds=window - 1)]
        assert inside and all(d.get("desired") == 6 for d in inside), inside
    finally:
        second.terminate()


def test_sigterm_during_a_slow_tick_exits_0_in_the_grace_and_releases_the_lease(stack: Stack) -> None:
    stack.deploy("slow", replicas=2, load=20)
    write_spec(stack.tmp / "specs", "slow", spec_document("slow", window=2))
    daemon, _ = stack.daemon(
        "slow",
        stack.tmp / "specs",
        shutdownGraceSeconds=3,
        leaderElection={
            "enabled": True, "leaseName": "e2e-slow", "namespace": NS, "identity": "slow",
            "leaseDurationSeconds": 3, "renewDeadlineSeconds": 2, "retryPeriodSeconds": 0.5,
        },
        state={"refreshSeconds": 0},  # a state write every tick (the recommendation timestamps move): the slow call
    )  # fmt: skip
    daemon.start()
    fault = None
    try:
        wait_for(lambda: len(decisions(daemon, "slow")) >= 2, deadline_seconds=30, what="decisions")
        # Every state write of this target now takes 1.5 s: a tick in flight for that long.
        fault = stack.emulator.faults.add(
            r"/configmaps/autoscaler-state\.default\.slow$", delay_seconds=1.5, times=None
        )
        wait_for(lambda: fault.hits >= 1, deadline_seconds=10, what="a tick in its slow write")
        sent = time.monotonic()
        assert daemon.terminate(timeout=3 + 5) == 0
        assert time.monotonic() - sent <= 3 + 5
    finally:
        if fault is not None:
            stack.emulator.faults.remove(fault)
        daemon.kill()
    assert not lease(stack, "e2e-slow").get("holderIdentity"), lease(stack, "e2e-slow")
    assert daemon.events("stopped"), daemon.tail()


def test_a_broken_spec_file_is_reported_the_good_ones_run_and_dry_run_writes_nothing(stack: Stack) -> None:
    specs = stack.tmp / "specs"
    stack.deploy("good", replicas=2, load=60)  # wants 6
    stack.deploy("dry-spec", replicas=2, load=60)  # wants 6, the spec says dryRun
    stack.deploy("broken", replicas=2, load=60)
    write_spec(specs, "good", spec_document("good", window=2))
    write_spec(specs, "dry-spec", spec_document("dry-spec", window=2, dryRun=True))
    bad = spec_document("broken", window=2)
    bad["spec"]["minReplicas"] = 20  # above maxReplicas
    write_spec(specs, "broken", bad)
    daemon, address = stack.daemon("specs", specs)
    daemon.start()
    try:
        wait_for(lambda: stack.replicas("good") == 6, deadline_seconds=30, what="the good spec scaled")
        dry = wait_for(
            lambda: [d for d in decisions(daemon, "dry-spec") if d.get("desired") == 6 and d.get("dry_run")],
            deadline_seconds=30,
            what="a dry-run decision to scale",
        )
        assert all(not d.get("wrote") for d in dry)
        assert [line for line in daemon.events("spec_invalid") if "broken" in str(line.get("source"))]
        assert metric(daemon, address, "autoscaler_errors_total", type="spec_invalid") >= 1
        assert metric(daemon, address, "autoscaler_specs", origin="file", state="invalid") == 1
        assert not decisions(daemon, "broken")
        write_spec(specs, "broken", spec_document("broken", window=2))  # fixed: hot-reloaded
        wait_for(lambda: stack.replicas("broken") == 6, deadline_seconds=30, what="the fixed spec scaled")
        assert metric(daemon, address, "autoscaler_specs", origin="file", state="invalid") == 0
        assert writes_of(stack, "dry-spec") == [] and stack.replicas("dry-spec") == 2
    finally:
        daemon.terminate()


def test_global_dry_run_writes_no_scale(stack: Stack) -> None:
    stack.deploy("dry-all", replicas=2, load=60)
    write_spec(stack.tmp / "specs", "dry-all", spec_document("dry-all", window=2))
    daemon, _ = stack.daemon("dry-all", stack.tmp / "specs", dryRun=True)
    daemon.start()
    try:
        wait_for(
            lambda: len([d for d in decisions(daemon, "dry-all") if d.get("desired") == 6 and d.get("dry_run")]) >= 3,
            deadline_seconds=30,
            what="dry-run decisions to scale",
        )
        assert writes_of(stack, "dry-all") == [] and stack.replicas("dry-all") == 2
    finally:
        daemon.terminate()


def test_an_api_server_failing_at_random_causes_no_crash_and_no_unasked_write(stack: Stack) -> None:
    demand = stack.deploy("chaos", replicas=2, load=20)
    write_spec(stack.tmp / "specs", "chaos", spec_document("chaos", window=2))
    daemon, address = stack.daemon("chaos", stack.tmp / "specs")
    faults = [
        stack.emulator.faults.add(path, method=method, status=code, times=None, probability=0.2, retry_after_seconds=1)
        for path, method in (
            (r"/deployments/chaos/scale$", "PUT"),
            (r"/deployments/chaos/scale$", "PATCH"),
            (r"/configmaps/autoscaler-state\.default\.chaos$", "PUT"),
            (r"/configmaps$", "POST"),
            (r"/events$", "POST"),
        )
        for code in (409, 429, 500)
    ]
    daemon.start()
    try:
        for load, replicas in ((60, 6), (100, 10), (20, 2)):
            demand.value = load
            # Up to ~half of the writes fail and each retry waits out a Retry-After: a generous deadline, and
            # the daemon's log if it is still missed.
            wait_for(
                lambda r=replicas: stack.replicas("chaos") == r,
                deadline_seconds=90,
                what=f"at {replicas}",
                explain=lambda: daemon.tail(80),
            )
            assert daemon.alive(), daemon.tail()
            assert daemon.get(address, "/healthz")[0] == 200
        assert sum(f.hits for f in faults) >= 5, [f.to_json() for f in faults]
        # Every successful scale write is a count the daemon decided for this target then (a decision's line
        # is logged after its write: wait for the last one).
        wait_for(
            lambda: [d for d in decisions(daemon, "chaos") if d.get("wrote") and d.get("desired") == 2],
            deadline_seconds=10,
            what="the decision that wrote 2 logged",
        )
        # A decision's tick began `seconds` before its line, and its writes (retries and Retry-After waits
        # included) lie between the two: each scale write falls within a decision asking for its count.
        slack = timedelta(seconds=0.5)
        logged = [
            (log_time(d) - timedelta(seconds=d["seconds"]), log_time(d), d["desired"])
            for d in decisions(daemon, "chaos")
            if d.get("rescale")
        ]
        for w in writes_of(stack, "chaos"):
            asked = {desired for began, ended, desired in logged if began - slack <= w.time <= ended + slack}
            assert written(w) in asked, (w.time, written(w), logged)
    finally:
        for f in faults:
            stack.emulator.faults.remove(f)
        daemon.terminate()
