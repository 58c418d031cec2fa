"""Status writes of steady targets and the conservative restore, as stories on a fake clock with the HPA's
production durations (15 s ticks, the 300 s downscale window, `state_refresh_seconds` 60), against the emulator."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from autoscaler.core.pause import PAUSED
from autoscaler.core.state import refresh_offset
from autoscaler.daemon import reconciler as reconciler_module
from autoscaler.daemon.model import TargetKey, TargetOutcome
from autoscaler.kube.status import cached_object, unpack_status
from tests.daemon.helpers import (
    PAS,
    FakePrometheus,
    daemon,
    eventually,
    query_for,
    reader_for,
    resource_target,
    spec_doc,
)
from tests.kube.conftest import NS, Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_steady_target_writes_its_status_once_then_every_refresh(kube: Any, setup: Setup, server: Any) -> None:
    # web's refresh comes due 28.47 s past each minute (its place in the 60 s period, from its key).
    assert int(refresh_offset(f"{NS}/web", 60).total_seconds()) == 28
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
        assert wrote == [0, 30, 90, 150]  # first, then the first tick after each of web's refresh times
        assert setup.get(f"{PAS}/web")["status"]["targets"] == "101/100 (avg)"  # the new value, at the refresh
        # Eleven recommendations of 4 (the HPA keeps them all): stored and remembered, only the newest.
        stored = setup.get(f"{PAS}/web")["status"]["behaviorState"]["recommendations"]
        assert stored == [{"replicas": 4, "timestamp": "2026-03-01T12:02:30Z"}]
        (remembered,) = d.reconciler._memory.values()
        assert remembered.state.recommendations is not None and len(remembered.state.recommendations) == 1
        # what it remembers having stored is compact JSON text packed, decoded to what the API server holds
        assert isinstance(remembered.stored, bytes) and ": " not in unpack_status(remembered.stored)
        assert remembered.document == setup.get(f"{PAS}/web")["status"]
        # once the cache holds what was stored, the memory keeps the cache's copy of it, not a second one
        cached = replace(resource_target(setup, "web"), stored=cached_object(setup.get(f"{PAS}/web")))
        (outcome,) = d.reconciler.reconcile([cached], now=at(155)).outcomes
        assert not outcome.wrote_status
        assert cached.stored is not None and d.reconciler._memory[cached.key].stored is cached.stored.packed_status()

        prom.values[query_for("web")] = 800  # anything that matters is written at once
        (outcome,) = d.reconciler.reconcile([resource_target(setup, "web")], now=at(165)).outcomes
        assert outcome.wrote_scale and outcome.wrote_status
        assert setup.get(f"{PAS}/web")["status"]["desiredReplicas"] == 8


def _first_scale_down(outcomes: list[TargetOutcome]) -> int:
    return next(i for i, o in enumerate(outcomes) if o.wrote_scale)


def test_a_restart_50s_after_the_last_save_keeps_the_window(kube: Any, setup: Setup, server: Any) -> None:
    """`ref` is reconciled by one reconciler throughout; `api`, the same spec under the same load at the same
    times, by a reconciler that is lost 50 s after its last status write and replaced (api's refresh comes due 8.78 s
    past each minute, so after its save at 15 s the next is due at 68.78 s). The lost memory held an
    8 recommended at 60 s that was never stored; the restored window must hold 8 at least as long."""
    assert int(refresh_offset(f"{NS}/api", 60).total_seconds()) == 8
    for name in ("api", "ref"):
        setup.workload("deployments", name, replicas=4)
        setup.post(PAS, spec_doc(name, target=name))
    prom = FakePrometheus()
    prom.values[query_for("api")] = prom.values[query_for("ref")] = 800
    with daemon(kube, reader_for(prom)) as first:
        first.wait_replicas("api", 4)
        first.wait_replicas("ref", 4)
        stored_at: list[int] = []
        for seconds in range(0, 61, 15):
            outcomes = first.reconciler.reconcile(
                [resource_target(setup, "api"), resource_target(setup, "ref")], now=at(seconds)
            ).outcomes
            assert all(o.error == "" for o in outcomes)
            if outcomes[0].wrote_status:
                stored_at.append(seconds)
            if seconds == 0:
                first.wait_replicas("api", 8)
                first.wait_replicas("ref", 8)
        assert stored_at == [0, 15]  # the scale, then AbleToScale ReadyForNewScale; 30..60 wait for 68.78

        # `api`'s reconciler is lost; a new one starts 50 s after api's last save. The load falls.
        prom.values[query_for("api")] = prom.values[query_for("ref")] = 400
        with daemon(kube, reader_for(prom)) as restarted:
            restarted.wait_replicas("api", 8)
            web: list[TargetOutcome] = []
            ref: list[TargetOutcome] = []
            ticks = list(range(65, 420, 15))
            for seconds in ticks:
                (r,) = first.reconciler.reconcile([resource_target(setup, "ref")], now=at(seconds)).outcomes
                (w,) = restarted.reconciler.reconcile([resource_target(setup, "api")], now=at(seconds)).outcomes
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
    # restart (65 s = min(68.78 s, api's next refresh, 65 s)), so api holds until after 365 s. Had it restored the
    # stored timestamps as they were (last 8 at 15 s), it would have scaled down at 320 s.
    assert ticks[_first_scale_down(ref)] == 365
    assert ticks[_first_scale_down(web)] == 380


def test_targets_first_written_together_are_refreshed_at_their_own_times(kube: Any, setup: Setup, server: Any) -> None:
    """Seven steady targets all written in the first tick: each refresh comes at the first tick after the target's
    own place in the 60 s period (from its key), not all in the tick a period later."""
    names = ["a", "b", "c", "d", "e", "f", "g"]
    prom = FakePrometheus()
    for name in names:
        setup.workload("deployments", name, replicas=4)
        setup.post(PAS, spec_doc(name, target=name))
        prom.values[query_for(name)] = 400
    places = {name: refresh_offset(f"{NS}/{name}", 60).total_seconds() for name in names}
    assert {name: int(place) for name, place in places.items()} == {
        "a": 37, "b": 9, "c": 47, "d": 27, "e": 13, "f": 26, "g": 59
    }  # fmt: skip
    wrote: dict[str, list[int]] = {name: [] for name in names}
    with daemon(kube, reader_for(prom)) as d:
        for name in names:
            d.wait_replicas(name, 4)
        for seconds in range(0, 121, 15):
            outcomes = d.reconciler.reconcile([resource_target(setup, n) for n in names], now=at(seconds)).outcomes
            for outcome in outcomes:
                assert outcome.error == "" and not outcome.wrote_scale, seconds
                if outcome.wrote_status:
                    wrote[outcome.key.name].append(seconds)
    assert wrote == {
        "a": [0, 45, 105],
        "b": [0, 15, 75],
        "c": [0, 60, 120],
        "d": [0, 30, 90],
        "e": [0, 15, 75],
        "f": [0, 30, 90],
        "g": [0, 60, 120],
    }


def test_the_status_stored_is_the_one_remembered(kube: Any, setup: Setup, server: Any) -> None:
    """A stored condition without a transition time (written by an older version, or by hand) keeps none in the
    core while its status holds; the document planned at the tick's time gives it one, and that document is
    what the server gets: the memory and the server hold the same status, times included."""
    setup.workload("deployments", "web", replicas=4)
    setup.post(PAS, spec_doc("web"))
    obj = setup.get(f"{PAS}/web")
    untimed = {"type": "AbleToScale", "status": "True", "reason": "Old", "message": "written without a time"}
    obj["status"] = {"currentReplicas": 4, "desiredReplicas": 4, "conditions": [untimed]}
    setup.put(f"{PAS}/web/status", obj)
    prom = FakePrometheus()
    prom.values[query_for("web")] = 400
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        target = resource_target(setup, "web")
        (outcome,) = d.reconciler.reconcile([target], now=at(0)).outcomes
        assert outcome.error == "" and outcome.wrote_status
        stored = setup.get(f"{PAS}/web")["status"]
        able = next(c for c in stored["conditions"] if c["type"] == "AbleToScale")
        assert able["lastTransitionTime"] == "2026-03-01T12:00:00Z"  # the tick's time, not the writer's clock
        assert d.reconciler._memory[target.key].document == stored


def test_the_plan_skipped_for_an_unchanged_key_stores_what_the_full_plan_stores(
    kube: Any, setup: Setup, server: Any, monkeypatch: Any
) -> None:
    """Two targets under the same load at the same place in the refresh period, one planned as the reconciler plans
    (no status document made while its `_status_key` and stored status are unchanged and no refresh is due), the
    other planned in full every tick, over 160 ticks of a random story that moves every field the key holds (metric
    values within and past the tolerance, scale-ups, the downscale window, Prometheus down and back, the pause
    annotation, spec edits that change the spec or only its generation): each time the plan is skipped, the full
    plan finds nothing to store either, and both targets store their status at the same ticks, the same documents."""
    names = ("fast-app", "full-app")
    for name in names:
        setup.workload("deployments", name, replicas=4)
        setup.post(PAS, spec_doc(name, target=name))
    prom = FakePrometheus()
    keyed = reconciler_module._status_key
    monkeypatch.setattr(
        reconciler_module, "_status_key", lambda work: None if work.key.name == "full-app" else keyed(work)
    )
    plan = reconciler_module.Reconciler._plan_status
    rendered: list[str] = []
    status_of = reconciler_module.Reconciler._status_of
    skipped: list[int] = []

    def counted_status_of(self: Any, work: Any) -> Any:
        rendered.append(work.key.name)
        return status_of(self, work)

    def checked_plan(self: Any, work: Any, now: datetime) -> Any:
        before = len(rendered)
        again = work.status_plan is not None and work.status_plan[0] is work.decision
        got = plan(self, work, now)
        if not again and got is not None and len(rendered) == before:
            skipped.append(int((now - T0).total_seconds()))
            kept, work.status_plan = self._clean.pop(work.key), None
            full = plan(self, work, now)  # without the remembered key: in full
            assert full is not None and full[2] == "", (now, full[2])
            self._clean[work.key], work.status_plan = kept, got
        return got

    monkeypatch.setattr(reconciler_module.Reconciler, "_status_of", counted_status_of)
    monkeypatch.setattr(reconciler_module.Reconciler, "_plan_status", checked_plan)
    rng = random.Random(7)
    steps = ["load"] * 4 + ["same"] * 20 + ["down", "pause", "unpause", "edit", "noop-edit"]
    wrote: dict[str, list[int]] = {name: [] for name in names}
    averages = ["100", "0.1k", "100000m"]  # the same target written three ways: only the generation moves
    with daemon(kube, reader_for(prom)) as d:
        for name in names:
            d.wait_replicas(name, 4)
            d.reconciler._offsets[TargetKey(NS, name)] = timedelta(seconds=20)  # the same place in the period
        load = 400.0
        for tick in range(160):
            seconds = 15 * tick
            step = rng.choice(steps)
            prom.down = step == "down"
            if step == "load":
                load = rng.choice([load * 1.03, load * 0.97, 100.0, 400.0, 800.0, 1500.0])
            most = rng.choice([9, 10, 12])
            for name in names:
                prom.values[query_for(name)] = load
                if step in ("pause", "unpause"):
                    value = "true" if step == "pause" else None
                    setup.patch(
                        f"/apis/apps/v1/namespaces/{NS}/deployments/{name}",
                        {"metadata": {"annotations": {PAUSED: value}}},
                    )
                elif step == "edit":
                    setup.patch(f"{PAS}/{name}", {"spec": {"maxReplicas": most}})
                elif step == "noop-edit":
                    target = {"type": "AverageValue", "averageValue": averages[tick % 3]}
                    metric = {**spec_doc(name, target=name)["spec"]["metrics"][0]}
                    metric["external"] = {**metric["external"], "target": target}
                    setup.patch(f"{PAS}/{name}", {"spec": {"metrics": [metric]}})
            if step in ("pause", "unpause"):
                paused = step == "pause"
                eventually(lambda: all(_annotated(d, name) == paused for name in names))  # noqa: B023 (used at once)
            targets = [resource_target(setup, name) for name in names]
            outcomes = d.reconciler.reconcile(targets, now=at(seconds)).outcomes
            for outcome in outcomes:
                assert not outcome.error.startswith("internal"), (seconds, outcome.error)
                if outcome.wrote_status:
                    wrote[outcome.key.name].append(seconds)
            fast, full = (setup.get(f"{PAS}/{name}")["status"] for name in names)
            assert _named(fast, "fast-app") == _named(full, "full-app"), seconds
            assert d.replicas("fast-app") == d.replicas("full-app"), seconds
    assert wrote["fast-app"] == wrote["full-app"]
    assert len(wrote["fast-app"]) >= 40 and len(skipped) >= 20  # both paths taken, many times
    assert rendered.count("full-app") == 160


def _annotated(d: Any, name: str) -> bool:
    cached = d.workloads.scale(NS, "Deployment", name)
    return cached is not None and PAUSED in (cached.annotations or {})


def _named(status: dict[str, Any], name: str) -> Any:
    """A status document with the target's own name (in its reference and its query) taken out."""
    return json.loads(json.dumps(status).replace(name, "NAME"))
