"""Status writes of steady targets and the conservative restore, as stories on a fake clock with the HPA's
production durations (15 s ticks, the 300 s downscale window, `state_refresh_seconds` 60), against the emulator."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from autoscaler.daemon.model import TargetOutcome
from tests.daemon.helpers import PAS, FakePrometheus, daemon, query_for, reader_for, resource_target, spec_doc
from tests.kube.conftest import Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_steady_target_writes_its_status_once_then_every_refresh(kube: Any, setup: Setup, server: Any) -> None:
    setup.workload("deployments", "web", replicas=4)
    setup.post(PAS, spec_doc("web"))
    prom = FakePrometheus()
    prom.values[query_for("web")] = 400  # 100 per pod of 4: steady
    wrote: list[int] = []
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        for seconds in range(0, 151, 15):
            if seconds == 30:
                prom.values[query_for("web")] = 404  # within tolerance: only the metric value moves
            (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=at(seconds)).outcomes
            assert outcome.error == "" and not outcome.wrote_scale, seconds
            if outcome.wrote_status:
                wrote.append(seconds)
                if seconds == 0:
                    assert setup.get(f"{PAS}/web")["status"]["targets"] == "100/100 (avg)"
        assert wrote == [0, 60, 120]  # first, then the refresh after the newest stored recommendation
        assert setup.get(f"{PAS}/web")["status"]["targets"] == "101/100 (avg)"  # the new value, at the refresh

        prom.values[query_for("web")] = 800  # anything that matters is written at once
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=at(165)).outcomes
        assert outcome.wrote_scale and outcome.wrote_status
        assert setup.get(f"{PAS}/web")["status"]["desiredReplicas"] == 8


def _first_scale_down(outcomes: list[TargetOutcome]) -> int:
    return next(i for i, o in enumerate(outcomes) if o.wrote_scale)


def test_a_restart_50s_after_the_last_save_keeps_the_window(kube: Any, setup: Setup, server: Any) -> None:
    """`ref` is reconciled by one reconciler throughout; `web`, the same spec under the same load at the same
    times, by a reconciler that is lost 50 s after its last status write and replaced. The lost memory held an
    8 recommended at 60 s that was never stored; the restored window must hold 8 at least as long."""
    for name in ("web", "ref"):
        setup.workload("deployments", name, replicas=4)
        setup.post(PAS, spec_doc(name, target=name))
    prom = FakePrometheus()
    prom.values[query_for("web")] = prom.values[query_for("ref")] = 800
    with daemon(kube, reader_for(prom)) as first:
        first.wait_replicas("web", 4)
        first.wait_replicas("ref", 4)
        stored_at: list[int] = []
        for seconds in range(0, 61, 15):
            outcomes = first.reconciler.reconcile(
                [resource_target(setup, "web"), resource_target(setup, "ref")], now=at(seconds)
            ).outcomes
            assert all(o.error == "" for o in outcomes)
            if outcomes[0].wrote_status:
                stored_at.append(seconds)
            if seconds == 0:
                first.wait_replicas("web", 8)
                first.wait_replicas("ref", 8)
        assert stored_at == [0, 15]  # the scale, then AbleToScale ReadyForNewScale; 30..60 wait for 75

        # `web`'s reconciler is lost; a new one starts 50 s after web's last save. The load falls.
        prom.values[query_for("web")] = prom.values[query_for("ref")] = 400
        with daemon(kube, reader_for(prom)) as restarted:
            restarted.wait_replicas("web", 8)
            web: list[TargetOutcome] = []
            ref: list[TargetOutcome] = []
            ticks = list(range(65, 420, 15))
            for seconds in ticks:
                (r,) = first.reconciler.reconcile([resource_target(setup, "ref")], now=at(seconds)).outcomes
                (w,) = restarted.reconciler.reconcile([resource_target(setup, "web")], now=at(seconds)).outcomes
                assert r.error == "" and w.error == "", seconds
                ref.append(r)
                web.append(w)
                assert r.decision is not None and w.decision is not None
                assert w.decision.desired_replicas is not None and r.decision.desired_replicas is not None
                if not r.wrote_scale and not w.wrote_scale:
                    assert w.decision.desired_replicas >= r.decision.desired_replicas, seconds
                if w.wrote_scale:
                    break
    # Without the restart the last 8 (60 s) leaves the 300 s window after 360 s; the restored 8 is stamped at the
    # restart (65 s = min(15 s + 60 s refresh, 65 s)), so web holds until after 365 s. Had it restored the stored
    # timestamps as they were (last 8 at 15 s), it would have scaled down at 320 s.
    assert ticks[_first_scale_down(ref)] == 365
    assert ticks[_first_scale_down(web)] == 380
