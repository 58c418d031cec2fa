"""`autoscaler plan`: one evaluation of every target with nothing written, printed as a table or JSON.

The targets come from the same sources as the daemon's and go through the same reconciler with
`write=False` (no scale, status, event or state write). This module only prints what came back.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

from autoscaler.daemon.app import Daemon, StartupError
from autoscaler.daemon.model import TickReport
from autoscaler.daemon.observe import decision_reason, metric_line, outcome_error
from autoscaler.spec.render import decision as render_decision

COLUMNS = ("TARGET", "REFERENCE", "CURRENT", "DESIRED", "METRICS", "REASON")


def _reference(outcome: Any) -> str:
    ref = outcome.target.autoscaler.spec.scale_target_ref
    return f"{ref.kind}/{ref.name}"


def rows(report: TickReport) -> list[tuple[str, ...]]:
    """One row per target: target, reference, current, desired, per-metric value/target, reason."""
    out: list[tuple[str, ...]] = []
    for o in report.outcomes:
        d = o.decision
        metrics = ", ".join(metric_line(m) for m in d.metrics) if d is not None else ""
        reason = decision_reason(d, error_type=o.error_type)
        current = "" if d is None or d.current_replicas is None else str(d.current_replicas)
        desired = "" if d is None or d.desired_replicas is None else str(d.desired_replicas)
        out.append((str(o.key), _reference(o), current, desired, metrics or "-", reason))
    return out


def table(report: TickReport) -> str:
    """The rows under COLUMNS, left-aligned columns two spaces apart (as kubectl prints); an error under its row."""
    lines = [COLUMNS, *rows(report)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS) - 1)]
    errors = [("", ""), *(outcome_error(o) for o in report.outcomes)]
    out = []
    for line, (error, error_type) in zip(lines, errors, strict=True):
        out.append("  ".join([*(c.ljust(w) for c, w in zip(line, widths, strict=False)), line[-1]]).rstrip())
        if error_type:
            out.append(f"  error ({error_type}): {error}")
    return "\n".join(out)


def as_json(report: TickReport) -> list[dict[str, Any]]:
    """Per target: its identity, where it was read, and the decision as `autoscaler replay` renders it."""
    out = []
    for o in report.outcomes:
        key, d = o.key, o.decision
        error, error_type = outcome_error(o)
        out.append(
            {
                "target": str(key),
                "origin": str(o.target.origin),
                "source": o.target.source,
                "reference": _reference(o),
                "reason": decision_reason(d, error_type=o.error_type),
                "error": error or None,
                "errorType": error_type or None,
                "decision": (
                    render_decision(
                        d, now=report.started, name=key.name, namespace=key.namespace, source=o.target.source
                    )
                    if d is not None
                    else None
                ),
            }
        )
    return out


def plan(
    daemon: Daemon,
    *,
    output: str = "text",
    out: IO[str] = sys.stdout,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    """Start the caches, read every target once with write=False, print it; 1 when a target had an error."""
    try:
        daemon.start_caches()
        targets = daemon.refresh()
        report = daemon.reconciler.reconcile(targets, now=clock(), write=False)
    finally:
        daemon.stop_caches()
    if output == "json":
        json.dump(as_json(report), out, indent=1)
        out.write("\n")
    else:
        print(table(report), file=out)
    return 1 if any(outcome_error(o)[1] for o in report.outcomes) else 0


def main_plan(config_path: str, *, kubeconfig: str | None = None, output: str = "text") -> int:
    """`autoscaler plan`: start-up failures are one line on standard error and exit status 1."""
    from autoscaler.daemon.app import build, load

    try:
        try:
            daemon = build(load(config_path), kubeconfig=kubeconfig, plan=True)
        except OSError as err:  # a file the start needed (each known one has its own message)
            raise StartupError(f"cannot start: {err}") from err
        return plan(daemon, output=output)
    except StartupError as err:
        print(f"autoscaler plan: {err}", file=sys.stderr)
        return 1
