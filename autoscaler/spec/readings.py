"""Metric readings in the shapes of the Kubernetes metrics APIs, into the core's reading types.

One entry per spec metric, in order:
- `{"error": "..."}` for a metric that could not be read;
- Resource / ContainerResource: a metrics.k8s.io PodMetricsList (`items` of PodMetrics);
- Pods: a custom.metrics.k8s.io MetricValueList (`items` with `describedObject.name` and `value`);
- Object: one custom.metrics.k8s.io MetricValue (`value`, `timestamp`);
- External: an external.metrics.k8s.io ExternalMetricValueList (`items` with `value`).
A missing `timestamp` means `now`; a missing window means one minute (the metrics server's default).
Every per-pod item names its pod, and names it once: the HPA maps readings to pods by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from autoscaler.core import types as core
from autoscaler.core.formats import duration_seconds, milli_value, parse_time
from autoscaler.spec.errors import Problem, SpecError, pydantic_problems
from autoscaler.spec.fields import Duration, Quantity, Time, WholeSeconds

DEFAULT_WINDOW_SECONDS = 60.0  # metricServerDefaultMetricWindow


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True, strict=True)


class _Named(_Item):
    name: str = ""


class _PodName(_Item):
    name: str = Field(min_length=1, description="The pod the value belongs to.")


class ContainerMetrics(_Item):
    name: str
    usage: dict[str, Quantity] = Field(default_factory=dict)


class PodMetrics(_Item):
    metadata: _PodName
    timestamp: Time | None = None
    window: Duration | None = None
    containers: list[ContainerMetrics] = Field(default_factory=list)


class PodMetricsList(_Item):
    kind: str | None = None
    items: list[PodMetrics]


class MetricValue(_Item):
    described_object: _Named = Field(default_factory=_Named, alias="describedObject")
    timestamp: Time | None = None
    window_seconds: WholeSeconds | None = Field(None, alias="windowSeconds")
    value: Quantity


class PodMetricValue(_Item):
    described_object: _PodName = Field(alias="describedObject")
    timestamp: Time | None = None
    window_seconds: WholeSeconds | None = Field(None, alias="windowSeconds")
    value: Quantity


class MetricValueList(_Item):
    kind: str | None = None
    items: list[PodMetricValue]


class ExternalMetricValue(_Item):
    timestamp: Time | None = None
    value: Quantity


class ExternalMetricValueList(_Item):
    kind: str | None = None
    items: list[ExternalMetricValue]


def _when(value: str | None, now: datetime) -> datetime:
    return parse_time(value) if value else now


def _window(value: str | int | float | None) -> float:
    if value is None:
        return DEFAULT_WINDOW_SECONDS
    return duration_seconds(value)


def _once(names: Sequence[str], path: str) -> None:
    """Refuse a pod named by two items (raises SpecError with paths relative to the entry)."""
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    for i, name in enumerate(names):
        if name in seen:
            problems.append((f"items[{i}].{path}", f"pod {name!r} has two values (also items[{seen[name]}])"))
        seen.setdefault(name, i)
    if problems:
        raise SpecError(problems)


def reading_to_core(spec: core.MetricSpec, entry: dict[str, Any], *, now: datetime) -> core.MetricInput:
    """One snapshot metric entry, read as the metric's type expects (raises ValidationError or SpecError)."""
    if "error" in entry:
        message = entry["error"]
        if not isinstance(message, str) or not message:
            raise SpecError([("error", "must be a non-empty string")])
        return core.MetricFailure(message)
    match spec.type:
        case core.MetricSourceType.RESOURCE | core.MetricSourceType.CONTAINER_RESOURCE:
            pod_list = PodMetricsList.model_validate(entry)
            _once([item.metadata.name for item in pod_list.items], "metadata.name")
            return core.ResourceReading(
                pods=tuple(
                    core.PodUsage(
                        pod=item.metadata.name,
                        timestamp=_when(item.timestamp, now),
                        window_seconds=_window(item.window),
                        containers=tuple(
                            core.ContainerUsage(c.name, {k: milli_value(v) for k, v in c.usage.items()})
                            for c in item.containers
                        ),
                    )
                    for item in pod_list.items
                )
            )
        case core.MetricSourceType.PODS:
            value_list = MetricValueList.model_validate(entry)
            _once([item.described_object.name for item in value_list.items], "describedObject.name")
            return core.PodsReading(
                items=tuple(
                    core.PodValue(
                        pod=item.described_object.name,
                        value=milli_value(item.value),
                        timestamp=_when(item.timestamp, now),
                        window_seconds=(
                            float(item.window_seconds) if item.window_seconds is not None else DEFAULT_WINDOW_SECONDS
                        ),
                    )
                    for item in value_list.items
                )
            )
        case core.MetricSourceType.OBJECT:
            if "items" in entry:
                items = entry["items"]
                if not isinstance(items, list) or len(items) != 1:
                    raise SpecError([("items", "an Object metric reads exactly one MetricValue")])
                try:
                    value = MetricValue.model_validate(items[0])
                except ValidationError as err:
                    raise SpecError(pydantic_problems(err, "items[0]")) from None
            else:
                value = MetricValue.model_validate(entry)
            return core.ObjectReading(milli_value(value.value), _when(value.timestamp, now))
        case core.MetricSourceType.EXTERNAL:
            external = ExternalMetricValueList.model_validate(entry)
            first = external.items[0].timestamp if external.items else None
            return core.ExternalReading(
                values=tuple(milli_value(item.value) for item in external.items), timestamp=_when(first, now)
            )
    raise SpecError([("", f"unknown metric type {spec.type}")])  # pragma: no cover
