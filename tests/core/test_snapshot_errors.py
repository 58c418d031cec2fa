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
from autoscaler.spec.files import parse_json
from autoscaler.spec.snapshot import load_snapshot

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
            "autoscaler.spec.maxReplicas",
            "must be greater than or equal to `minReplicas` (10 < 12)",
            id="min above max",
        ),
        pytest.param(
            _set("autoscaler.spec.metrics.0.type", "Pods"),
            "autoscaler.spec.metrics[0].pods",
            "must populate information for the given metric source (Pods)",
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
            "greater than or equal to 1, not 0",
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
        pytest.param(lambda snap: snap.pop("metrics"), "metrics", "required field is missing", id="no metrics key"),
        pytest.param(
            _set("behaviorState", {"scaleDownEvents": [{"replicaChange": 0, "timestamp": "2026-11-21T11:59:00Z"}]}),
            "behaviorState.scaleDownEvents[0].replicaChange",
            "must be 1 or more, not 0: a scale event records the replicas a scale write added or removed",
            id="a scale event that changed nothing",
        ),
        pytest.param(
            _set("behaviorState", {"scaleUpEvents": [{"replicaChange": -2, "timestamp": "2026-11-21T11:59:00Z"}]}),
            "behaviorState.scaleUpEvents[0].replicaChange",
            "must be 1 or more, not -2",
            id="a negative scale event",
        ),
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
        pytest.param(_set("metrics.0", {"error": ""}), "metrics[0].error", "non-empty string", id="an empty error"),
        pytest.param(_set("dryRun", "yes"), "dryRun", "valid boolean", id="dryRun as a string"),
        pytest.param(_set("scaleWriteError", ""), "scaleWriteError", "at least 1 character", id="an empty write error"),
        pytest.param(
            _set("autoscaler.spec.metrics.0.prometheus", {"qurey": "sum(up)"}),
            "autoscaler.spec.metrics[0].prometheus.qurey",
            "unknown field",
            id="a misspelled Prometheus binding field",
        ),
        # Counts: never negative, never beyond int32, always integers (a missing one is 0, as the API omits it).
        pytest.param(
            _set("scale.spec.replicas", -1),
            "scale.spec.replicas",
            "greater than or equal to 0, not -1",
            id="a negative scale",
        ),
        pytest.param(
            _set("scale.status.replicas", -3),
            "scale.status.replicas",
            "greater than or equal to 0",
            id="a negative status count",
        ),
        pytest.param(
            _set("autoscaler.status", {"desiredReplicas": -1}),
            "autoscaler.status.desiredReplicas",
            "greater than or equal to 0",
            id="a negative desired count in the HPA status",
        ),
        pytest.param(
            _set("scale.spec.replicas", 10**30),
            "scale.spec.replicas",
            "less than or equal to 2147483647, not an integer beyond 64 bits",
            id="10**30 replicas",
        ),
        pytest.param(
            _set("autoscaler.spec.maxReplicas", 2**31),
            "autoscaler.spec.maxReplicas",
            "less than or equal to 2147483647",
            id="maxReplicas beyond int32",
        ),
        # Strict types, in the autoscaler's own fields and in the Kubernetes objects read.
        pytest.param(
            _set("scale.spec.replicas", "2"),
            "scale.spec.replicas",
            "valid integer, not the string '2'",
            id="a count as a string",
        ),
        pytest.param(
            _set("scale.status.replicas", True),
            "scale.status.replicas",
            "valid integer, not true",
            id="a count as a boolean",
        ),
        pytest.param(
            _set("scale.spec.replicas", 3.0),
            "scale.spec.replicas",
            "valid integer, not the number 3.0",
            id="a count as a float",
        ),
        pytest.param(
            _set("autoscaler.spec.minReplicas", "2"),
            "autoscaler.spec.minReplicas",
            "valid integer",
            id="minReplicas as a string",
        ),
        pytest.param(
            _set("behaviorState", {"recommendations": [{"replicas": "3", "timestamp": "2026-11-21T11:59:00Z"}]}),
            "behaviorState.recommendations[0].replicas",
            "valid integer",
            id="a recommendation as a string",
        ),
        pytest.param(
            _set("settings", {"tolerance": "0.1"}), "settings.tolerance", "valid number", id="a setting as a string"
        ),
        pytest.param(
            _set("settings", {"featureGates": {"HPAScaleToZero": "true"}}),
            "settings.featureGates.HPAScaleToZero",
            "valid boolean",
            id="a gate as a string",
        ),
        pytest.param(
            _set("pods.0.metadata.labels", {"app": 5}),
            "pods[0].metadata.labels.app",
            "valid string",
            id="a label value as a number",
        ),
        pytest.param(
            _set("scale.status.selector", ["app=web"]),
            "scale.status.selector",
            "valid string",
            id="a selector as a list",
        ),
        # Settings and feature gates.
        pytest.param(
            _set("settings", {"configurableTolerance": False}),
            "settings.configurableTolerance",
            "has moved: set featureGates.HPAConfigurableTolerance beside it instead",
            id="the old tolerance gate key",
        ),
        pytest.param(
            _set("settings", {"featureGates": {"HPAScaleToZeroo": True}}),
            "settings.featureGates",
            "unknown feature gate 'HPAScaleToZeroo'",
            id="an unknown feature gate",
        ),
        pytest.param(
            _set("settings", {"tolerance": float("nan")}), "settings.tolerance", "finite number", id="a NaN setting"
        ),
        pytest.param(
            _set("settings", {"cpuInitializationPeriodSeconds": 1e300}),
            "settings.cpuInitializationPeriodSeconds",
            "less than or equal to 9223372036",
            id="a setting longer than a Go duration",
        ),
        # The spec's rules (autoscaler/spec/validation.py; every rule: tests/spec/test_rules_in_step.py).
        pytest.param(
            _set("autoscaler.spec.metrics.0.resource.target", {"type": "Value", "value": "1"}),
            "autoscaler.spec.metrics[0].resource.target.type",
            "a Resource metric takes a Utilization or AverageValue target, not Value",
            id="a Resource metric with a Value target",
        ),
        pytest.param(
            _set(
                "autoscaler.spec.metrics.0",
                {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "Value", "value": "1"}}},
            ),
            "autoscaler.spec.metrics[0].pods.target.type",
            "a Pods metric takes an AverageValue target, not Value",
            id="a Pods metric with a Value target (an AverageValue)",
        ),
        pytest.param(
            _set(
                "autoscaler.spec.metrics.0",
                {
                    "type": "External",
                    "external": {"metric": {"name": "q"}, "target": {"type": "Utilization", "averageUtilization": 5}},
                },
            ),
            "autoscaler.spec.metrics[0].external.target.type",
            "an External metric takes a Value or AverageValue target, not Utilization",
            id="an External metric with a Utilization target (an External)",
        ),
        # Pods: each has a name, and is listed once.
        pytest.param(
            lambda snap: snap["pods"].append(copy.deepcopy(snap["pods"][0])),
            "pods[3].metadata.name",
            "pod 'web-1' is listed twice (also pods[0])",
            id="the same pod listed twice",
        ),
        pytest.param(
            _set("pods.1.metadata", {"labels": {"app": "web"}}),
            "pods[1].metadata.name",
            "required field is missing",
            id="a pod without a name",
        ),
        pytest.param(
            _set("pods.1.metadata.name", ""),
            "pods[1].metadata.name",
            "at least 1 character",
            id="a pod with an empty name",
        ),
        pytest.param(
            _set("metrics.0.items.2.metadata.name", "web-1"),
            "metrics[0].items[2].metadata.name",
            "pod 'web-1' has two values (also items[0])",
            id="a pod with two metric values",
        ),
        pytest.param(
            _set("metrics.0.items.1.metadata", {}),
            "metrics[0].items[1].metadata.name",
            "required field is missing",
            id="a metric value without its pod",
        ),
        # Quantities and times a decision cannot hold.
        pytest.param(
            _set("pods.0.spec.containers.0.resources.requests.cpu", 10**30),
            "pods[0].spec.containers[0].resources.requests.cpu",
            "its milli-value does not fit in a 64-bit integer",
            id="a request of 10**30",
        ),
        pytest.param(
            _set("metrics.0.items.0.containers.0.usage.cpu", "9223372036854776"),
            "metrics[0].items[0].containers[0].usage.cpu",
            "does not fit in a 64-bit integer",
            id="a usage whose milli-value overflows int64",
        ),
        pytest.param(
            _set("metrics.0.items.0.containers.0.usage.cpu", True),
            "metrics[0].items[0].containers[0].usage.cpu",
            "not true",
            id="a usage as a boolean",
        ),
        pytest.param(
            _set("now", "1969-12-31T23:59:59Z"), "now", "between 1970-01-01 and 9000-01-01", id="a clock before 1970"
        ),
        pytest.param(
            _set("pods.0.status.startTime", "9999-12-31T23:59:59Z"),
            "pods[0].status.startTime",
            "out of range",
            id="a time too close to the end of the calendar",
        ),
        pytest.param(
            _set("metrics.0.items.0.window", "-30s"),
            "metrics[0].items[0].window",
            "out of range",
            id="a negative window",
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


def test_a_missing_count_is_zero() -> None:
    """The API omits a count of 0: a scale without spec.replicas is at 0 (scaling is then disabled)."""
    snap = copy.deepcopy(BASE)
    snap["scale"] = {"status": {"selector": "app=web"}}
    result = replay_data(snap)
    assert (result["currentReplicas"], result["rescale"]) == (0, False)


def test_feature_gates_reach_the_core() -> None:
    snap = copy.deepcopy(BASE)
    snap["settings"] = {"featureGates": {"HPAScaleToZero": True, "HPAConfigurableTolerance": False}}
    settings = load_snapshot(snap).settings
    assert (settings.hpa_scale_to_zero, settings.configurable_tolerance) == (True, False)
    assert (load_snapshot(BASE).settings.hpa_scale_to_zero, load_snapshot(BASE).settings.configurable_tolerance) == (
        False,
        True,
    )


def test_a_snapshot_must_be_an_object() -> None:
    with pytest.raises(SpecError, match="a snapshot is a JSON object, not list"):
        replay_data([1, 2])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("[" * 512 + "]" * 512, None, id="512 levels"),
        pytest.param("[" * 513 + "]" * 513, "not valid JSON: nested deeper than 512 levels at line 1 column 513",
                     id="513 levels"),
        pytest.param('{"a":\n  ' + "[" * 600 + "]" * 600 + "}", "nested deeper than 512 levels at line 2 column 514",
                     id="513 levels on the second line"),
        pytest.param('{"a": NaN, "b": "NaN"}',
                     "NaN is not a JSON value (JSON has no NaN or Infinity) at line 1 column 7", id="NaN"),
        pytest.param('{"b": "-Infinity",\n "a": -Infinity}', "-Infinity is not a JSON value (JSON has no NaN or "
                     "Infinity) at line 2 column 7", id="-Infinity after the same word in a string"),
        pytest.param('{"a": {"now": 1}, "b": {"now": 1, "c": 2, "n\\u006fw": 3}}',
                     "the key 'now' appears twice in one object, the second time at line 1 column 43",
                     id="a key twice in one object, once in another, once escaped"),
        pytest.param('{"x": 1, "x": 2, "b": {"c": 1, "c": 2}}',
                     "the key 'c' appears twice in one object, the second time at line 1 column 32",
                     id="the duplicate the reader meets first: the inner object ends first"),
        pytest.param('{"a": 1.' + "5" * 5000 + ', "b": ' + "7" * 4301 + "}",
                     "a number has more than 4300 digits at line 1 column 5016", id="the long integer, not the float"),
    ],
)  # fmt: skip
def test_json_problems_have_a_place(text: str, problem: str | None) -> None:
    """Python's json module names no place for these; the message does, by line and column."""
    if problem is None:
        parse_json(text, source="snap.json")
        return
    with pytest.raises(SpecError) as caught:
        parse_json(text, source="snap.json")
    ((field, message),) = caught.value.problems
    assert field == "" and problem in message


def test_a_first_recommendation_is_stamped_as_the_docs_say() -> None:
    """docs/snapshot.md: without recommendations, the current count is recorded one microsecond before `now`."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "snapshot.md").read_text()
    (row,) = [line for line in doc.splitlines() if line.startswith("| `recommendations` |")]
    assert "one microsecond before `now`" in row
    snap = copy.deepcopy(BASE)
    snap["behaviorState"] = {"recommendations": None}
    first = replay_data(snap)["behaviorState"]["recommendations"][0]
    assert (
        first == {"replicas": 3, "timestamp": "2026-11-21T11:59:59.999999Z"} and BASE["now"] == "2026-11-21T12:00:00Z"
    )
