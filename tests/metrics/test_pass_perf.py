"""The pass's shortcuts change nothing it answers: plans memoized per key equal plans made one by one, and
the query observer hears once per distinct query sent, with its outcome."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics import MetricsReader, MetricsSettings
from autoscaler.metrics.registry import SourceRegistry
from tests.metrics.helpers import context, pod, request, spec

SETTINGS = MetricsSettings.model_validate(
    {
        "servers": {"main": {"url": "http://127.0.0.1:9"}},
        "templates": {"rps": {"query": "sum by (${by}) (rate(r{${matchers}}[${window}]))"}},
    }
)


def _requests(now: datetime) -> list:
    out = []
    for namespace in ("a", "b"):
        for target in range(3):
            ctx = context(namespace, now, pod(f"t{target}-0"), pod(f"t{target}-1"))
            out += [
                request(spec(MetricSourceType.RESOURCE, resource="cpu"), ctx),
                request(spec(MetricSourceType.PODS, metric="r"), ctx, {"template": "rps"}),
                request(spec(MetricSourceType.PODS, metric="r"), ctx, {"template": "missing"}),
                request(spec(MetricSourceType.EXTERNAL, metric="q", selector={"queue": f"q{target}"}), ctx),
            ]
    return out


def test_memoized_plans_equal_plans_made_one_by_one(base_time: datetime) -> None:
    reader = MetricsReader(SETTINGS, registry=SourceRegistry.builtin(), clients={})
    requests = _requests(base_time)
    together = reader.plan(requests)
    alone = [reader.plan([r])[0] for r in requests]
    assert [repr(p) if not isinstance(p, Exception) else str(p) for p in together] == [
        repr(p) if not isinstance(p, Exception) else str(p) for p in alone
    ]
    errors = [p for p in together if isinstance(p, Exception)]
    assert len(errors) == 6 and len({id(e) for e in errors}) == 6  # each metric its own error object


def test_observer_hears_each_distinct_query(
    prometheus: object, make_reader: Callable[..., MetricsReader], base_time: datetime
) -> None:
    heard: list[tuple[str, float, str]] = []
    settings = SETTINGS.model_copy(update={"servers": make_reader(prometheus.url)._settings.servers})  # type: ignore[attr-defined]
    reader = MetricsReader(settings, registry=SourceRegistry.builtin(), on_query=lambda *call: heard.append(call))
    now = base_time - timedelta(minutes=1)
    requests = [r for r in _requests(now) if r.binding is None or r.binding.template != "missing"]
    result = reader.read(requests)
    # cpu and rps per namespace (2 + 2), one external query per queue (3): 7 distinct queries, 18 metrics
    assert result.queries_sent == len(heard) == 7
    assert {server for server, _, _ in heard} == {"main"}
    assert all(seconds >= 0 for _, seconds, _ in heard)
    assert {outcome for _, _, outcome in heard} <= {"ok"}
