"""Malformed snapshots get errors that name the field and the value, never a traceback."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autoscaler.replay import replay_data
from autoscaler.spec.errors import SpecError

BASE = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "snapshots" / "resource-cpu-utilization.json").read_text()
)


def _spec(snap: dict[str, Any]) -> dict[str, Any]:
    return snap["autoscaler"]["spec"]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(snap: dict[str, Any]) -> None:
        node: Any = snap
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        last = parts[-1]
        node[int(last) if last.isdigit() else last] = value

    return mutate


@pytest.mark.parametrize(
    ("mutate", "field", "words"),
    [
        pytest.param(_set("now", "yesterday"), "now", "RFC 3339", id="a time that is not RFC 3339"),
        pytest.param(
            _set("autoscaler.spec.metrics.0.resource.target.averageUtilization", "lots"),
            "autoscaler.spec.metrics[0].resource.target.averageUtilization",
            "valid integer",
            id="a utilization that is not a number",
        ),
        pytest.param(
            _set("autoscaler.spec.metrics.0.resource.target.averageValue", "5 cores"),
            "autoscaler.spec.metrics[0].resource.target.averageValue",
            "'5 cores' is not a Kubernetes quantity",
            id="a quantity that does not parse",
        ),
        pytest.param(
            _set("autoscaler.spec.maxReplica", 3),
            "autoscaler.spec.maxReplica",
            "unknown field",
            id="a misspelled spec field",
        ),
        pytest.param(
            _set("autoscaler.spec.minReplicas", 12),
            "autoscaler.spec",
            "minReplicas (12) must be less than or equal to maxReplicas (10)",
            id="min above max",
        ),
        pytest.param(
            _set("autoscaler.spec.metrics.0.type", "Pods"),
            "autoscaler.spec.metrics[0]",
            "type Pods needs the field 'pods'",
            id="a metric type without its member",
        ),
        pytest.param(
            _set("autoscaler.spec.behavior", {"scaleUp": {"selectPolicy": "Maximum"}}),
            "autoscaler.spec.behavior.scaleUp.selectPolicy",
            "'Max', 'Min' or 'Disabled'",
            id="an unknown selectPolicy",
        ),
        pytest.param(
            _set(
                "autoscaler.spec.behavior",
                {"scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 60}]}},
            ),
            "autoscaler.spec.behavior.scaleDown.policies[0].value",
            "greater than 0",
            id="a policy that allows nothing",
        ),
        pytest.param(
            _set("pods.1.spec.containers.0.resources.requests.cpu", "half"),
            "pods[1].spec.containers[0].resources.requests.cpu",
            "'half' is not a Kubernetes quantity",
            id="a pod request that does not parse",
        ),
        pytest.param(
            _set("metrics.0.items.2.containers.0.usage.cpu", "fast"),
            "metrics[0].items[2].containers[0].usage.cpu",
            "'fast' is not a Kubernetes quantity",
            id="a metric value that does not parse",
        ),
        pytest.param(
            _set("metrics.0.items.0.window", "a while"),
            "metrics[0].items[0].window",
            "not a duration",
            id="a window that is not a duration",
        ),
        pytest.param(_set("metrics", []), "metrics", "has 0 entries but the spec has 1 metrics", id="too few metrics"),
        pytest.param(
            _set("behaviorState", {"recommendations": [{"replicas": 2}]}),
            "behaviorState.recommendations[0].timestamp",
            "required field is missing",
            id="a recommendation without its time",
        ),
        pytest.param(
            _set("behaviorState", {"scaleUpEvent": []}),
            "behaviorState.scaleUpEvent",
            "unknown field",
            id="a misspelled state field",
        ),
        pytest.param(_set("metrics.0", {"error": ""}), "metrics[0]", "non-empty string", id="an empty error"),
        pytest.param(
            _set("autoscaler.spec.metrics.0.prometheus", {"qurey": "sum(up)"}),
            "autoscaler.spec.metrics[0].prometheus.qurey",
            "unknown field",
            id="a misspelled Prometheus binding field",
        ),
    ],
)
def test_bad_field_is_named(mutate: Callable[[dict[str, Any]], None], field: str, words: str) -> None:
    snap = copy.deepcopy(BASE)
    mutate(snap)
    with pytest.raises(SpecError) as caught:
        replay_data(snap, source="snap.json")
    fields = [path for path, _ in caught.value.problems]
    assert field in fields, caught.value.problems
    message = next(message for path, message in caught.value.problems if path == field)
    assert words in message
    assert str(caught.value).startswith("snap.json: ")


def test_every_problem_is_reported_at_once() -> None:
    snap = copy.deepcopy(BASE)
    _set("now", "soon")(snap)
    _set("autoscaler.spec.maxReplicas", "many")(snap)
    _set("pods.0.status.startTime", "dawn")(snap)
    with pytest.raises(SpecError) as caught:
        replay_data(snap)
    assert {p for p, _ in caught.value.problems} == {"now", "autoscaler.spec.maxReplicas", "pods[0].status.startTime"}


def test_a_snapshot_must_be_an_object() -> None:
    with pytest.raises(SpecError, match="a snapshot is a JSON object, not list"):
        replay_data([1, 2])
