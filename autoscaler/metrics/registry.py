"""The registry of metric sources: the built-ins, then third parties' through the entry-point group
`autoscaler.metric_sources`.

An entry point names a class (or any callable) that returns a `MetricSource` when called without
arguments; its `name` must be new. A metric is read by the source its binding names (`prometheus.source`),
else by the built-in for its type.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import entry_points

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics.context import MetricRequest
from autoscaler.metrics.errors import PermanentError
from autoscaler.metrics.source import MetricSource
from autoscaler.metrics.sources import BUILTIN_SOURCES

ENTRY_POINT_GROUP = "autoscaler.metric_sources"


class SourceRegistry:
    """Metric sources by name, and the default source of each metric type."""

    def __init__(self, sources: Iterable[MetricSource]) -> None:
        self._by_name: dict[str, MetricSource] = {}
        self._defaults: dict[MetricSourceType, MetricSource] = {}
        for source in sources:
            self.add(source)

    def add(self, source: MetricSource, *, default: bool = False) -> None:
        """Register `source`; `default` makes it the source of its types (the built-ins are)."""
        if not isinstance(source, MetricSource) or not source.name:
            raise PermanentError(f"{source!r} is not a named MetricSource", error_type="config")
        if source.name in self._by_name:
            raise PermanentError(f"two metric sources are named {source.name!r}", error_type="config")
        self._by_name[source.name] = source
        if default:
            for metric_type in source.metric_types:
                if metric_type in self._defaults:
                    raise PermanentError(f"two default sources for {metric_type} metrics", error_type="config")
                self._defaults[metric_type] = source

    @classmethod
    def builtin(cls) -> SourceRegistry:
        """The built-in Prometheus sources only."""
        registry = cls(())
        for source_class in BUILTIN_SOURCES:
            registry.add(source_class(), default=True)
        return registry

    @classmethod
    def installed(cls) -> SourceRegistry:
        """The built-ins plus every source installed under the entry-point group."""
        registry = cls.builtin()
        for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                factory = entry.load()
                source = factory()
            except Exception as err:  # a broken plugin must say which one it is
                raise PermanentError(
                    f"metric source entry point {entry.name!r} ({entry.value}) failed to load: {err}",
                    error_type="config",
                ) from err
            registry.add(source)
        return registry

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._by_name)

    def get(self, name: str) -> MetricSource:
        """The source registered as `name`."""
        try:
            return self._by_name[name]
        except KeyError:
            raise PermanentError(
                f"no metric source named {name!r} (known: {', '.join(self.names())})", error_type="config"
            ) from None

    def default_for(self, metric_type: MetricSourceType) -> MetricSource:
        """The built-in source of a metric type."""
        try:
            return self._defaults[metric_type]
        except KeyError:
            raise PermanentError(f"no metric source reads {metric_type} metrics", error_type="config") from None

    def for_request(self, request: MetricRequest) -> MetricSource:
        """The source that reads `request`: the one its binding names, else its type's default."""
        binding = request.binding
        if binding is not None and binding.source is not None:
            source = self.get(binding.source)
            if request.spec.type not in source.metric_types:
                raise PermanentError(
                    f"metric source {source.name!r} cannot read {request.spec.type} metrics",
                    error_type="config",
                )
            return source
        return self.default_for(request.spec.type)
