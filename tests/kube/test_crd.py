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


_BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "enum")


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A pydantic JSON-schema node without $ref and without its `null` alternative."""
    while True:
        if "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in node and {"type": "null"} in node["anyOf"]:
            (node,) = [n for n in node["anyOf"] if n != {"type": "null"}]
        else:
            return node


def _bounds(node: dict[str, Any]) -> dict[str, Any]:
    found = {key: node[key] for key in _BOUNDS if key in node}
    if "exclusiveMinimum" in node:  # pydantic's gt=0 on an integer is the CRD's minimum 1
        found["minimum"] = node["exclusiveMinimum"] + 1
    return found


def _compare(crd_node: dict[str, Any], model_node: dict[str, Any], defs: dict[str, Any], path: str) -> list[str]:
    model_node = _resolve(model_node, defs)
    differences = []
    if crd_node.get("x-kubernetes-preserve-unknown-fields"):
        return differences  # an extension object the spec layer alone parses (docs/spec.md)
    if crd_node.get("x-kubernetes-int-or-string"):
        if {n.get("type") for n in model_node.get("anyOf", ())} != {"integer", "string"}:
            differences.append(f"{path}: int-or-string in the CRD, not in the spec layer")
        return differences
    if crd_node.get("type") != model_node.get("type"):
        differences.append(f"{path}: type {crd_node.get('type')} in the CRD, {model_node.get('type')} in the spec")
    if _bounds(crd_node) != _bounds(model_node):
        differences.append(f"{path}: bounds {_bounds(crd_node)} in the CRD, {_bounds(model_node)} in the spec layer")
    if crd_node.get("type") == "object" and "properties" in crd_node:
        if set(crd_node.get("required", ())) != set(model_node.get("required", ())):
            differences.append(f"{path}: required {crd_node.get('required')} vs {model_node.get('required')}")
        if set(crd_node["properties"]) != set(model_node.get("properties", {})):
            differences.append(f"{path}: fields {sorted(crd_node['properties'])} vs {sorted(model_node['properties'])}")
        for name, sub in crd_node["properties"].items():
            if name in model_node.get("properties", {}):
                differences += _compare(sub, model_node["properties"][name], defs, f"{path}.{name}")
    if crd_node.get("type") == "array" and isinstance(crd_node.get("items"), dict):
        differences += _compare(crd_node["items"], model_node["items"], defs, f"{path}[]")
    return differences


def test_the_crd_and_the_spec_layer_hold_the_same_bounds() -> None:
    """Field by field: types, required fields, int32 bounds, lengths, list sizes and enums agree.

    The rules that span fields (CEL in the CRD, autoscaler/spec/validation.py in the spec layer) and the
    patterns are held in step by tests/spec/test_rules_in_step.py, one invalid spec per rule.
    """
    from autoscaler.spec.hpa import AutoscalerSpec

    model = AutoscalerSpec.model_json_schema(by_alias=True)
    crd_spec = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert _compare(crd_spec, model, model.get("$defs", {}), "spec") == []
