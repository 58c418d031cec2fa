"""The sample manifests in config/samples are valid: the spec layer reads every autoscaler in them, their
Prometheus bindings pass the metric-source layer's checks, and the emulator accepts every object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics import MetricsSettings, check_binding
from autoscaler.sim.apiserver import EmulatedApiServer
from autoscaler.spec.hpa import AutoscalerSpec, to_core

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "config" / "samples").glob("*.yaml"))
SETTINGS = MetricsSettings.model_validate({"servers": {"main": {"url": "http://prometheus.monitoring:9090"}}})


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_autoscalers_parse_and_bind(path: Path) -> None:
    autoscalers = [d for d in _docs(path) if d["kind"] == "PrometheusAutoscaler"]
    assert autoscalers, f"{path.name} has no PrometheusAutoscaler"
    for doc in autoscalers:
        spec = AutoscalerSpec.model_validate(doc["spec"])
        core = to_core(spec)
        for model, metric in zip(spec.metrics or (), core.metrics, strict=True):
            if model.prometheus is not None:
                assert (
                    check_binding(model.prometheus, metric_type=MetricSourceType(metric.type), settings=SETTINGS) == []
                )


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_the_emulator_accepts_every_sample_object(path: Path) -> None:
    with EmulatedApiServer(seed=_docs(path)) as srv:
        for doc in _docs(path):
            got = srv.get(doc["apiVersion"], doc["kind"], doc["metadata"]["name"], namespace="default")
            for key, value in doc["spec"].items():
                if key != "template":  # the server defaults fields inside pod templates
                    assert got["spec"][key] == value, f"{doc['kind']}.spec.{key}"
