"""The documented snapshot examples (docs/snapshots) replay to the decisions docs/snapshot.md describes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoscaler.replay import replay_data

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "snapshots"


def _replay(name: str) -> dict:
    path = EXAMPLES / name
    return replay_data(json.loads(path.read_text()), source=name)


@pytest.mark.parametrize(
    ("name", "current", "desired", "proposal", "limited_by"),
    [
        pytest.param("resource-cpu-utilization.json", 3, 5, 5, None, id="cpu utilization 90% vs 60%: 3 -> 5"),
        pytest.param("container-resource-utilization.json", 4, 2, 2, None, id="one container's cpu: 4 -> 2"),
        pytest.param("pods-requests-per-second.json", 3, 5, 5, None, id="requests per pod: 3 -> 5"),
        pytest.param("object-ingress-requests.json", 2, 4, 7, "ScaleUpLimit", id="legacy scale-up cap: 7 -> 4"),
        pytest.param("external-queue-depth.json", 4, 3, 2, None, id="scale-down window holds 2 at 3"),
    ],
)
def test_example_decisions(name: str, current: int, desired: int, proposal: int, limited_by: str | None) -> None:
    out = _replay(name)
    assert out["currentReplicas"] == current
    assert out["desiredReplicas"] == desired
    assert out["rescale"] is (desired != current)
    assert out["metricProposal"] == proposal
    assert out["limitedBy"] == limited_by
    assert [e["reason"] for e in out["events"]] == ["SuccessfulRescale"]
    assert out["events"][0]["message"].startswith(f"New size: {desired}; reason: ")


def test_cpu_example_explains_the_metric() -> None:
    metric = _replay("resource-cpu-utilization.json")["metrics"][0]
    assert metric["current"] == {"averageUtilization": 90, "averageValue": "450m", "averageValueMilli": 450}
    assert metric["usageRatio"] == 1.5
    assert metric["pods"] == {"ready": ["web-1", "web-2", "web-3"], "unready": [], "missing": [], "ignored": []}
    assert metric["explanation"] == "ceil(1.5 * 3 ready pods) = 5"


def test_external_example_reports_the_window_that_held_it() -> None:
    out = _replay("external-queue-depth.json")
    assert out["stabilization"]["reason"] == "ScaleDownStabilized"
    assert [r["replicas"] for r in out["stabilization"]["scaleDownWindow"]] == [3, 2]
    assert out["metrics"][0]["current"]["averageValue"] == "13"
    assert out["status"]["currentMetrics"] == [
        {
            "type": "External",
            "external": {
                "metric": {"name": "rabbitmq_queue_messages_ready", "selector": {"matchLabels": {"queue": "orders"}}},
                "current": {"averageValue": "13"},
            },
        }
    ]


def test_partial_failure_holds_and_says_why() -> None:
    out = _replay("partial-failure-holds.json")
    assert (out["desiredReplicas"], out["rescale"]) == (4, False)
    assert out["metrics"][0]["proposedReplicas"] == 2
    assert out["metrics"][1]["errorReason"] == "FailedGetExternalMetric"
    active = next(c for c in out["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "FailedGetExternalMetric")
    assert [e["reason"] for e in out["events"]] == ["FailedGetExternalMetric", "FailedComputeMetricsReplicas"]
    assert out["status"]["currentMetrics"][1] == {"type": ""}


def test_decision_state_feeds_the_next_snapshot() -> None:
    """A decision's behaviorState is in the input format: replaying with it continues the history."""
    first = _replay("resource-cpu-utilization.json")
    snapshot = json.loads((EXAMPLES / "resource-cpu-utilization.json").read_text())
    snapshot["behaviorState"] = first["behaviorState"]
    snapshot["now"] = "2026-11-21T12:00:15Z"
    second = replay_data(snapshot)
    assert [r["replicas"] for r in second["behaviorState"]["recommendations"]] == [3, 5, 5]
