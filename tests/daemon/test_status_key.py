"""The status plan skipped on an unchanged `_status_key` (daemon/reconciler.py): each thing the key holds, changed
alone after a plan that stored nothing, makes the plan in full and stores; the same key against the same stored
document skips it until the refresh is due. The random story in test_reconcile_refresh.py checks the skipped plans
as they come; here each field is changed on its own, which a story rarely does (most move together)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.decision import Decision
from autoscaler.core.types import BehaviorState, MetricHealth, Recommendation, ScaleEvent
from autoscaler.daemon import reconciler as reconciler_module
from autoscaler.daemon.persist import stored_status
from tests.daemon.helpers import PAS, FakePrometheus, daemon, query_for, reader_for, resource_target, spec_doc
from tests.kube.conftest import Setup

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
Work = reconciler_module._Work
NINE = Recommendation(9, T0)


def _decision(change: Callable[[Decision], Decision]) -> Callable[[Work], Work]:
    return lambda work: Work(target=work.target, started=0.0, memory=work.memory, decision=change(work.decision))


def _status(**fields: Any) -> Callable[[Work], Work]:
    return _decision(lambda d: replace(d, status=replace(d.status, **fields)))


def _state(change: Callable[[BehaviorState], BehaviorState]) -> Callable[[Work], Work]:
    return _decision(lambda d: replace(d, state=change(d.state)))


def _reason(d: Decision) -> Decision:
    last = d.conditions[-1]
    return replace(d, conditions=(*d.conditions[:-1], replace(last, reason=last.reason + "Other")))


def _target(work: Work, **fields: Any) -> Work:
    return Work(target=replace(work.target, **fields), started=0.0, memory=work.memory, decision=work.decision)


def _reference(work: Work) -> Work:
    autoscaler = work.target.autoscaler
    ref = replace(autoscaler.spec.scale_target_ref, name="other")
    return _target(work, autoscaler=replace(autoscaler, spec=replace(autoscaler.spec, scale_target_ref=ref)))


def _stored(work: Work, **fields: Any) -> Work:
    document = work.memory.document
    assert document is not None
    memory = replace(work.memory, stored=stored_status({**document, **fields}))
    return Work(target=work.target, started=0.0, memory=memory, decision=work.decision)


CHANGES: dict[str, Callable[[Work], Work]] = {
    "desiredReplicas": _status(desired_replicas=7),
    "currentReplicas": _status(current_replicas=5),
    "lastScaleTime": _status(last_scale_time=T0 - timedelta(hours=1)),
    "a metric losing its value": _status(current_metrics=(None,)),
    "a condition's reason": _decision(_reason),
    "a scale-up event": _state(lambda s: s.with_scale_events((ScaleEvent(1, T0),), s.scale_down_events)),
    "a scale-down event": _state(lambda s: s.with_scale_events(s.scale_up_events, (ScaleEvent(1, T0),))),
    "a recommended value": _state(
        lambda s: s.with_recommendations((*(s.recommendations or ()), Recommendation(9, T0)))
    ),
    "no recommendations": _state(lambda s: s.with_recommendations(None)),
    "idleSince": _state(lambda s: replace(s, idle_since=T0)),
    "a failing metric": _state(lambda s: replace(s, metric_health=(MetricHealth("m0", failures=1),))),
    "observedGeneration": lambda work: _target(work, generation=99),
    "reference": _reference,
    "the stored document": lambda work: _stored(work, desiredReplicas=1),
}


@pytest.fixture
def clean(kube: Any, setup: Setup, server: Any, monkeypatch: Any) -> Iterator[tuple[Any, Work]]:
    """A reconciler whose target `web` has just had a plan that stored nothing (its key remembered), and a copy of
    that plan's work: its target, memory and decision, with no plan yet."""
    setup.workload("deployments", "web", replicas=4)
    setup.post(PAS, spec_doc("web"))
    prom = FakePrometheus()
    prom.values[query_for("web")] = 400
    planned: list[Work] = []
    plan = reconciler_module.Reconciler._plan_status

    def keep(self: Any, work: Work, now: datetime) -> Any:
        planned.append(work)
        return plan(self, work, now)

    monkeypatch.setattr(reconciler_module.Reconciler, "_plan_status", keep)
    with daemon(kube, reader_for(prom)) as d:
        d.wait_replicas("web", 4)
        for seconds in (0, 15):  # the first write, then a plan that stores nothing
            (outcome,) = d.reconciler.reconcile(
                [resource_target(setup, "web")], now=T0 + timedelta(seconds=seconds)
            ).outcomes
            assert outcome.error == "" and outcome.wrote_status == (seconds == 0)
        last = planned[-1]
        assert last.key in d.reconciler._clean
        yield d.reconciler, Work(target=last.target, started=0.0, memory=last.memory, decision=last.decision)


def _plans(reconciler: Any, work: Work, now: datetime) -> tuple[str, str, bool]:
    """The reason the plan gives as the reconciler plans, whether it made the document, and the full plan's."""
    made: list[bool] = []
    status_of = reconciler._status_of
    reconciler._status_of = lambda w: made.append(True) or status_of(w)
    try:
        plan = reconciler_module.Reconciler._plan_status
        work.status_plan = None  # a plan is made once per decision: each call here plans afresh
        quick = plan(reconciler, work, now)
        quick_made = bool(made)
        remembered = dict(reconciler._clean)
        reconciler._clean.clear()
        work.status_plan = None
        full = plan(reconciler, work, now)
        reconciler._clean.update(remembered)
    finally:
        del reconciler._status_of
    return quick[2], full[2], quick_made


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_thing_the_key_holds_changed_alone_is_stored_at_once(clean: tuple[Any, Work], change: str) -> None:
    reconciler, work = clean
    now = T0 + timedelta(seconds=20)
    assert _plans(reconciler, work, now) == ("", "", False)  # unchanged: skipped, and rightly
    changed = CHANGES[change](work)
    quick, full, made = _plans(reconciler, changed, now)
    assert made and quick == full != "", (change, quick, full)


def test_an_equal_copy_of_the_stored_document_is_planned_in_full_once(clean: tuple[Any, Work]) -> None:
    reconciler, work = clean
    assert work.memory.stored is not None
    copy = Work(
        target=work.target,
        started=0.0,
        memory=replace(work.memory, stored=bytes(bytearray(work.memory.stored))),
        decision=work.decision,
    )
    now = T0 + timedelta(seconds=20)
    assert _plans(reconciler, copy, now) == ("", "", True)  # not the bytes remembered: made, found equal


def test_the_refresh_is_never_skipped(clean: tuple[Any, Work]) -> None:
    reconciler, work = clean
    assert work.memory.saved_at is not None
    due = reconciler_module.refresh_due(
        work.memory.saved_at, refresh_seconds=reconciler._refresh, offset=reconciler._offset(work.key)
    )
    assert _plans(reconciler, work, due - timedelta(microseconds=1)) == ("", "", False)
    assert _plans(reconciler, work, due) == ("refresh", "refresh", True)
