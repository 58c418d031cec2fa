"""The scale-in examples in config/examples are complete: `autoscaler check` accepts them, the CRD schema
accepts them, their Prometheus bindings pass the metric-source layer's checks, and the emulator takes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics import MetricsSettings, check_binding
from autoscaler.sim.apiserver import EmulatedApiServer
from autoscaler.spec.files import load_spec_file, load_spec_text
from tests.spec.crd_schema import crd_problems

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"
FILES = [EXAMPLES / "rollout-aware.yaml", EXAMPLES / "spare-busy-pods.yaml"]
SETTINGS = MetricsSettings.model_validate({"servers": {"main": {"url": "http://prometheus.monitoring:9090"}}})


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_the_example_is_accepted_everywhere(path: Path) -> None:
    loaded = load_spec_file(str(path), scale_to_zero=False, stored=False)
    assert loaded.valid, (loaded.problems, [d.problems for d in loaded.documents])
    (autoscaler,) = loaded.autoscalers
    model = autoscaler.model
    for metric_model, metric in zip(model.metrics or (), autoscaler.spec.metrics, strict=True):
        binding = metric_model.prometheus
        if binding is not None:
            assert check_binding(binding, metric_type=MetricSourceType(metric.type), settings=SETTINGS) == []
    if model.scale_down is not None and model.scale_down.pod_deletion_cost is not None:
        cost_binding = model.scale_down.pod_deletion_cost.prometheus
        assert cost_binding is not None
        assert check_binding(cost_binding, metric_type=MetricSourceType.PODS, settings=SETTINGS) == []
        assert autoscaler.spec.pod_deletion_cost is not None
    else:
        assert autoscaler.spec.rollout_aware is True
    for doc in _docs(path):
        if doc["kind"] == "PrometheusAutoscaler":
            assert crd_problems(doc) == []
    with EmulatedApiServer(seed=_docs(path)) as srv:
        for doc in _docs(path):
            assert srv.get(doc["apiVersion"], doc["kind"], doc["metadata"]["name"], namespace="default")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("rolloutAware", True, id="rolloutAware"),
        pytest.param("rolloutAware", False, id="rolloutAware false is still a field an HPA lacks"),
        pytest.param("scaleDown", {"podDeletionCost": {"metric": {"name": "inflight_jobs"}}}, id="scaleDown"),
    ],
)
def test_an_hpa_manifest_has_no_scale_in_extensions(field: str, value: object) -> None:
    hpa: dict[str, Any] = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    }
    hpa["spec"][field] = value
    (document,) = load_spec_text(yaml.safe_dump(hpa), source="x.yaml", scale_to_zero=False).documents
    assert document.problems == [
        (f"spec.{field}", f"unknown field: a HorizontalPodAutoscaler has no {field} (a PrometheusAutoscaler has)")
    ]
