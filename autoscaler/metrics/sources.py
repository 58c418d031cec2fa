"""The built-in Prometheus metric sources, one per HPA metric type.

Each plans one instant query (a named template, the type's default, or a raw query, with label matchers
filled safely) and reads the answer into the core's reading type. Per-pod queries (Resource,
ContainerResource, Pods) match the namespace only and group `by (namespace, pod[, container])`, so every
target of a namespace that shares a template sends the very same query: a pass sends it once and each
target keeps its own pods (see `evaluate.py`). No I/O here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import ClassVar

from autoscaler.core.types import (
    ContainerUsage,
    ExternalReading,
    MetricSourceType,
    ObjectReading,
    PodsReading,
    PodUsage,
    PodValue,
    Reading,
    ResourceReading,
)
from autoscaler.metrics import promql
from autoscaler.metrics.answers import (
    STAMP_TOLERANCE_SECONDS,
    PodIndex,
    check_answer_time,
    check_milli_total,
    check_result_type,
    fast_marker_seconds,
    group_key,
    label_values,
    marker_seconds,
    marker_time,
    no_data,
    pod_index,
    sample_times,
    split_answer,
    to_milli,
    utc,
)
from autoscaler.metrics.context import Answer, MetricRequest, Query, Series
from autoscaler.metrics.errors import PermanentError, StaleDataError
from autoscaler.metrics.settings import MetricsSettings, QueryTemplate
from autoscaler.metrics.source import QueryPlan
from autoscaler.spec.prometheus import PrometheusBinding

DEFAULT_WINDOW_SECONDS = 60.0  # metricServerDefaultMetricWindow in the HPA's metrics client
# A per-pod query marks only the samples older than this before the time asked (the lean form of
# `promql.with_sample_timestamps`); the values of the other pods read as sampled at the time asked.
LEAN_SAMPLE_TIMES_SECONDS = 60.0
_NO_BINDING = PrometheusBinding()


def _window_text(seconds: float) -> str:
    return f"{int(seconds)}s" if float(seconds).is_integer() else f"{round(seconds * 1000)}ms"


class PrometheusSource:
    """What the built-ins share: server choice, template filling, sample times, staleness."""

    name: ClassVar[str] = ""
    metric_types: ClassVar[tuple[MetricSourceType, ...]] = ()
    # Whether the query may mark only the samples older than LEAN_SAMPLE_TIMES_SECONDS (see `plan`).
    lean_sample_times: ClassVar[bool] = False

    # ---- planning -------------------------------------------------------------------------------------

    def plan(self, request: MetricRequest, *, settings: MetricsSettings) -> QueryPlan:
        """The query for one metric: which server, which PromQL, at the context's `now`."""
        if request.spec.type not in self.metric_types:
            raise PermanentError(f"source {self.name!r} cannot read {request.spec.type} metrics", error_type="config")
        binding = request.binding or _NO_BINDING
        server = binding.server or settings.default_server_name()
        if server is None or server not in settings.servers:
            raise PermanentError(
                f"no Prometheus server {server!r} in metrics.servers" if server else "no default Prometheus server",
                error_type="config",
            )
        if binding.query is not None:
            text, freshness = binding.query, binding.freshness
            window = binding.window_seconds or DEFAULT_WINDOW_SECONDS
        else:
            template = self._template(request, binding, settings)
            text, freshness = template.query, binding.freshness or template.freshness
            window = binding.window_seconds or template.window_seconds
        grouping = self.grouping(binding)
        values = self._placeholders(request, binding, grouping, window)
        query_text = promql.render(text, values)
        fresh = promql.render(freshness, values) if freshness is not None else None
        if fresh is None and promql.is_plain_selector(query_text):
            fresh = query_text
        elif fresh is None and binding.query is not None:
            # A raw query aggregating one selector (`sum(queue_depth{...})`) and keeping the labels its values are
            # matched to their sample times by: that selector's sample times, so that samples from before a
            # Prometheus outage are not read as current after it (docs/metrics.md).
            fresh = promql.aggregated_selector(query_text, keeps=grouping)
        if fresh is not None and not promql.is_plain_selector(fresh):
            raise PermanentError(
                f"freshness {fresh!r} must be a plain selector (timestamp() of anything else is the evaluation time)",
                error_type="config",
            )
        if binding.result_type == "scalar":
            fresh = None
        final = promql.with_sample_timestamps(query_text, fresh, grouping) if fresh is not None else query_text
        context = request.context
        staleness = binding.staleness_seconds or settings.staleness_budget_seconds(context.sync_period_seconds)
        query = Query(server=server, promql=final, time=context.now)
        exact: Query | None = None
        lean = 0.0
        if fresh is not None and self.lean_sample_times:
            # Only samples older than LEAN_SAMPLE_TIMES_SECONDS are marked: every sample the staleness budget
            # refuses still is; the reader sends `exact` when a failure it remembers is more recent, and
            # `needs_exact` picks it for a target whose pods' sample times the decision reads. A budget under
            # that gets the exact form at once (`lean_seconds` still set: the reader then gives the exact form
            # to every target asking the same question, so the namespace is still asked once).
            lean = LEAN_SAMPLE_TIMES_SECONDS
            if staleness >= lean:
                # The time asked as the client sends it (to the millisecond), minus the lean window.
                before = round(context.now.timestamp(), 3) - lean
                lean_text = promql.with_sample_timestamps(query_text, fresh, grouping, marked_before=before)
                exact, query = query, Query(server=server, promql=lean_text, time=context.now, remembered_as=final)
        return QueryPlan(
            query=query,
            result_type=binding.result_type,
            grouping=grouping,
            has_timestamps=fresh is not None,
            staleness_seconds=staleness,
            window_seconds=window,
            exact=exact,
            lean_seconds=lean,
        )

    def needs_exact(self, request: MetricRequest, plan: QueryPlan) -> bool:
        """Whether this request needs every sample time (`plan.exact`) rather than those older than
        `plan.lean_seconds`: only when something it decides reads a fresh sample's own time."""
        return False

    def grouping(self, binding: PrometheusBinding) -> tuple[str, ...]:
        """The labels one value is keyed by; `${by}` in templates."""
        return ()

    def matchers(self, request: MetricRequest, binding: PrometheusBinding) -> list[str]:
        """The label matchers `${matchers}` stands for."""
        return promql.selector_matchers(request.spec.metric_selector)

    def default_template(self, request: MetricRequest, settings: MetricsSettings) -> QueryTemplate:
        """The template used when the binding names neither a template nor a query."""
        return QueryTemplate(query="${metric}{${matchers}}")

    def _template(self, request: MetricRequest, binding: PrometheusBinding, settings: MetricsSettings) -> QueryTemplate:
        if binding.template is None:
            return self.default_template(request, settings)
        template = settings.templates.get(binding.template)
        if template is None:
            raise PermanentError(f"no template named {binding.template!r} in metrics.templates", error_type="config")
        return template

    def _placeholders(
        self, request: MetricRequest, binding: PrometheusBinding, grouping: tuple[str, ...], window: float
    ) -> dict[str, Callable[[], str]]:
        spec, context = request.spec, request.context
        described = spec.described_object
        return {
            "matchers": lambda: ", ".join(self.matchers(request, binding)),
            "by": lambda: ", ".join(grouping),
            "namespace": lambda: promql.escape(context.namespace),
            "metric": lambda: promql.check_metric_name(spec.metric_name),
            "object_name": lambda: promql.escape(described.name if described else ""),
            "object_kind": lambda: promql.escape(described.kind if described else ""),
            "container": lambda: promql.escape(spec.container),
            "window": lambda: _window_text(window),
        }

    # ---- reading --------------------------------------------------------------------------------------

    def sample_time(self, plan: QueryPlan, markers: dict[tuple[str, ...], Series], series: Series) -> float:
        """The sample time behind a value: from `timestamp()` when asked for, else the evaluation time. Both
        the value's own stamp and its marker's must be the time asked (`check_answer_time`): an answer
        stamped otherwise is not an answer to this question, however fresh its marker looks."""
        asked = plan.query.time
        check_answer_time(series.timestamp, asked=asked, staleness_seconds=plan.staleness_seconds)
        if plan.has_timestamps:
            marker = markers.get(group_key(series, plan.grouping))
            if marker is not None:
                return marker_time(marker, asked=asked, staleness_seconds=plan.staleness_seconds)
        return series.timestamp

    def check_fresh(self, plan: QueryPlan, now: datetime, sample_time: float) -> None:
        """Refuse a sample older than the staleness budget, or older than the query's last failed attempt to
        reach its server (`plan.failed_at`: a sample from before an outage)."""
        age = now.timestamp() - sample_time
        if age > plan.staleness_seconds:
            raise StaleDataError(
                f"newest sample is {age:.0f} s old, over the {plan.staleness_seconds:g} s staleness budget",
                age_seconds=age,
                budget_seconds=plan.staleness_seconds,
            )
        failed_at = plan.failed_at
        if failed_at is not None and sample_time < failed_at:
            raise StaleDataError(
                f"newest sample ({utc(sample_time):%H:%M:%S}Z, {age:.0f} s old) is older than this query's last "
                f"failed attempt to reach the server ({utc(failed_at):%H:%M:%S}Z): data from before the outage, "
                "not the present; held until Prometheus has a newer sample",
                age_seconds=age,
                budget_seconds=plan.staleness_seconds,
                failed_at=utc(failed_at),
            )

    def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        raise NotImplementedError


class _PerPodSource(PrometheusSource):
    """Resource, ContainerResource and Pods: one query per namespace, split by pod here."""

    # A fresh pod's sample time drops nothing (docs/metrics.md, "Staleness"): only older ones are asked for.
    lean_sample_times = True

    def grouping(self, binding: PrometheusBinding) -> tuple[str, ...]:
        return (binding.namespace_label, binding.pod_label)

    def matchers(self, request: MetricRequest, binding: PrometheusBinding) -> list[str]:
        own = [promql.matcher(binding.namespace_label, "=", request.context.namespace)]
        return own + promql.selector_matchers(request.spec.metric_selector)

    def per_pod(
        self, request: MetricRequest, plan: QueryPlan, answer: Answer
    ) -> tuple[PodIndex, dict[str, list[tuple[int, float]]]]:
        """The target's pods' series (rows of the answer's table) with their sample times; stale pods dropped
        (they read as missing, which the HPA treats conservatively), and so are pods sampled before the query's
        last failed attempt (`plan.failed_at`); `StaleDataError` when every pod is."""
        check_result_type(answer, "vector")
        binding = request.binding or _NO_BINDING
        context = request.context
        index = pod_index(answer, plan.grouping, binding.pod_label)
        table = index.table
        asked, staleness = plan.query.time, plan.staleness_seconds
        # The checks' common case inline, on numbers computed once per call; anything else takes the exact
        # check, for its message (`check_answer_time`, `marker_seconds`, `check_fresh`).
        asked_seconds, now_seconds = asked.timestamp(), context.now.timestamp()
        low, high = asked_seconds - STAMP_TOLERANCE_SECONDS, asked_seconds + STAMP_TOLERANCE_SECONDS
        namespace_label, namespace = binding.namespace_label, context.namespace
        labels, stamps, values = table.labels, table.stamps, table.values
        rows_of, row_markers = index.rows, index.row_markers if plan.has_timestamps else {}
        oldest_fresh = plan.failed_at if plan.failed_at is not None else -math.inf
        found: dict[str, list[tuple[int, float]]] = {}
        stale: StaleDataError | None = None
        pods = dict.fromkeys([one.name for one in context.pods])  # each pod once, in order
        times = sample_times(answer, index, has_timestamps=plan.has_timestamps, low=low, high=high)
        if times is not None and label_values(answer, namespace_label) <= {namespace, None}:
            # The common case, checked once per answer: every row of the namespace, every time the one asked.
            for pod in pods:
                for row in rows_of.get(pod, ()):
                    sample_time = times[row]
                    if now_seconds - sample_time > staleness or sample_time < oldest_fresh:
                        try:
                            self.check_fresh(plan, context.now, sample_time)
                        except StaleDataError as err:
                            stale = err
                            continue
                    if pod in found:
                        found[pod].append((row, sample_time))
                    else:
                        found[pod] = [(row, sample_time)]
            pods = {}
        for pod in pods:
            for row in rows_of.get(pod, ()):
                label = labels[row].get(namespace_label)
                if label is not None and label != namespace:
                    continue
                # A stamp that is not the time asked fails the whole metric (raised here); a sample time past
                # the staleness budget only drops its pod. Both the value's own stamp and its marker's must be
                # the time asked (see `sample_time`).
                sample_time = stamps[row]
                if not low <= sample_time <= high:
                    check_answer_time(sample_time, asked=asked, staleness_seconds=staleness)
                marker = row_markers.get(row)
                if marker is not None:
                    fast = fast_marker_seconds(values[marker], stamps[marker], low=low, high=high)
                    sample_time = (
                        fast
                        if fast is not None
                        else marker_seconds(values[marker], stamps[marker], asked=asked, staleness_seconds=staleness)
                    )
                if now_seconds - sample_time > staleness or sample_time < oldest_fresh:
                    try:
                        self.check_fresh(plan, context.now, sample_time)
                    except StaleDataError as err:
                        stale = err
                        continue
                if pod in found:
                    found[pod].append((row, sample_time))
                else:
                    found[pod] = [(row, sample_time)]
        if not found and stale is not None:
            raise stale
        return index, found


class ResourceSource(_PerPodSource):
    """Resource metrics: per-container usage of every pod, like metrics.k8s.io PodMetrics."""

    name = "prometheus-resource"
    metric_types = (MetricSourceType.RESOURCE,)

    def needs_exact(self, request: MetricRequest, plan: QueryPlan) -> bool:
        """CPU: the HPA leaves out a pod in its initialization period whose sample is older than its last
        readiness change plus the metric window (`core.calculator.group_pods`). A sample read as taken at the
        time asked, T, was taken in [T - lean, T]; that test gives the same answer for both times unless the
        change came after T - lean - window. So a target with such a pod gets every sample time."""
        if plan.exact is None or request.spec.resource_name != "cpu":
            return False
        since = request.context.now - timedelta(seconds=plan.lean_seconds + plan.window_seconds)
        return any(pod.ready_transition is not None and pod.ready_transition > since for pod in request.context.pods)

    def grouping(self, binding: PrometheusBinding) -> tuple[str, ...]:
        return (binding.namespace_label, binding.pod_label, binding.container_label)

    def default_template(self, request: MetricRequest, settings: MetricsSettings) -> QueryTemplate:
        resource = request.spec.resource_name
        templates = settings.resource_templates
        if resource == "cpu":
            return templates.cpu
        if resource == "memory":
            return templates.memory
        raise PermanentError(
            f"no default query for resource {resource!r}; set prometheus.template or prometheus.query",
            error_type="config",
        )

    def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        binding = request.binding or _NO_BINDING
        resource = request.spec.resource_name
        index, found = self.per_pod(request, plan, answer)
        if not found:
            if not binding.empty_as_zero:
                raise no_data("the query returned no series for the target's pods")
            stamp = request.context.now
            return ResourceReading(
                pods=tuple(
                    PodUsage(
                        pod.name,
                        stamp,
                        plan.window_seconds,
                        tuple(ContainerUsage(c.name, {resource: 0}) for c in pod.containers),
                    )
                    for pod in request.context.pods
                )
            )
        times: dict[float, datetime] = {}
        values, labels = index.table.values, index.table.labels
        container_label, names = binding.container_label, index.strings
        ordered = sorted(found.items())
        if all(len(items) == 1 for _, items in ordered):  # one container each, the common case: columns
            rows = [items[0] for _, items in ordered]
            found_names = [labels[row].get(container_label) or "" for row, _ in rows]
            return ResourceReading.from_columns(
                resource=resource,
                names=_names_column(request, found),
                # one string per container name and one time per sample time, kept by the readings
                containers=[names.setdefault(name, name) for name in found_names],
                stamps=[times.get(oldest) or times.setdefault(oldest, utc(oldest)) for _, oldest in rows],
                windows=[plan.window_seconds] * len(rows),
                values=[to_milli(values[row]) for row, _ in rows],
            )
        pods = []
        for pod, items in ordered:
            if len(items) == 1:  # one container, the common case: no merging, sorting or checking
                row, oldest = items[0]
                container = labels[row].get(container_label) or ""
                container = names.setdefault(container, container)  # one string per name, kept by the readings
                usage: tuple[ContainerUsage, ...] = (ContainerUsage(container, {resource: to_milli(values[row])}),)
                when = times.get(oldest) or times.setdefault(oldest, utc(oldest))
                pods.append(PodUsage(pod, when, plan.window_seconds, usage))
                continue
            containers: dict[str, int] = {}
            for row, _ in items:
                container = labels[row].get(container_label) or ""
                container = names.setdefault(container, container)
                if container in containers:
                    raise PermanentError(
                        f"two series for pod {pod!r} container {container!r}; aggregate by pod and container",
                        error_type="too_many_series",
                    )
                containers[container] = to_milli(values[row])
            oldest = min(sample_time for _, sample_time in items)
            usage = tuple(ContainerUsage(name, {resource: value}) for name, value in sorted(containers.items()))
            when = times.get(oldest) or times.setdefault(oldest, utc(oldest))  # pods sampled together share one
            pods.append(PodUsage(pod, when, plan.window_seconds, usage))
        return ResourceReading(pods=tuple(pods))


class ContainerResourceSource(ResourceSource):
    """ContainerResource metrics: the same per-container answer; the core picks the named container."""

    name = "prometheus-container-resource"
    metric_types = (MetricSourceType.CONTAINER_RESOURCE,)


class PodsSource(_PerPodSource):
    """Pods metrics: one value per pod, like custom.metrics.k8s.io."""

    name = "prometheus-pods"
    metric_types = (MetricSourceType.PODS,)

    def default_template(self, request: MetricRequest, settings: MetricsSettings) -> QueryTemplate:
        return QueryTemplate(query="sum by (${by}) (${metric}{${matchers}})", freshness="${metric}{${matchers}}")

    def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        binding = request.binding or _NO_BINDING
        index, found = self.per_pod(request, plan, answer)
        if not found:
            if not binding.empty_as_zero:
                raise no_data("the query returned no series for the target's pods")
            now = request.context.now
            return PodsReading(tuple(PodValue(p.name, 0, now, plan.window_seconds) for p in request.context.pods))
        times: dict[float, datetime] = {}
        names: list[str] = []
        stamps: list[datetime] = []
        milli: list[int] = []
        values = index.table.values
        for pod, pairs in sorted(found.items()):
            if len(pairs) > 1:
                raise PermanentError(
                    f"{len(pairs)} series for pod {pod!r}; aggregate by namespace and pod",
                    error_type="too_many_series",
                )
            row, sample_time = pairs[0]
            names.append(pod)
            stamps.append(times.get(sample_time) or times.setdefault(sample_time, utc(sample_time)))
            milli.append(to_milli(values[row]))
        return PodsReading.from_columns(
            names=_names_column(request, found), stamps=stamps, windows=[plan.window_seconds] * len(names), values=milli
        )


def _names_column(request: MetricRequest, found: Mapping[str, object]) -> Sequence[str]:
    """A reading's names column: the target's one sorted tuple of its pods' names when every pod has a value (the
    common case; each of the target's readings then shares it), else the names found, sorted."""
    context = request.context
    if len(found) == len(context.pods):  # the pods found are some of the target's: here all of them
        return context.sorted_pod_names()
    return sorted(found)


class _OneValueSource(PrometheusSource):
    """Object and External: exactly one series (or a scalar), or several summed when asked."""

    def values(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> tuple[tuple[int, ...], datetime]:
        binding = request.binding or _NO_BINDING
        context = request.context
        check_result_type(answer, plan.result_type)
        split = split_answer(answer, plan.grouping)
        if not split.values:
            if binding.empty_as_zero:
                return (0,), context.now
            raise no_data("the query returned no series")
        if len(split.values) > 1 and not binding.sum_series:
            raise PermanentError(
                f"the query returned {len(split.values)} series where one was expected; "
                "aggregate them in the query or set sumSeries",
                error_type="too_many_series",
            )
        values = tuple(to_milli(series.value) for series in split.values)
        oldest = min(self.sample_time(plan, split.markers, series) for series in split.values)
        self.check_fresh(plan, context.now, oldest)
        return values, utc(oldest)


class ObjectSource(_OneValueSource):
    """Object metrics: the one value describing an object (an Ingress's request rate, say)."""

    name = "prometheus-object"
    metric_types = (MetricSourceType.OBJECT,)

    def matchers(self, request: MetricRequest, binding: PrometheusBinding) -> list[str]:
        described = request.spec.described_object
        if described is None:
            raise PermanentError("an Object metric needs describedObject", error_type="config")
        label = binding.object_label or described.kind.lower()
        own = [
            promql.matcher(binding.namespace_label, "=", request.context.namespace),
            promql.matcher(label, "=", described.name),
        ]
        return own + promql.selector_matchers(request.spec.metric_selector)

    def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        values, stamp = self.values(request, plan, answer)
        return ObjectReading(value=check_milli_total(sum(values), what="the sum of the series"), timestamp=stamp)


class ExternalSource(_OneValueSource):
    """External metrics: values from outside the cluster (a queue's depth, a consumer group's lag)."""

    name = "prometheus-external"
    metric_types = (MetricSourceType.EXTERNAL,)

    def parse(self, request: MetricRequest, plan: QueryPlan, answer: Answer) -> Reading:
        values, stamp = self.values(request, plan, answer)
        return ExternalReading(values=values, timestamp=stamp)


BUILTIN_SOURCES: tuple[type[PrometheusSource], ...] = (
    # Sorted by name; one per metric type (tests/metrics/test_registry.py checks it).
    ContainerResourceSource,
    ExternalSource,
    ObjectSource,
    PodsSource,
    ResourceSource,
)
