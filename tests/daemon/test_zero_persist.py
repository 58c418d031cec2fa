"""When the scale-to-zero and fallback memory is stored (daemon/persist.py `write_reason`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from autoscaler.daemon.persist import write_reason

NOW = datetime(2026, 11, 21, 12, 0, 30, tzinfo=UTC)  # the next refresh (offset 0) is at 12:01:00


def _status(**state: Any) -> dict[str, Any]:
    behavior = {"recommendations": [{"replicas": 2, "timestamp": "2026-11-21T11:59:45Z"}], **state}
    return {"desiredReplicas": 2, "behaviorState": behavior}


def _health(failures: int, value: int = 1000) -> list[dict[str, Any]]:
    return [{"metric": "External||||queue||", "failures": failures, "lastGood": {"milliValue": value, "time": "t"}}]


@pytest.mark.parametrize(
    ("saved", "wanted", "reason"),
    [
        pytest.param(_status(), _status(idleSince="2026-11-21T12:00:00Z"), "idleSince changed",
                     id="an idle stretch starts"),
        pytest.param(_status(idleSince="2026-11-21T12:00:00Z"), _status(), "idleSince changed", id="it ends"),
        pytest.param(_status(metricHealth=_health(0)), _status(metricHealth=_health(1)), "the failing metrics changed",
                     id="a metric starts failing"),
        pytest.param(_status(metricHealth=_health(5)), _status(metricHealth=_health(0)), "the failing metrics changed",
                     id="it reads again"),
        pytest.param(_status(metricHealth=_health(1)), _status(metricHealth=_health(2)), "",
                     id="one more failure waits"),
        pytest.param(_status(metricHealth=_health(0, 1000)), _status(metricHealth=_health(0, 2000)), "",
                     id="a new last good value waits"),
    ],
)  # fmt: skip
def test_what_is_stored_at_once(saved: dict[str, Any], wanted: dict[str, Any], reason: str) -> None:
    assert write_reason(saved, wanted, saved_at=NOW - timedelta(seconds=15), now=NOW, refresh_seconds=60.0) == reason
