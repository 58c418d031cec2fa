"""`autoscaler check --config SETTINGS [FILE...]`: the daemon settings, the spec files they name, and every
metric's `prometheus` block against the settings' servers and templates, every problem on its own line.

The settings are read by `load_config` (environment overrides included, as `autoscaler run` reads them); spec
files by the spec layer's `load_spec_file`, as `autoscaler check FILE` reads them; bindings are checked by
the metric-source layer's `check_binding`. Unlike `run`, a spec file that does not exist is a problem here.
Nothing here connects to a server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import IO

from autoscaler.core.types import MetricSourceType, MetricSpec
from autoscaler.daemon.config import ConfigError, DaemonConfig, load_config, spec_paths
from autoscaler.metrics import MetricRequest, MetricsReader, QueryPlan, ReadContext
from autoscaler.metrics.binding import check_binding
from autoscaler.spec.files import load_spec_file
from autoscaler.spec.objects import Autoscaler
from autoscaler.spec.prometheus import PrometheusBinding
from autoscaler.spec.queue import input_bindings
from autoscaler.spec.settings import HPA_SCALE_TO_ZERO, check_gates


def _read_metrics(autoscaler: Autoscaler) -> list[tuple[str, MetricSpec, MetricSourceType, PrometheusBinding | None]]:
    """What the daemon reads for a spec: each metric, then the drain time's and the formula's inputs (read as
    External metrics), as (field path, metric, its type for the binding rules, binding)."""
    bindings = autoscaler.metric_bindings
    read = [
        (
            f"spec.metrics[{index}]",
            metric,
            MetricSourceType(metric.type),
            bindings[index] if index < len(bindings) else None,
        )
        for index, metric in enumerate(autoscaler.spec.metrics)
    ]
    extra = autoscaler.spec.extra_metrics
    if extra is not None:
        inputs = input_bindings(autoscaler.model.drain_time, autoscaler.model.formula)
        for item, binding in zip(extra.inputs(), inputs, strict=True):
            read.append((f"spec.{item.field}", item.metric, MetricSourceType.EXTERNAL, binding))
    return read


def binding_problems(autoscaler: Autoscaler, config: DaemonConfig) -> list[tuple[str, str]]:
    """Each metric's binding checked against the settings, as (field path, message) pairs."""
    problems: list[tuple[str, str]] = []
    for path, _, metric_type, binding in _read_metrics(autoscaler):
        for problem in check_binding(binding, metric_type=metric_type, settings=config.metrics):
            field, _, message = problem.partition(": ")
            problems.append((f"{path}.{field}", message))
    return problems


# Any time: the plans checked do not depend on it.
_PLANNED_AT = datetime(2000, 1, 1, tzinfo=UTC)
NO_SAMPLE_TIME = (
    "no staleness check: its answer carries no sample time (a raw query that is neither a plain selector nor one "
    "aggregation of one that keeps the labels its values are matched by, namespace and pod for a per-pod metric; "
    "a template without freshness; a scalar result), so after a Prometheus outage the samples from before it read "
    "as current; add a `freshness` selector (docs/metrics.md, Staleness)"
)


def staleness_warnings(autoscaler: Autoscaler, reader: MetricsReader) -> list[tuple[str, str]]:
    """The metrics whose query, as the daemon would send it (`MetricsReader.plan`), asks for no sample time, as
    (field path, message) pairs: warnings, not problems (such a query is valid, only less guarded)."""
    context = ReadContext(namespace=autoscaler.namespace or "default", pods=(), selector="", now=_PLANNED_AT)
    read = _read_metrics(autoscaler)
    requests = [MetricRequest(metric, context, binding=binding) for _, metric, _, binding in read]
    return [
        (f"{path}.prometheus", NO_SAMPLE_TIME)
        for (path, *_), plan in zip(read, reader.plan(requests), strict=True)
        if isinstance(plan, QueryPlan) and not plan.has_timestamps
    ]


def check_config(
    settings: str,
    files: Sequence[str],
    *,
    gates: Mapping[str, bool],
    new: bool,
    out: IO[str],
    env: Mapping[str, str] = os.environ,
) -> int:
    """Print one line per problem, then a summary; 1 when anything is wrong, else 0."""
    config: DaemonConfig | None = None
    settings_problems: list[tuple[str, str]] = []
    try:
        config = load_config(settings, env=env)
    except ConfigError as err:
        settings_problems = err.problems
    paths: list[str] = []
    if config is not None:
        paths, settings_problems = spec_paths(list(config.specs.files))
        gates = {**config.controller.gates(), **gates}
    for field, message in settings_problems:
        print(f"{settings}: {field + ': ' if field else ''}{message}", file=out)
    scale_to_zero = check_gates(gates)[HPA_SCALE_TO_ZERO]
    checked = invalid = others = bad = warned = 0
    # Plans only, nothing sent: no client is made (a token file is read when the daemon starts).
    reader = MetricsReader(config.metrics, clients={}) if config is not None else None
    seen: dict[tuple[str, str], str] = {}
    for path in [*paths, *files]:
        result = load_spec_file(path, scale_to_zero=scale_to_zero, stored=not new)
        for field, message in result.problems:
            print(f"{path}: {field + ': ' if field else ''}{message}", file=out)
        bad += 1 if result.problems else 0
        for doc in result.documents:
            where = f"{path}: document {doc.index}" + (f" ({doc.label})" if doc.label else "")
            problems = list(doc.problems)
            if doc.autoscaler is not None and config is not None:
                problems += binding_problems(doc.autoscaler, config)
                key = (doc.autoscaler.namespace or "default", doc.autoscaler.name)
                if key in seen:
                    problems.append(("metadata.name", f"{key[0]}/{key[1]} is also defined in {seen[key]}"))
                seen.setdefault(key, where)
            for field, message in problems:
                print(f"{where}: {field + ': ' if field else ''}{message}", file=out)
            if doc.autoscaler is not None and reader is not None and not problems:
                for field, message in staleness_warnings(doc.autoscaler, reader):
                    print(f"{where}: warning: {field}: {message}", file=out)
                    warned += 1
            if doc.is_autoscaler:
                checked += 1
                invalid += 1 if problems else 0
            else:  # not a Kubernetes object, or not readable
                others += 1
    summary = f"settings {settings}: " + ("valid" if not settings_problems else f"{len(settings_problems)} problem(s)")
    if config is None and not files:
        summary += "; specs not checked: the settings are invalid"
    else:
        if config is None:  # the FILEs given are checked alone, their bindings need settings that load
            summary += "; the specs it names not checked: the settings are invalid; bindings not checked"
        summary += f"; {checked - invalid} of {checked} autoscaler(s) valid"
        if config is not None and config.specs.custom_resources and not paths and not files:
            # Nothing was read: say where the specs are and how to check them, not only "0 of 0".
            summary += (
                " (the specs are PrometheusAutoscaler objects in the cluster, which this command does not read: "
                "the API server checks them against the CRD's schema when they are applied, and the daemon "
                "reports what it refuses; to check spec files here, name them: "
                "autoscaler check --config FILE SPEC.yaml)"
            )
    if warned:
        summary += f"; {warned} warning(s)"
    if others:
        summary += f"; {others} other document(s) not valid"
    if bad:
        summary += f"; {bad} of {len(paths) + len(files)} file(s) unreadable or without an autoscaler"
    print(summary, file=out)
    return 1 if settings_problems or invalid or others or bad else 0
