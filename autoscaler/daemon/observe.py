"""What the daemon tells the outside: its own Prometheus metrics, and the canonical log line of a decision.

Metrics live in a private `CollectorRegistry` (served on /metrics), named with their unit as Prometheus'
naming conventions ask (counters end in `_total`, durations are `_seconds`); every one is listed in
docs/daemon.md's "Metrics" table, and a test scrapes them all. Per-target series are removed when their
target disappears. The log line is one structlog event `decision` per target per tick. This module only
reports: it must not decide or write anything.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from autoscaler.core.decision import Decision
from autoscaler.core.formats import format_milli
from autoscaler.core.metric import MetricResult, MetricStatus
from autoscaler.core.queue import DRAIN_TIME, FORMULA
from autoscaler.core.types import AutoscalerSpec, ConditionType, MetricTarget, MetricTargetType
from autoscaler.daemon.logs import log_direct
from autoscaler.daemon.model import TargetKey, TargetOutcome, TickReport

log = structlog.get_logger(__name__)

TICK_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 30.0, 60.0)
QUERY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

TARGET_LABELS = ("namespace", "name")
METRIC_LABELS = ("namespace", "name", "metric", "target_type")


def _target_number(target: MetricTarget) -> float | None:
    """A metric's target in the unit it is compared in: percent for Utilization, else the metric's unit."""
    match target.type:
        case MetricTargetType.UTILIZATION:
            return None if target.average_utilization is None else float(target.average_utilization)
        case MetricTargetType.VALUE:
            return None if target.value is None else target.value / 1000
    return None if target.average_value is None else target.average_value / 1000


def _extra_series(spec: AutoscalerSpec, decision: Decision) -> list[tuple[str, str, float | None, float]]:
    """The drain time's and the formula's (metric, target_type, value, target): the estimated drain seconds
    against `DrainSeconds`, the formula's value (per replica for AverageValue) against its target."""
    extra = spec.extra_metrics
    out: list[tuple[str, str, float | None, float]] = []
    for result in decision.extra_metrics:
        if result.kind == DRAIN_TIME and extra is not None and extra.drain_time is not None:
            out.append((result.name, "DrainSeconds", result.value, float(extra.drain_time.target_seconds)))
        elif result.kind == FORMULA and extra is not None and extra.formula is not None:
            target = extra.formula.target
            number = _target_number(target)
            if number is None:
                continue
            value = result.value
            if target.type == MetricTargetType.AVERAGE_VALUE:
                value = result.calculation.usage / 1000 if result.calculation is not None else None
            out.append((result.name, str(target.type), value, number))
    return out


def _current_number(status: MetricStatus | None, kind: MetricTargetType) -> float | None:
    """A metric's current value, in the same terms as its target (as `kubectl get hpa` compares them)."""
    if status is None:
        return None
    match kind:
        case MetricTargetType.UTILIZATION:
            return None if status.average_utilization is None else float(status.average_utilization)
        case MetricTargetType.VALUE:
            return None if status.value is None else status.value / 1000
    return None if status.average_value is None else status.average_value / 1000


def _text(number: float | None, kind: MetricTargetType) -> str:
    if number is None:
        return "<unknown>"
    if kind == MetricTargetType.UTILIZATION:
        return f"{int(number)}%"
    return format_milli(round(number * 1000))


def metric_line(result: MetricResult) -> str:
    """One metric as the log line and `plan` show it: "name=value/target→proposal" (or "name=error")."""
    kind = result.spec.target.type
    value = _current_number(result.status, kind)
    target = _text(_target_number(result.spec.target), kind)
    if result.error is not None:
        return f"{result.name}=<unknown>/{target}: {result.error}"
    proposal = "" if result.proposed_replicas is None else f"→{result.proposed_replicas}"
    return f"{result.name}={_text(value, kind)}/{target}{proposal}"


def decision_reason(decision: Decision | None, *, error_type: str = "") -> str:
    """A closed-set reason for a decision: the reason of AbleToScale or ScalingActive when False (the HPA's
    conditions whose False is a problem), else FallbackActive's when True, else ScalingLimited's when True, else
    AbleToScale's. ScaledToZero and FallbackActive False are healthy states, never the reason."""
    if decision is None:
        return error_type or "NoDecision"
    conditions = {c.type: c for c in decision.conditions}
    for condition in decision.conditions:
        if condition.status == "False" and condition.type in (
            ConditionType.ABLE_TO_SCALE,
            ConditionType.SCALING_ACTIVE,
        ):
            return condition.reason
    fallback = conditions.get(ConditionType.FALLBACK_ACTIVE)
    if fallback is not None and fallback.status == "True":
        return fallback.reason
    limited = conditions.get(ConditionType.SCALING_LIMITED)
    if limited is not None and limited.status == "True":
        return limited.reason
    able = conditions.get(ConditionType.ABLE_TO_SCALE)
    return able.reason if able is not None else "Unknown"


# A decision's own failure, by the reason of its False condition: the error_type the daemon reports for it.
_REASON_ERROR_TYPES = {"FailedGetScale": "scale", "InvalidSelector": "selector", "AmbiguousSelector": "selector"}


def outcome_error(outcome: TargetOutcome) -> tuple[str, str]:
    """(error, error_type) of a target's tick, ("", "") when none: the outcome's, else the decision's own.

    A decision's error_type: "scale" (its scale could not be read), "selector" (InvalidSelector,
    AmbiguousSelector), "metrics" (a metric failed, even when the others still decided), else "decision".
    """
    decision = outcome.decision
    if outcome.error_type or outcome.error:
        error = outcome.error or (decision.error if decision is not None and decision.error else "")
        return error, outcome.error_type or "internal"
    return decision_error(decision)


def decision_error(decision: Decision | None) -> tuple[str, str]:
    """(error, error_type) of the decision itself, ("", "") when none (see `outcome_error`)."""
    if decision is None:
        return "", ""
    failed = [m for m in decision.metrics if m.error is not None]
    if decision.error is None and not failed:
        return "", ""
    error = decision.error or "; ".join(f"{m.name}: {m.error}" for m in failed)
    for condition in decision.conditions:
        if condition.status == "False" and condition.reason in _REASON_ERROR_TYPES:
            return error, _REASON_ERROR_TYPES[condition.reason]
    extra_failed = any(extra.error is not None for extra in decision.extra_metrics)  # drain time, formula
    return error, "metrics" if failed or extra_failed else "decision"


class Observer:
    """The daemon's metrics and its per-target log line. Thread-safe."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry(auto_describe=True)
        r = self.registry
        self._targets = _TargetSeries()
        r.register(self._targets)
        self.errors = Counter("autoscaler_errors_total", "Errors, by type.", ["type"], registry=r)
        self.tick_duration = Histogram(
            "autoscaler_tick_duration_seconds", "Wall time of a tick that reconciled targets.",
            buckets=TICK_BUCKETS, registry=r,
        )  # fmt: skip
        self.tick_targets = Gauge("autoscaler_tick_targets", "Targets evaluated by the last tick.", registry=r)
        self.tick_queries = Gauge(
            "autoscaler_tick_metric_queries", "Distinct metric queries sent by the last tick.", registry=r
        )
        self.ticks = Counter("autoscaler_ticks_total", "Ticks run, by role (leader, or standby).", ["role"], registry=r)
        self.ticks_skipped = Counter(
            "autoscaler_ticks_skipped_total",
            "Ticks not run: overrun (the previous one still ran) or missed (too late to run).",
            ["reason"], registry=r,
        )  # fmt: skip
        self.last_tick = Gauge(
            "autoscaler_last_tick_timestamp_seconds", "When the last tick ended (Unix time).", registry=r
        )
        self.query_duration = Histogram(
            "autoscaler_prometheus_query_duration_seconds", "Wall time of one Prometheus query, by server and outcome.",
            ["server", "outcome"], buckets=QUERY_BUCKETS, registry=r,
        )  # fmt: skip
        self.leader = Gauge("autoscaler_leader", "1 while this replica holds the lease (or runs alone).", registry=r)
        self.specs = Gauge(
            "autoscaler_specs", "Specs by origin (resource, file) and state (valid, invalid).", ["origin", "state"],
            registry=r,
        )  # fmt: skip

    # --- scrape --------------------------------------------------------------------------------------

    def exposition(self) -> tuple[bytes, str]:
        """The registry in the Prometheus text format, and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    # --- ticks ---------------------------------------------------------------------------------------

    def report_tick(self, report: TickReport, *, ended_at: float) -> None:
        """Metrics and one log line per target for a tick that reconciled (none when each outcome was reported as
        it was made: `TickReport.recorded`); `ended_at` is Unix time."""
        self.tick_duration.observe(report.seconds)
        self.tick_targets.set(len(report.outcomes))
        self.tick_queries.set(report.metric_queries)
        if not report.recorded:
            for outcome in report.outcomes:
                self.report_outcome(outcome, evaluated_at=report.started.timestamp())
        log.info(
            "tick_finished",
            targets=len(report.outcomes),
            metric_queries=report.metric_queries,
            metric_seconds=round(report.metric_seconds, 4),
            duration_seconds=round(report.seconds, 4),
            errors=sum(1 for o in report.outcomes if outcome_error(o)[1]),
        )

    def tick_done(self, *, role: str, ended_at: float) -> None:
        """Any tick, a leader's (reconciled the due targets, if any) or a standby's (kept its sources fresh)."""
        self.ticks.labels(role=role).inc()
        self.last_tick.set(ended_at)

    def skipped_tick(self, reason: str) -> None:
        self.ticks_skipped.labels(reason=reason).inc()

    def report_outcome(self, outcome: TargetOutcome, *, evaluated_at: float) -> None:
        """One target's series and its canonical log line."""
        key, decision = outcome.key, outcome.decision
        reason = decision_reason(decision, error_type=outcome.error_type)
        metrics: list[str] = []
        row = _Row(reason=reason, evaluated_at=evaluated_at)
        if decision is not None:
            row.current, row.desired = decision.current_replicas, decision.desired_replicas
            series: list[tuple[str, str, float | None, float | None]] = []
            for result in decision.metrics:
                kind = result.spec.target.type
                value = _current_number(result.status, kind) if result.error is None else None
                series.append((result.name, str(kind), value, _target_number(result.spec.target)))
                metrics.append(metric_line(result))
            series.extend(_extra_series(outcome.target.autoscaler.spec, decision))
            # One series per label set: two metrics of one name and type (e.g. two Object metrics on different
            # objects) export the last one's numbers, as one Gauge child would have.
            kept = {(metric, target_type): (value, goal) for metric, target_type, value, goal in series}
            row.metrics = tuple((metric, target_type, *numbers) for (metric, target_type), numbers in kept.items())
            shadow = decision.shadow
            if shadow is not None:
                row.shadow = (shadow.desired_replicas, shadow.theirs, shadow.difference)
                if shadow.error:
                    self.errors.labels(type="shadow").inc()
            fallback = next((c for c in decision.conditions if c.type == ConditionType.FALLBACK_ACTIVE), None)
            row.fallback = 1 if fallback is not None and fallback.status == "True" else 0
        self._targets.put(key, row, wrote_scale=outcome.wrote_scale)
        error, error_type = outcome_error(outcome)
        if error_type:
            self.errors.labels(type=error_type).inc()
        # The tick's own error (a failed status write, say) names the line; a failed metric of the decision still
        # counts as one (a failed scale write is the decision's error too, but is the one already counted).
        own = bool(outcome.error_type or outcome.error)
        if own and error_type != "metrics" and decision_error(decision)[1] == "metrics":
            self.errors.labels(type="metrics").inc()
        fields: dict[str, Any] = {
            "target": str(key),
            "origin": str(outcome.target.origin),
            "current": decision.current_replicas if decision else None,
            "desired": decision.desired_replicas if decision else None,
            "rescale": decision.rescale if decision else False,
            "wrote": outcome.wrote_scale,
            "dry_run": outcome.dry_run,
            "reason": reason,
            "summary": decision.summary if decision else "",
            "metrics": metrics,
            "seconds": round(outcome.seconds, 4),
        }
        if decision is not None and decision.shadow is not None:
            fields["shadow"] = {
                "source": decision.shadow.source,
                "theirs": decision.shadow.theirs,
                "difference": decision.shadow.difference,
                **({"error": decision.shadow.error} if decision.shadow.error else {}),
            }
        if error_type:
            fields["error"] = error
            fields["error_type"] = error_type
        method = "warning" if error_type else "info"
        # The hottest line of a tick (one per target): written straight through the JSON set-up when it is in
        # force (the same line, a fifth of the cost), else through structlog.
        if not log_direct(__name__, method, "decision", fields):
            getattr(log, method)("decision", **fields)

    def forget(self, key: TargetKey) -> None:
        """Remove every series of a target that no longer exists."""
        self._targets.forget(key)

    def forget_all(self) -> None:
        """Remove every per-target series (a replica that stopped leading evaluates no target)."""
        self._targets.forget_all()

    # --- the rest ------------------------------------------------------------------------------------

    def error(self, kind: str) -> None:
        self.errors.labels(type=kind).inc()

    def set_leader(self, leading: bool) -> None:
        self.leader.set(1 if leading else 0)

    def set_specs(self, origin: str, counts: Mapping[str, int]) -> None:
        for state in ("valid", "invalid"):
            self.specs.labels(origin=origin, state=state).set(counts.get(state, 0))

    def on_query(self, server: str, seconds: float, outcome: str) -> None:
        """One Prometheus query's latency (the metric-source layer calls it: `MetricsReader(on_query=...)`)."""
        self.query_duration.labels(server=server, outcome=outcome).observe(seconds)


@dataclass(slots=True)
class _Row:
    """A target's series as of its last decision: plain numbers, turned into samples when /metrics is read."""

    reason: str
    evaluated_at: float
    current: int | None = None
    desired: int | None = None
    # (metric, target_type, value or None, target or None) per metric, drain time and formula.
    metrics: tuple[tuple[str, str, float | None, float | None], ...] = ()
    shadow: tuple[int | None, int | None, int | None] | None = None  # (ours, theirs, difference)
    fallback: int | None = None  # None: no decision
    writes: int = 0  # scale writes made, since the target was first seen (a counter)


class _TargetSeries(Collector):
    """The per-target series: one row per target, made into metric families at each scrape (a Gauge child
    per label set costs ~0.5 KiB and a locked lookup per update, at thousands of targets every tick)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[TargetKey, _Row] = {}

    def put(self, key: TargetKey, row: _Row, *, wrote_scale: bool) -> None:
        with self._lock:
            old = self._rows.get(key)
            row.writes = (old.writes if old is not None else 0) + (1 if wrote_scale else 0)
            self._rows[key] = row

    def forget(self, key: TargetKey) -> None:
        with self._lock:
            self._rows.pop(key, None)

    def forget_all(self) -> None:
        with self._lock:
            self._rows.clear()

    def describe(self) -> Iterator[Metric]:
        return iter(self._families())

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            rows = sorted(self._rows.items())
        return iter(self._families(rows))

    @staticmethod
    def _families(rows: list[tuple[TargetKey, _Row]] | None = None) -> list[Metric]:
        replicas = GaugeMetricFamily(
            "autoscaler_target_replicas", "Replicas of a target: current (its scale) and desired (the decision).",
            labels=[*TARGET_LABELS, "kind"],
        )  # fmt: skip
        value = GaugeMetricFamily(
            "autoscaler_target_metric_value",
            "A metric's current value, in the terms of its target (percent for Utilization).", labels=METRIC_LABELS,
        )  # fmt: skip
        target = GaugeMetricFamily(
            "autoscaler_target_metric_target", "A metric's target (percent for Utilization).", labels=METRIC_LABELS
        )
        info = GaugeMetricFamily(
            "autoscaler_target_decision_info", "1 for the reason of a target's last decision.",
            labels=[*TARGET_LABELS, "reason"],
        )  # fmt: skip
        evaluated = GaugeMetricFamily(
            "autoscaler_target_last_evaluation_timestamp_seconds", "When a target was last evaluated (Unix time).",
            labels=TARGET_LABELS,
        )  # fmt: skip
        fallback = GaugeMetricFamily(
            "autoscaler_target_fallback_active",
            "1 while a metric's fallback is in force (the FallbackActive condition True), else 0.",
            labels=TARGET_LABELS,
        )  # fmt: skip
        writes = CounterMetricFamily("autoscaler_scale_writes", "Scale writes made for a target.", labels=TARGET_LABELS)
        shadow_desired = GaugeMetricFamily(
            "autoscaler_shadow_desired_replicas",
            "Shadow mode: the replicas this autoscaler wants (side=ours) and the one it would replace (side=theirs).",
            labels=[*TARGET_LABELS, "side"],
        )  # fmt: skip
        shadow_difference = GaugeMetricFamily(
            "autoscaler_shadow_difference_replicas",
            "Shadow mode: this autoscaler's desired replicas minus those of the autoscaler it would replace.",
            labels=TARGET_LABELS,
        )  # fmt: skip
        for key, row in rows or ():
            ns, name = key.namespace, key.name
            if row.current is not None:
                replicas.add_metric([ns, name, "current"], row.current)
            if row.desired is not None:
                replicas.add_metric([ns, name, "desired"], row.desired)
            for metric, target_type, number, goal in row.metrics:
                labels = [ns, name, metric, target_type]
                if goal is not None:
                    target.add_metric(labels, goal)
                if number is not None:
                    value.add_metric(labels, number)
            if row.shadow is not None:
                ours, theirs, difference = row.shadow
                for side, count in (("ours", ours), ("theirs", theirs)):
                    if count is not None:
                        shadow_desired.add_metric([ns, name, side], count)
                if difference is not None:
                    shadow_difference.add_metric([ns, name], difference)
            if row.fallback is not None:
                fallback.add_metric([ns, name], row.fallback)
            info.add_metric([ns, name, row.reason], 1)
            evaluated.add_metric([ns, name], row.evaluated_at)
            writes.add_metric([ns, name], row.writes)
        return [replicas, value, target, info, evaluated, fallback, writes, shadow_desired, shadow_difference]
