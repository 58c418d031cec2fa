"""`failed_rescale` and `dry_run` (core/decision.py): what the status, conditions, events and behaviour state say
when a decided rescale is not applied. Each case names what it pins."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from autoscaler.core.decision import Decision, dry_run, failed_rescale
from autoscaler.core.types import BehaviorState, ConditionType, Recommendation, ScaleEvent
from autoscaler.replay import decide_snapshot
from autoscaler.spec.snapshot import Snapshot, load_snapshot

EXAMPLE = Path(__file__).parents[2] / "docs" / "snapshots" / "resource-cpu-utilization.json"  # 3 -> 5
BEFORE = datetime(2026, 11, 21, 11, 50, tzinfo=UTC)
BEHAVIOR = {"scaleUp": {"policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}]}}
EARLIER_EVENT = ScaleEvent(1, datetime(2026, 11, 21, 11, 59, 30, tzinfo=UTC), False)


def snapshot(*, behavior: bool = False, load: float = 1.0, status: dict[str, Any] | None = None) -> Snapshot:
    data = json.loads(EXAMPLE.read_text())
    data = copy.deepcopy(data)
    if behavior:
        data["autoscaler"]["spec"]["behavior"] = BEHAVIOR
        data["behaviorState"] = {
            "recommendations": [{"replicas": 3, "timestamp": "2026-11-21T11:59:45Z"}],
            "scaleUpEvents": [{"replicaChange": 1, "timestamp": "2026-11-21T11:59:30Z"}],
        }
    if status is not None:
        data["autoscaler"]["status"] = status
    if load != 1.0:
        for item in data["metrics"][0]["items"]:
            for container in item["containers"]:
                container["usage"]["cpu"] = "60m"  # 60 % of a 100m request: at target, no rescale
    return load_snapshot(data)


def decided(snap: Snapshot) -> Decision:
    return decide_snapshot(snap)


def failed(snap: Snapshot, decision: Decision) -> Decision:
    return failed_rescale(
        decision,
        'deployments.apps "web" is forbidden',
        reference="Deployment/web",
        state=snap.state,
        conditions=snap.conditions,
        previous_desired_replicas=snap.previous_desired_replicas,
        last_scale_time=snap.last_scale_time,
        now=snap.now,
    )


def dry(snap: Snapshot, decision: Decision) -> Decision:
    return dry_run(decision, state=snap.state, conditions=snap.conditions, last_scale_time=snap.last_scale_time)


@dataclass(frozen=True)
class Expect:
    able: tuple[str, str]
    events: tuple[str, ...]
    desired: int | None
    last_scale_time: datetime | None
    scale_up_events: tuple[ScaleEvent, ...] = ()
    rescale: bool = True


PRIOR = {"desiredReplicas": 3, "lastScaleTime": "2026-11-21T11:50:00Z"}


@pytest.mark.parametrize(
    ("make", "apply", "expect"),
    [
        pytest.param(
            lambda: snapshot(),
            failed,
            Expect(("False", "FailedUpdateScale"), ("FailedRescale",), desired=None, last_scale_time=None),
            id="failed: AbleToScale False FailedUpdateScale, FailedRescale only, desired and scale time as before",
        ),
        pytest.param(
            lambda: snapshot(status=PRIOR),
            failed,
            Expect(("False", "FailedUpdateScale"), ("FailedRescale",), desired=3, last_scale_time=BEFORE),
            id="failed: the stored desiredReplicas and lastScaleTime are kept",
        ),
        pytest.param(
            lambda: snapshot(behavior=True),
            failed,
            Expect(
                ("False", "FailedUpdateScale"),
                ("FailedRescale",),
                desired=None,
                last_scale_time=None,
                scale_up_events=(EARLIER_EVENT,),
            ),
            id="failed: no scale event stored (only the earlier one), recommendations kept",
        ),
        pytest.param(
            lambda: snapshot(),
            dry,
            Expect(("True", "DryRun"), ("DryRunRescale",), desired=5, last_scale_time=None),
            id="dry-run: AbleToScale True DryRun, DryRunRescale instead of SuccessfulRescale, desired shows 5",
        ),
        pytest.param(
            lambda: snapshot(status=PRIOR),
            dry,
            Expect(("True", "DryRun"), ("DryRunRescale",), desired=5, last_scale_time=BEFORE),
            id="dry-run: lastScaleTime unchanged (nothing was scaled)",
        ),
        pytest.param(
            lambda: snapshot(behavior=True),
            dry,
            Expect(
                ("True", "DryRun"),
                ("DryRunRescale",),
                desired=5,
                last_scale_time=None,
                scale_up_events=(EARLIER_EVENT,),
            ),
            id="dry-run: no scale event stored, recommendations kept",
        ),
        pytest.param(
            lambda: snapshot(load=0.6),
            dry,
            Expect(("True", "ScaleDownStabilized"), (), desired=3, last_scale_time=None, rescale=False),
            id="dry-run: a decision without a rescale is returned as it is",
        ),
    ],
)
def test_a_rescale_not_applied(make: Any, apply: Any, expect: Expect) -> None:
    snap = make()
    decision = decided(snap)
    result = apply(snap, decision)
    able = next(c for c in result.conditions if c.type == ConditionType.ABLE_TO_SCALE)
    assert (able.status, able.reason) == expect.able
    assert tuple(e.reason for e in result.events) == expect.events
    assert result.status.desired_replicas == expect.desired
    assert result.status.last_scale_time == expect.last_scale_time
    assert result.state.scale_up_events == expect.scale_up_events
    # The recommendations are the decision's: upstream stores them before the write.
    assert result.state.recommendations == decision.state.recommendations
    assert result.rescale == expect.rescale
    if not expect.rescale:
        assert result == decision


def test_failed_rescale_texts() -> None:
    snap = snapshot()
    result = failed(snap, decided(snap))
    (event,) = result.events
    assert event.message == (
        "New size: 5; reason: cpu resource utilization (percentage of request) above target; "
        'error: deployments.apps "web" is forbidden'
    )
    able = next(c for c in result.conditions if c.type == ConditionType.ABLE_TO_SCALE)
    assert (
        able.message == 'the HPA controller was unable to update the target scale: deployments.apps "web" is forbidden'
    )
    assert result.error == 'failed to rescale Deployment/web: deployments.apps "web" is forbidden'
    assert result.desired_replicas == 5  # the decision's count; the status keeps the stored one


def test_dry_run_texts() -> None:
    snap = snapshot()
    result = dry(snap, decided(snap))
    (event,) = result.events
    assert event.message.endswith("; dry run: not written")
    assert result.summary.startswith("dry run: ") and result.summary.endswith("(not written)")
    assert isinstance(result.state, BehaviorState)
    assert Recommendation(5, snap.now) in (result.state.recommendations or ())
