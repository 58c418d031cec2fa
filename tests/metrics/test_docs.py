"""The examples in docs/metrics.md and docs/adding-a-metric-source.md parse and run as written."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from autoscaler.core.types import ExternalReading, MetricSourceType
from autoscaler.metrics import (
    Answer,
    MetricsReader,
    MetricsSettings,
    PrometheusBinding,
    Series,
    SourceRegistry,
    check_binding,
)
from autoscaler.metrics.settings import ResourceTemplates
from tests.metrics.helpers import context, request, spec

DOCS = Path(__file__).resolve().parents[2] / "docs"
SETTINGS = MetricsSettings.model_validate(
    {
        "servers": {"thanos": {"url": "https://t"}, "mimir": {"url": "http://m"}},
        "defaultServer": "thanos",
        "templates": {"http-rps": {"query": "x{${matchers}}"}},
    }
)


def _blocks(name: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (DOCS / name).read_text(), re.DOTALL)


def test_metrics_doc_yaml_is_valid() -> None:
    bindings = settings = 0
    for block in _blocks("metrics.md", "yaml"):
        document: Any = yaml.safe_load(block)
        if "resourceTemplates" in document:
            assert ResourceTemplates.model_validate(document["resourceTemplates"]) == ResourceTemplates()
            continue
        metrics = document["metrics"]
        if isinstance(metrics, dict):
            MetricsSettings.model_validate(metrics)
            settings += 1
            continue
        for entry in metrics:
            binding = PrometheusBinding.model_validate(entry.get("prometheus", {}))
            metric_type = MetricSourceType(entry["type"])
            assert check_binding(binding, metric_type=metric_type, settings=SETTINGS) == []
            bindings += 1
    assert settings >= 1 and bindings >= 7


class _Client:
    def query(self, promql: str, *, time: datetime, budget_seconds: float, deadline_seconds: float) -> Answer:
        assert promql == 'sum(acme_queue_depth{queue="orders"})'
        return Answer("vector", (Series({}, "1234", time.timestamp()),))

    def close(self) -> None:
        pass


def test_adding_a_metric_source_example_runs() -> None:
    (code,) = [block for block in _blocks("adding-a-metric-source.md", "python") if "class AcmeQueueSource" in block]
    namespace: dict[str, Any] = {}
    exec(compile(code, "adding-a-metric-source.md", "exec"), namespace)
    registry = SourceRegistry.builtin()
    registry.add(namespace["AcmeQueueSource"]())
    now = datetime(2026, 1, 1, tzinfo=UTC)
    reader = MetricsReader(SETTINGS, registry=registry, clients={"thanos": _Client()})
    req = request(spec(MetricSourceType.EXTERNAL, metric="orders"), context("ns", now), {"source": "acme-queue"})
    assert reader.read_one(req) == ExternalReading((1234000,), now)
