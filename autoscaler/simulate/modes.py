"""The project's modes as specs for the simulator and the quality benchmark: each with the HPA's defaults otherwise."""

from __future__ import annotations

from typing import Any

from autoscaler.spec.hpa import AutoscalerSpec
from autoscaler.spec.validation import load_spec

# Each mode's spec, apart from the metric the scenario sets: minReplicas 1, maxReplicas 100, no behavior.
# `hpa` is the HPA-compatible default (the benchmark's baseline): the same spec the daemon and replay decide.
MODE_SPECS: dict[str, dict[str, Any]] = {
    "hpa": {"minReplicas": 1, "maxReplicas": 100},
    "predictive": {"minReplicas": 1, "maxReplicas": 100, "mode": "predictive"},
}


def mode_spec(mode: str, *, predictive: dict[str, Any] | None = None) -> AutoscalerSpec:
    """The spec of one of MODE_SPECS, validated as a user's would be; `predictive`: spec.predictive's fields set
    (camelCase, as in a spec) for a mode with `mode: predictive`, ignored for the others."""
    data = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, **MODE_SPECS[mode]}
    if predictive and data.get("mode") == "predictive":
        data["predictive"] = dict(predictive)
    return load_spec(data, scale_to_zero=False, path="spec")
