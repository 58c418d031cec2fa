"""When a status document is stored (daemon/persist.py `write_reason`), and what a stored one restores to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.types import Recommendation
from autoscaler.daemon.persist import memory_from_status, write_reason
from autoscaler.kube.status import pack_status

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SAVED_AT = T0


def doc(**changes: Any) -> dict[str, Any]:
    """A stored status: 4 replicas, one External metric at 380 of 100 per pod, recommendations 4 and 5."""
    state = {
        "recommendations": [
            {"replicas": 5, "timestamp": "2026-03-01T11:59:45Z"},
            {"replicas": 4, "timestamp": "2026-03-01T12:00:00Z"},
        ],
        "scaleUpEvents": [],
        "scaleDownEvents": [],
    }
    base: dict[str, Any] = {
        "currentReplicas": 4,
        "desiredReplicas": 4,
        "currentMetrics": [
            {"type": "External", "external": {"metric": {"name": "q"}, "current": {"averageValue": "95"}}}
        ],
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "reason": "ReadyForNewScale",
                "message": "m",
                "lastTransitionTime": "2026-03-01T11:00:00Z",
            },
        ],
        "observedGeneration": 1,
        "behaviorState": state,
        "reference": "Deployment/web",
        "targets": "95/100 (avg)",
    }
    for key, value in changes.items():
        if key in ("recommendations", "scaleUpEvents", "scaleDownEvents"):
            state[key] = value
        else:
            base[key] = value
    return base


LATER_RECS = [
    {"replicas": 5, "timestamp": "2026-03-01T12:00:15Z"},
    {"replicas": 4, "timestamp": "2026-03-01T12:00:30Z"},
]
EVENT = [{"replicaChange": 1, "timestamp": "2026-03-01T12:00:30Z", "outdated": False}]


@pytest.mark.parametrize(
    ("saved", "wanted", "seconds", "expected"),
    [
        pytest.param(None, doc(), 15, "first write", id="never-stored"),
        pytest.param(doc(), doc(), 15, "", id="identical"),
        pytest.param(doc(), doc(recommendations=LATER_RECS), 15, "", id="only-timestamps-moved: waits"),
        pytest.param(doc(), doc(recommendations=LATER_RECS), 59, "", id="one-second-before-the-refresh: waits"),
        pytest.param(doc(), doc(recommendations=LATER_RECS), 60, "refresh", id="refresh-due"),
        pytest.param(
            doc(),
            doc(
                currentMetrics=[
                    {"type": "External", "external": {"metric": {"name": "q"}, "current": {"averageValue": "97"}}}
                ],
                targets="97/100 (avg)",
            ),
            15,
            "",
            id="metric-value-and-TARGETS-alone: wait",
        ),
        pytest.param(
            doc(),
            doc(
                currentMetrics=[
                    {
                        "type": "External",
                        "external": {"metric": {"name": "q"}, "current": {"averageValue": "95", "value": "380"}},
                    }
                ]
            ),
            15,
            "currentMetrics changed (a metric gained or lost its value)",
            id="a-metric-gained-a-value-field",
        ),
        pytest.param(
            doc(),
            doc(
                currentMetrics=[
                    {"type": "External", "external": {"metric": {"name": "r"}, "current": {"averageValue": "97"}}}
                ]
            ),
            15,
            "currentMetrics changed (a metric gained or lost its value)",
            id="another-metric-with-another-value",
        ),
        pytest.param(
            doc(),
            doc(currentMetrics=[*doc()["currentMetrics"], {"type": "Resource"}]),
            15,
            "currentMetrics changed (a metric gained or lost its value)",
            id="a-metric-more",
        ),
        pytest.param(
            doc(),
            doc(currentMetrics=[{"type": ""}]),
            15,
            "currentMetrics changed (a metric gained or lost its value)",
            id="metric-lost-its-value",
        ),
        pytest.param(
            doc(),
            doc(recommendations=[*LATER_RECS, {"replicas": 6, "timestamp": "2026-03-01T12:00:30Z"}]),
            15,
            "the recorded recommendation values changed",
            id="a-new-recommended-value",
        ),
        pytest.param(
            doc(),
            doc(recommendations=[{"replicas": 4, "timestamp": "2026-03-01T12:00:30Z"}]),
            15,
            "the recorded recommendation values changed",
            id="a-value-left-the-history",
        ),
        pytest.param(
            doc(), doc(recommendations=None), 15, "the recorded recommendation values changed", id="history-reset"
        ),
        pytest.param(doc(), doc(scaleUpEvents=EVENT), 15, "scaleUpEvents changed", id="a-scale-event"),
        pytest.param(doc(), doc(desiredReplicas=5), 15, "desiredReplicas changed", id="desired"),
        pytest.param(doc(), doc(currentReplicas=5), 15, "currentReplicas changed", id="current"),
        pytest.param(doc(), doc(lastScaleTime="2026-03-01T12:00:30Z"), 15, "lastScaleTime changed", id="scale-time"),
        pytest.param(doc(), doc(observedGeneration=2), 15, "observedGeneration changed", id="generation"),
        pytest.param(doc(), doc(reference="Deployment/api"), 15, "reference changed", id="reference"),
        pytest.param(
            doc(),
            doc(conditions=[{**doc()["conditions"][0], "reason": "ScaleDownStabilized"}]),
            15,
            "conditions changed",
            id="a-condition's-reason",
        ),
    ],
)
def test_write_reason(saved: dict[str, Any] | None, wanted: dict[str, Any], seconds: int, expected: str) -> None:
    now = T0 + timedelta(seconds=seconds)
    assert write_reason(saved, wanted, saved_at=SAVED_AT, now=now, refresh_seconds=60) == expected


def test_refresh_0_writes_every_change() -> None:
    later = doc(recommendations=LATER_RECS)
    assert write_reason(doc(), later, saved_at=SAVED_AT, now=T0 + timedelta(seconds=15), refresh_seconds=0) == "refresh"


def test_a_stored_status_is_restored_conservatively() -> None:
    memory = memory_from_status(doc(), where="test", now=T0 + timedelta(seconds=50), refresh_seconds=60)
    assert memory.saved_at == T0
    assert memory.state.recommendations == (
        Recommendation(5, T0 + timedelta(seconds=50)),
        Recommendation(4, T0 + timedelta(seconds=50)),
    )
    assert memory.document == doc() and memory.document is not memory.document  # kept as text, decoded anew
    packed = pack_status('{"a":1}')
    assert memory_from_status(doc(), where="test", packed=packed).stored is packed  # the caller's copy, kept
    as_stored = memory_from_status(doc(), where="test")
    assert as_stored.state.recommendations == (
        Recommendation(5, T0 - timedelta(seconds=15)),
        Recommendation(4, T0),
    )


@pytest.mark.parametrize(
    ("offset", "seconds", "expected"),
    [
        pytest.param(20, 19, "", id="before-the-target's-slot: waits"),
        pytest.param(20, 20, "refresh", id="at-the-slot: 20 s after a save at 12:00:00"),
        pytest.param(0, 59, "", id="offset-0: a whole period"),
        pytest.param(0, 60, "refresh", id="offset-0-at-the-next-minute"),
    ],
)
def test_the_refresh_waits_for_the_targets_place_in_the_period(offset: int, seconds: int, expected: str) -> None:
    later = doc(recommendations=LATER_RECS)
    now = T0 + timedelta(seconds=seconds)
    reason = write_reason(
        doc(), later, saved_at=SAVED_AT, now=now, refresh_seconds=60, offset=timedelta(seconds=offset)
    )
    assert reason == expected


def test_a_restore_stamps_at_the_targets_own_refresh_time() -> None:
    memory = memory_from_status(
        doc(), where="test", now=T0 + timedelta(seconds=50), refresh_seconds=60, offset=timedelta(seconds=20)
    )
    assert memory.state.recommendations == (
        Recommendation(5, T0 + timedelta(seconds=20)),
        Recommendation(4, T0 + timedelta(seconds=20)),
    )
