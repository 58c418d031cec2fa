"""A decision explains itself: when the replica calculator fails after it has counted the pods, the decision
still says how it counted them (ready, unready, missing, ignored), so "held: the pods are not ready" needs no
guessing."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from autoscaler.replay import replay_data, run

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _time(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str, *, phase: str, ready: str | None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase, "startTime": _time(NOW - timedelta(seconds=20))}
    if ready is not None:
        status["conditions"] = [
            {"type": "Ready", "status": ready, "lastTransitionTime": _time(NOW - timedelta(seconds=20))}
        ]
    return {
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": status,
    }


def _snapshot(pods: list[dict[str, Any]], usage: dict[str, str]) -> dict[str, Any]:
    return {
        "now": _time(NOW),
        "autoscaler": {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                    }
                ],
            },
        },
        "scale": {"spec": {"replicas": 3}, "status": {"replicas": 3, "selector": "app=web"}},
        "pods": pods,
        "metrics": [
            {
                "items": [
                    {
                        "metadata": {"name": name, "namespace": "default"},
                        "timestamp": _time(NOW),
                        "window": "30s",
                        "containers": [{"name": "app", "usage": {"cpu": cpu}}],
                    }
                    for name, cpu in usage.items()
                ]
            }
        ],
        "behaviorState": {"recommendations": []},
    }


def test_held_because_no_pod_is_ready_shows_the_pods_by_group() -> None:
    pods = [
        _pod("web-a", phase="Running", ready="False"),
        _pod("web-b", phase="Pending", ready=None),
        _pod("web-c", phase="Succeeded", ready="False"),
    ]
    result = replay_data(_snapshot(pods, {"web-a": "400m"}))
    (metric,) = result["metrics"]
    assert metric["error"].endswith("did not receive metrics for targeted pods (pods might be unready)")
    assert metric["pods"] == {"ready": [], "unready": ["web-a", "web-b"], "missing": [], "ignored": ["web-c"]}
    assert (result["desiredReplicas"], result["rescale"]) == (3, False)


def test_a_missing_request_still_shows_how_the_pods_were_counted() -> None:
    pods = [_pod("web-a", phase="Running", ready="True"), _pod("web-b", phase="Running", ready="True")]
    pods[1]["spec"]["containers"][0]["resources"] = {}
    pods[0]["status"]["startTime"] = pods[1]["status"]["startTime"] = _time(NOW - timedelta(minutes=10))
    result = replay_data(_snapshot(pods, {"web-a": "400m", "web-b": "300m"}))
    (metric,) = result["metrics"]
    assert "missing request for cpu in container app of Pod web-b" in metric["error"]
    assert metric["pods"] == {"ready": ["web-a", "web-b"], "unready": [], "missing": [], "ignored": []}


def test_a_metric_that_failed_before_counting_pods_has_no_groups() -> None:
    result = replay_data(_snapshot([_pod("web-a", phase="Running", ready="True")], {}))
    (metric,) = result["metrics"]
    assert metric["error"] is not None
    assert metric["pods"] is None


def test_missing_pods_hold_from_the_spec_through_replay() -> None:
    """`spec.missingPods: Hold` reaches the core: one stale pod holds 3 where the HPA's rebalancing gives 2."""
    pods = [_pod(f"web-{c}", phase="Running", ready="True") for c in "abc"]
    for pod in pods:
        pod["status"]["startTime"] = _time(NOW - timedelta(minutes=10))
    snapshot = _snapshot(pods, {"web-a": "50m", "web-b": "50m"})
    assert replay_data(snapshot)["desiredReplicas"] == 2
    snapshot["autoscaler"]["spec"]["missingPods"] = "Hold"
    held = replay_data(snapshot)
    assert held["desiredReplicas"] == 3
    assert "web-c" in held["metrics"][0]["explanation"]


def test_the_text_output_names_the_pods_that_held_the_decision(tmp_path: Path) -> None:
    pods = [_pod("web-a", phase="Running", ready="False"), _pod("web-b", phase="Pending", ready=None)]
    path = tmp_path / "unready.json"
    path.write_text(json.dumps(_snapshot(pods, {"web-a": "400m"})))
    out, err = io.StringIO(), io.StringIO()
    assert run([str(path)], output="text", out=out, err=err) == 0
    text = out.getvalue()
    assert "hold: no metric could be computed (cpu resource: 0 ready, 2 unready, 0 missing, 0 ignored pods)" in text
    assert "    pods: ready 0, unready 2, missing 0, ignored 0 (unready: web-a web-b)" in text


def test_two_targets_equal_explanations_are_one_string_each() -> None:
    """Thousands of steady targets explain themselves in the same few words: the summary and the conditions'
    messages are interned, one string each however many decisions the daemon keeps (docs/performance.md)."""
    from autoscaler.replay import decide_snapshot
    from autoscaler.spec.snapshot import load_snapshot

    decisions = []
    for app in ("web", "api"):
        pods = [_pod(f"{app}-{c}", phase="Running", ready="True") for c in "abc"]
        for pod in pods:
            pod["status"]["startTime"] = _time(NOW - timedelta(minutes=10))
        snapshot = _snapshot(pods, {pod["metadata"]["name"]: "300m" for pod in pods})
        snapshot["autoscaler"]["metadata"]["name"] = app
        decisions.append(decide_snapshot(load_snapshot(snapshot, source=app)))
    web, api = decisions
    assert web.summary == api.summary and web.summary is api.summary
    assert [c.message for c in web.conditions] == [c.message for c in api.conditions]
    assert all(one.message is other.message for one, other in zip(web.conditions, api.conditions, strict=True))


def test_the_shared_texts_table_is_bounded() -> None:
    """A message can carry an error's text, new each time: the table that shares equal texts is cleared when full,
    so it never holds more than MAX_SHARED_TEXTS strings, and a text is always given back equal."""
    from autoscaler.core import conditions

    made = [f"unable to get metric: timeout after {i} ms" for i in range(conditions.MAX_SHARED_TEXTS + 10)]
    for text in made:
        assert conditions.shared_text(text) == text
        assert len(conditions._TEXTS) <= conditions.MAX_SHARED_TEXTS
    again = "".join(["unable to get metric: timeout after ", str(len(made) - 1), " ms"])
    assert conditions.shared_text(again) is made[-1]  # still held: one string for equal texts
