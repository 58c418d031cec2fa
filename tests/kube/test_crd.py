"""The PrometheusAutoscaler CRD: names, a structural schema over the HPA fields, and kubectl's columns."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.kube.client import ClientSettings, connect
from autoscaler.kube.status import AutoscalerStatus, StatusWriter
from tests.kube.conftest import NS, Setup

CRD_PATH = Path(__file__).resolve().parents[2] / "autoscaler" / "kube" / "crd.yaml"


def crd() -> dict[str, Any]:
    doc = yaml.safe_load(CRD_PATH.read_text())
    assert isinstance(doc, dict)
    return doc


def test_names_and_version() -> None:
    spec = crd()["spec"]
    assert crd()["metadata"]["name"] == "prometheusautoscalers.autoscaler.dev"
    assert spec["group"] == "autoscaler.dev"
    assert spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "kind": "PrometheusAutoscaler",
        "listKind": "PrometheusAutoscalerList",
        "plural": "prometheusautoscalers",
        "singular": "prometheusautoscaler",
        "shortNames": ["pas"],
        "categories": ["autoscaling"],
    }
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    columns = [c["name"] for c in version["additionalPrinterColumns"] if not c.get("priority")]
    assert columns == ["Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]


def _walk(schema: dict[str, Any], path: str) -> list[str]:
    """Paths of schema nodes that a structural schema would refuse (no type, no preserve, no int-or-string)."""
    bad = []
    if not (
        schema.get("type")
        or schema.get("x-kubernetes-preserve-unknown-fields")
        or schema.get("x-kubernetes-int-or-string")
    ):
        bad.append(path)
    for name, sub in (schema.get("properties") or {}).items():
        bad += _walk(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        bad += _walk(schema["items"], f"{path}[]")
    return bad


def test_the_schema_is_structural_with_the_hpa_fields_and_open_extensions() -> None:
    schema = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert _walk(schema, "") == []
    spec = schema["properties"]["spec"]["properties"]
    assert {"scaleTargetRef", "minReplicas", "maxReplicas", "metrics", "behavior"} <= set(spec)
    metric = spec["metrics"]["items"]["properties"]
    assert {"resource", "containerResource", "pods", "object", "external", "prometheus"} <= set(metric)
    assert metric["prometheus"]["x-kubernetes-preserve-unknown-fields"] is True
    rules = spec["behavior"]["properties"]["scaleUp"]["properties"]
    assert {"stabilizationWindowSeconds", "policies", "selectPolicy", "tolerance"} <= set(rules)
    status = schema["properties"]["status"]["properties"]
    assert {
        "currentReplicas",
        "desiredReplicas",
        "lastScaleTime",
        "currentMetrics",
        "conditions",
        "observedGeneration",
        "behaviorState",
    } <= set(status)
    assert status["behaviorState"]["x-kubernetes-preserve-unknown-fields"] is True


@pytest.mark.kubectl
def test_kubectl_get_prints_the_hpa_like_columns(server: Any, setup: Setup, tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not on PATH")
    setup.autoscaler("web")
    status = AutoscalerStatus(current_replicas=3, desired_replicas=4, reference="Deployment/web", targets="80%/60%")
    StatusWriter(connect(ClientSettings(server=server.url))).write_status(NS, "web", status)
    result = subprocess.run(
        [kubectl, "--server", server.url, "--cache-dir", str(tmp_path), "get", "pas", "-n", NS],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "KUBECONFIG": os.devnull},
        check=True,
    )
    header, row = result.stdout.splitlines()
    assert header.split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert row.split()[:6] == ["web", "Deployment/web", "80%/60%", "1", "10", "3"]


def test_the_crd_spec_has_exactly_the_fields_the_spec_layer_reads() -> None:
    """A field the CRD accepts but the spec layer refuses (or the reverse) would break on a real cluster."""
    from autoscaler.spec.hpa import AutoscalerSpec, MetricSpec

    def aliases(model: type) -> set[str]:
        return {field.alias or name for name, field in model.model_fields.items()}

    schema = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    assert set(spec["properties"]) == aliases(AutoscalerSpec)
    assert set(spec["properties"]["metrics"]["items"]["properties"]) == aliases(MetricSpec)
