"""The registry: one built-in source per metric type, third parties through the entry-point group."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import ClassVar

import pytest

from autoscaler.core.types import ExternalReading, MetricSourceType, Reading
from autoscaler.metrics import (
    ENTRY_POINT_GROUP,
    Answer,
    MetricRequest,
    MetricsReader,
    MetricsSettings,
    PermanentError,
    Query,
    QueryPlan,
    SourceRegistry,
)
from autoscaler.metrics import registry as registry_module
from autoscaler.metrics.sources import BUILTIN_SOURCES
from tests.metrics.helpers import context, request, spec

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class ConstantSource:
    """A third-party source: External metrics read as a constant, through a query of its own."""

    name: ClassVar[str] = "constant"
    metric_types: ClassVar[tuple[MetricSourceType, ...]] = (MetricSourceType.EXTERNAL,)

    def plan(self, request: MetricRequest, *, settings: MetricsSettings) -> QueryPlan:
        query = Query(server="main", promql="vector(42)", time=request.context.now)
        return QueryPlan(query, "vector", (), False, 60.0, 60.0)

    def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        return ExternalReading((int(float(answer.series[0].value) * 1000),), request.context.now)


class FakeClient:
    """Answers every query with one series holding 42."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def query(self, promql: str, *, time: datetime, budget_seconds: float, deadline_seconds: float) -> Answer:
        from autoscaler.metrics import Series

        self.sent.append(promql)
        return Answer("vector", (Series({}, "42", time.timestamp()),))

    def close(self) -> None:
        pass


def test_every_metric_type_has_exactly_one_builtin_source() -> None:
    registry = SourceRegistry.builtin()
    for metric_type in MetricSourceType:
        owners = [cls for cls in BUILTIN_SOURCES if metric_type in cls.metric_types]
        assert len(owners) == 1, metric_type
        assert registry.default_for(metric_type).name == owners[0].name


def test_builtins_are_sorted_by_name() -> None:
    names = [cls.name for cls in BUILTIN_SOURCES]
    assert names == sorted(names) and len(set(names)) == len(names)


def test_the_entry_point_group_is_declared() -> None:
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert ENTRY_POINT_GROUP in pyproject["project"]["entry-points"]


def _with_entry_points(monkeypatch: pytest.MonkeyPatch, *points: EntryPoint) -> None:
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [p for p in points if p.group == group])


def test_third_party_source_through_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_entry_points(monkeypatch, EntryPoint("constant", f"{__name__}:ConstantSource", ENTRY_POINT_GROUP))
    registry = SourceRegistry.installed()
    assert "constant" in registry.names()
    settings = MetricsSettings.model_validate({"servers": {"main": {"url": "http://127.0.0.1:1"}}})
    client = FakeClient()
    reader = MetricsReader(settings, registry=registry, clients={"main": client})
    chosen = request(spec(MetricSourceType.EXTERNAL, metric="x"), context("ns", NOW), {"source": "constant"})
    assert reader.read_one(chosen) == ExternalReading((42000,), NOW)
    assert client.sent == ["vector(42)"]
    # Without `source`, the built-in reads the metric.
    default = request(spec(MetricSourceType.EXTERNAL, metric="x"), context("ns", NOW))
    assert reader.read_one(default) == ExternalReading((42000,), NOW)
    assert client.sent[-1].startswith("(x{}) or")
    # A source asked for a type it does not read is a config error.
    wrong = request(spec(MetricSourceType.PODS, metric="x"), context("ns", NOW), {"source": "constant"})
    with pytest.raises(PermanentError, match="cannot read Pods"):
        reader.read_one(wrong)


def test_broken_or_clashing_entry_points_say_which(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_entry_points(monkeypatch, EntryPoint("broken", "no_such_module:Source", ENTRY_POINT_GROUP))
    with pytest.raises(PermanentError, match="'broken'"):
        SourceRegistry.installed()
    clash = EntryPoint("clash", "autoscaler.metrics.sources:PodsSource", ENTRY_POINT_GROUP)
    _with_entry_points(monkeypatch, clash)
    with pytest.raises(PermanentError, match="two metric sources are named 'prometheus-pods'"):
        SourceRegistry.installed()


def test_a_crashing_source_fails_only_its_metric() -> None:
    class Crashing(ConstantSource):
        name: ClassVar[str] = "crashing"

        def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
            raise ZeroDivisionError("oops")

    registry = SourceRegistry.builtin()
    registry.add(Crashing())
    settings = MetricsSettings.model_validate({"servers": {"main": {"url": "http://127.0.0.1:1"}}})
    reader = MetricsReader(settings, registry=registry, clients={"main": FakeClient()})
    ctx = context("ns", NOW)
    outcomes = reader.read(
        [
            request(spec(MetricSourceType.EXTERNAL, metric="x"), ctx, {"source": "crashing"}),
            request(spec(MetricSourceType.EXTERNAL, metric="x"), ctx, {"source": "constant"})
            if "constant" in registry.names()
            else request(spec(MetricSourceType.EXTERNAL, metric="x"), ctx),
        ]
    ).outcomes
    assert isinstance(outcomes[0], PermanentError) and outcomes[0].error_type == "source"
    assert outcomes[1] == ExternalReading((42000,), NOW)
