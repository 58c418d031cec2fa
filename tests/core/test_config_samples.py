"""The sample manifests in config/samples are valid: the spec-file loader behind `autoscaler check` reads
every autoscaler in them as a new object, the CRD schema accepts them, their Prometheus bindings pass the
metric-source layer's checks, and the emulator accepts every object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics import MetricsSettings, check_binding
from autoscaler.sim.apiserver import EmulatedApiServer
from autoscaler.spec.files import load_spec_file
from tests.spec.crd_schema import crd_problems

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "config" / "samples").glob("*.yaml"))
SETTINGS = MetricsSettings.model_validate({"servers": {"main": {"url": "http://prometheus.monitoring:9090"}}})


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_autoscalers_parse_and_bind(path: Path) -> None:
    loaded = load_spec_file(str(path), scale_to_zero=False, stored=False)
    assert loaded.valid, (loaded.problems, [d.problems for d in loaded.documents])
    assert loaded.autoscalers, f"{path.name} has no PrometheusAutoscaler"
    for autoscaler in loaded.autoscalers:
        assert autoscaler.kind == "PrometheusAutoscaler"
        for model, metric in zip(autoscaler.model.metrics or (), autoscaler.spec.metrics, strict=True):
            if model.prometheus is not None:
                assert (
                    check_binding(model.prometheus, metric_type=MetricSourceType(metric.type), settings=SETTINGS) == []
                )
    for doc in _docs(path):
        if doc["kind"] == "PrometheusAutoscaler":
            assert crd_problems(doc) == []


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_the_emulator_accepts_every_sample_object(path: Path) -> None:
    with EmulatedApiServer(seed=_docs(path)) as srv:
        for doc in _docs(path):
            got = srv.get(doc["apiVersion"], doc["kind"], doc["metadata"]["name"], namespace="default")
            for key, value in doc["spec"].items():
                if key != "template":  # the server defaults fields inside pod templates
                    assert got["spec"][key] == value, f"{doc['kind']}.spec.{key}"
