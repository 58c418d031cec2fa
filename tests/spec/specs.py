"""Specs for the spec layer's tests: a valid PrometheusAutoscaler, mutations of it, and its problems by each way in.

`replay_problems` replays a snapshot holding the object; `check_problems` runs the spec-file loader behind
`autoscaler check` on it written as a YAML file. Both return the (field path, message) pairs they report.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from autoscaler.replay import replay_data
from autoscaler.spec.errors import SpecError
from autoscaler.spec.files import load_spec_text

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "docs" / "snapshots" / "resource-cpu-utilization.json").read_text())

Mutation = Callable[[dict[str, Any]], None]


def base() -> dict[str, Any]:
    """A valid PrometheusAutoscaler: a Resource, a Pods and an External metric, and behavior."""
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                },
                {
                    "type": "Pods",
                    "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "50"}},
                },
                {
                    "type": "External",
                    "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "100"}},
                },
            ],
            "behavior": {
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}],
                },
                "scaleDown": {"selectPolicy": "Min", "tolerance": "0.05"},
            },
        },
    }


def at(path: str, value: Any) -> Mutation:
    """Set (or, for DELETE, remove) the value at a dotted path of the object ("spec.metrics.0.type")."""

    def mutate(obj: dict[str, Any]) -> None:
        node: Any = obj
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        last: Any = int(parts[-1]) if parts[-1].isdigit() else parts[-1]
        if value is DELETE:
            del node[last]
        else:
            node[last] = copy.deepcopy(value)

    return mutate


DELETE = object()
RESOURCE_TARGET = "spec.metrics.0.resource.target"
PODS_TARGET = "spec.metrics.1.pods.target"
EXTERNAL_TARGET = "spec.metrics.2.external.target"
OBJECT_METRIC = {
    "type": "Object",
    "object": {
        "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
        "metric": {"name": "requests"},
        "target": {"type": "Value", "value": "10"},
    },
}
CONTAINER_METRIC = {
    "type": "ContainerResource",
    "containerResource": {
        "name": "cpu",
        "container": "app",
        "target": {"type": "Utilization", "averageUtilization": 60},
    },
}


def apply(mutations: Any) -> dict[str, Any]:
    """The base object with each mutation applied in turn."""
    obj = base()
    for mutate in mutations:
        mutate(obj)
    return obj


def _inputs(spec: Any) -> int:
    """How many inputs a spec's drainTime and formula read (the snapshot carries a reading for each)."""
    if not isinstance(spec, dict):
        return 0
    formula = spec.get("formula")
    inputs = formula.get("inputs") if isinstance(formula, dict) else None
    return (2 if "drainTime" in spec else 0) + (len(inputs) if isinstance(inputs, list) else 0)


def replay_problems(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """Replay a snapshot holding the object; every metric reads as failed, which is valid input."""
    snap = copy.deepcopy(SNAPSHOT)
    snap["autoscaler"] = {"metadata": obj["metadata"], "spec": obj["spec"]}
    metrics = obj["spec"].get("metrics")
    extra = _inputs(obj["spec"])
    snap["metrics"] = [{"error": "not read in this test"}] * (
        len(metrics) if isinstance(metrics, list) and metrics else 0 if extra else 1
    )
    if extra:
        snap["inputs"] = [{"error": "not read in this test"}] * extra
    try:
        replay_data(snap)
    except SpecError as err:
        return [(path.removeprefix("autoscaler."), message) for path, message in err.problems]
    return []


def check_problems(obj: dict[str, Any], *, new: bool, scale_to_zero: bool = False) -> list[tuple[str, str]]:
    """The spec-file loader behind `autoscaler check`, on the object written as a YAML file."""
    text = "# a workload\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n" + yaml.safe_dump(obj)
    result = load_spec_text(text, source="spec.yaml", scale_to_zero=scale_to_zero, stored=not new)
    assert not result.problems, result.problems
    (document,) = result.documents
    assert document.index == 2 and document.label == "PrometheusAutoscaler shop/web"
    return document.problems
