"""The example custom resources in config/ are what the CRD's own openAPIV3Schema accepts (with its CEL rules),
their other objects are valid Kubernetes, and the examples pass `autoscaler check` with their settings."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from autoscaler.daemon.check import check_config
from tests.chart.chart import ROOT
from tests.spec.crd_schema import crd_problems

CONFIG = ROOT / "config"
MANIFESTS = sorted([*CONFIG.glob("samples/*.yaml"), *CONFIG.glob("examples/*.yaml")])
SETTINGS = CONFIG / "daemon.yaml"


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def settings_of(example: Path) -> Path:
    """An example's own settings (config/examples/daemon/<name>.yaml), else config/daemon.yaml."""
    own = example.parent / "daemon" / example.name
    return own if own.is_file() else SETTINGS


def test_the_examples_are_there() -> None:
    names = {p.name for p in MANIFESTS}
    assert {"cpu-like-hpa.yaml", "business-metric.yaml", "mimir-multi-tenant.yaml", "web.yaml"} <= names


@pytest.mark.parametrize("path", MANIFESTS, ids=[str(p.relative_to(CONFIG)) for p in MANIFESTS])
def test_every_custom_resource_passes_the_crds_schema(path: Path) -> None:
    autoscalers = [d for d in documents(path) if d["kind"] == "PrometheusAutoscaler"]
    assert autoscalers, f"{path.name} has no PrometheusAutoscaler"
    for doc in autoscalers:
        assert crd_problems(doc) == [], doc["metadata"]["name"]


def test_the_crd_check_can_fail() -> None:
    doc = documents(CONFIG / "examples" / "cpu-like-hpa.yaml")[1]
    doc["spec"]["metrics"][0]["resource"]["target"]["averageUtilisation"] = 60  # a misspelt field
    problems = dict(crd_problems(doc))
    assert "spec.metrics[0].resource.target.averageUtilisation" in problems


@pytest.mark.parametrize("version", ["1.29", "1.37"])
@pytest.mark.parametrize("path", MANIFESTS, ids=[str(p.relative_to(CONFIG)) for p in MANIFESTS])
def test_every_other_object_is_valid_kubernetes(path: Path, version: str) -> None:
    for doc in documents(path):
        if doc["kind"] != "PrometheusAutoscaler":
            kubernetes_validate.validate(doc, version, strict=True)


EXAMPLES = sorted(p for p in CONFIG.glob("examples/*.yaml") if p.name != "scale-to-zero.yaml")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_each_example_passes_autoscaler_check_with_its_settings(path: Path) -> None:
    out = io.StringIO()
    status = check_config(str(settings_of(path)), [str(path)], gates={}, new=True, out=out, env={})
    assert status == 0, out.getvalue()


def test_the_mimir_tenants_are_the_settings_servers() -> None:
    """With settings that lack the tenants' servers the same file is refused, metric by metric."""
    out = io.StringIO()
    example = CONFIG / "examples" / "mimir-multi-tenant.yaml"
    assert check_config(str(SETTINGS), [str(example)], gates={}, new=True, out=out, env={}) == 1
    assert out.getvalue().count("spec.metrics[0].prometheus.server") == 2, out.getvalue()
