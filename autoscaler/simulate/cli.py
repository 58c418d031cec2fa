"""`autoscaler simulate`: a spec's decisions over a load trace, scored beside the oracle's (docs/performance.md)."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, replace
from pathlib import Path
from typing import IO, Any

from autoscaler.core import types as core
from autoscaler.core.decision import Decision
from autoscaler.simulate.model import (
    EPOCH,
    SCENARIOS,
    Model,
    Prepared,
    Result,
    Scenario,
    ScenarioSpecError,
    prepare,
    scenario_spec,
    simulate,
    target_milli,
)
from autoscaler.simulate.trace import TraceError, load_trace
from autoscaler.spec.hpa import AutoscalerSpec
from autoscaler.spec.snapshot_out import DecisionInputs

SIMULATE_HELP = """\
Run a spec through the real decision core over a load trace, in the model of docs/performance.md: each pod
serves C units/s (C = p99 of the demand / 30), a new pod is Pending 15 s and Ready 45 s after the scale
write, Prometheus scrapes every 15 s, the autoscaler sees the mean of the last four scrapes (60 s) and decides
every 15 s. Scenario cpu: Resource cpu at 70 % Utilization, utilisation saturating at 100 %; rps: a Pods
metric with AverageValue 0.7 x C. Without --spec: the HPA's defaults with minReplicas 1, maxReplicas 100;
a spec sets minReplicas, maxReplicas, behavior and mode (its metrics are replaced by the scenario's).
Prints the scores (unserved share of demand, cost vs the oracle, scale writes per day) beside the oracle's.

The trace is a CSV `timestamp_seconds,value` with its sidecar NAME.meta.json (to_per_second_factor), as in
the traces of docs/performance.md; --per-second-factor replaces the sidecar.

Exit status: 0 on success, 1 when the trace, the spec or a parameter is wrong (the message names the line
or the field) or the chart cannot be written (checked before the run; a failure after it comes after the
scores, which are printed), 2 for a usage error.
"""

# The model's parameters, their flags and help; each flag's default is the model's.
_MODEL_FLAGS: dict[str, str] = {
    "step": "seconds between two points of the simulation",
    "scrape": "Prometheus's scrape interval (s)",
    "window": "the rate window the autoscaler sees (s): the mean of the scrapes in it",
    "sync": "the autoscaler's sync period (s)",
    "pending": "seconds from the scale write until a new pod runs",
    "ready": "seconds from the scale write until a new pod is Ready",
    "capacity_divisor": "C = p99 of the demand / this",
    "capacity": "C itself, units/s per pod (replaces --capacity-divisor)",
    "target_share": "rps target (AverageValue = this x C) and the oracle's load per pod (x C)",
    "target_utilization": "cpu target, percent of the request",
    "max_days": "the longest span simulated, from the trace's start (days)",
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_parser(commands: Any) -> None:
    """The `simulate` sub-command's arguments."""
    parser = commands.add_parser(
        "simulate",
        help="score a spec's decisions over a load trace beside the oracle's",
        description=SIMULATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--trace", required=True, metavar="CSV", help="the load trace (timestamp_seconds,value)")
    parser.add_argument("--spec", metavar="SPEC", help="a spec file with one autoscaler (YAML)")
    parser.add_argument("--scenario", choices=SCENARIOS, default="cpu", help="the metric and its target (default cpu)")
    parser.add_argument("--chart", metavar="PNG", help="draw demand, capacity, replicas and unserved demand")
    parser.add_argument("--snapshots", metavar="DIR", help="write each decision that scales as a replay snapshot")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text", help="the output format")
    add_model_flags(parser)


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    """The model's and the controller's parameters, shared with `autoscaler backtest`."""
    defaults = Model()
    group = parser.add_argument_group("model parameters")
    for name, text in _MODEL_FLAGS.items():
        default = getattr(defaults, name)
        kind = float if isinstance(default, float) or default is None else int
        group.add_argument(_flag(name), type=kind, default=default, help=f"{text} (default {default})")
    group.add_argument("--min-replicas", type=int, help="minReplicas (default: the spec's, else 1)")
    group.add_argument("--max-replicas", type=int, help="maxReplicas (default: the spec's, else 100)")
    group.add_argument(
        "--per-second-factor",
        metavar="X",
        help="multiply the trace's values by X for a rate per second; 'none' for a utilisation trace "
        "(default: the sidecar's to_per_second_factor)",
    )
    settings = core.Settings()
    group = parser.add_argument_group("controller settings (kube-controller-manager's flags)")
    group.add_argument("--tolerance", type=float, default=settings.tolerance, help="default 0.1")
    group.add_argument(
        "--cpu-initialization-period", type=float, default=settings.cpu_initialization_period_seconds, help="s"
    )
    group.add_argument(
        "--initial-readiness-delay", type=float, default=settings.initial_readiness_delay_seconds, help="s"
    )
    group.add_argument(
        "--downscale-stabilization", type=float, default=settings.downscale_stabilization_window_seconds, help="s"
    )


class InputError(Exception):
    """A problem with the command's input: its message names the file and line, or the field or flag."""


def model_of(args: argparse.Namespace) -> Model:
    """The model from the flags; InputError naming the flag when it makes no model."""
    model = Model(**{name: getattr(args, name) for name in _MODEL_FLAGS})
    try:
        model.check()
    except ValueError as err:
        name, _, message = str(err).partition(": ")
        raise InputError(f"{_flag(name.split('/')[0])}: {message}") from err
    return model


def settings_of(args: argparse.Namespace) -> core.Settings:
    """The controller settings from the flags; InputError naming the flag when one is out of range."""
    for flag in ("tolerance", "cpu_initialization_period", "initial_readiness_delay", "downscale_stabilization"):
        value = getattr(args, flag)
        if not (math.isfinite(value) and value >= 0):
            raise InputError(f"{_flag(flag)}: must be a non-negative number, not {value}")
    return replace(
        core.Settings(),
        tolerance=args.tolerance,
        cpu_initialization_period_seconds=args.cpu_initialization_period,
        initial_readiness_delay_seconds=args.initial_readiness_delay,
        downscale_stabilization_window_seconds=args.downscale_stabilization,
    )


def base_spec(args: argparse.Namespace) -> AutoscalerSpec | None:
    """The user's spec (or None), with --min-replicas / --max-replicas applied; InputError naming the field."""
    from autoscaler.spec.files import load_spec_file

    base: AutoscalerSpec | None = None
    if args.spec is not None:
        loaded = load_spec_file(args.spec, scale_to_zero=False)
        problems = list(loaded.problems) + [p for d in loaded.documents for p in d.problems]
        if problems:
            raise InputError("\n".join(f"{args.spec}: {f + ': ' if f else ''}{m}" for f, m in problems))
        if len(loaded.autoscalers) != 1:
            raise InputError(f"{args.spec}: holds {len(loaded.autoscalers)} autoscalers; simulate takes one")
        base = loaded.autoscalers[0].model
    if args.min_replicas is None and args.max_replicas is None:
        return base
    data: dict[str, Any] = {"maxReplicas": 100}
    if base is not None:
        data = base.model_dump(mode="json", by_alias=True, exclude_unset=True)
    data.setdefault("scaleTargetRef", {"kind": "Deployment", "name": "web"})
    if args.min_replicas is not None:
        data["minReplicas"] = args.min_replicas
    if args.max_replicas is not None:
        data["maxReplicas"] = args.max_replicas
    from autoscaler.spec.errors import SpecError
    from autoscaler.spec.validation import load_spec

    try:
        return load_spec(data, scale_to_zero=False, path="spec")
    except SpecError as err:
        raise InputError(f"--min-replicas/--max-replicas: {err}") from err


def factor_of(args: argparse.Namespace) -> float | str | None:
    """--per-second-factor as load_trace takes it ("meta" when absent)."""
    text = args.per_second_factor
    if text is None:
        return "meta"
    if text.lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"--per-second-factor: not a number or 'none': {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"--per-second-factor: must be positive, not {text}")
    return value


def run_prepared(
    prepared: Prepared,
    *,
    scenario: Scenario,
    base: AutoscalerSpec | None,
    model: Model,
    settings: core.Settings,
    snapshots: str | None = None,
) -> tuple[Result, AutoscalerSpec]:
    """Simulate one scenario of a prepared demand curve; the run and the spec it simulated."""
    try:
        spec = scenario_spec(base, scenario, target_milli=target_milli(prepared.capacity, model), model=model)
    except ScenarioSpecError as err:
        raise InputError(f"--spec: {err}") from err
    observer = None
    if snapshots is not None:
        folder = Path(snapshots)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            kept = sum(1 for _ in folder.iterdir())
        except OSError as err:
            raise InputError(f"--snapshots: cannot create {snapshots}: {err}") from err
        if kept:
            # Another run's snapshots beside this one's would be replayed as one story.
            raise InputError(f"--snapshots: {snapshots} is not empty ({kept} entries): give a new or empty directory")

        def observer(inputs: DecisionInputs, decision: Decision) -> None:
            if decision.rescale:
                seconds = round((inputs.now - EPOCH).total_seconds())
                (folder / f"t{seconds:08d}.json").write_text(json.dumps(inputs.json(), indent=1))

    result = simulate(
        prepared.demand,
        capacity=prepared.capacity,
        spec_model=spec,
        scenario=scenario,
        model=model,
        settings=settings,
        observer=observer,
    )
    return result, spec


def summary(result: Result, *, source: str, spec: AutoscalerSpec) -> dict[str, Any]:
    """The JSON form of a run (without its series)."""
    out: dict[str, Any] = {
        "trace": source,
        "scenario": result.scenario,
        "mode": spec.mode,
        "metric": _metric(spec),
        "capacityPerPod": result.capacity,
        "days": result.seconds / 86400,
        "decisions": result.decisions,
        "scaleWrites": result.writes,
        "scores": _scores(result.scores),
        "oracle": _scores(result.oracle),
    }
    if result.mode_decisions:
        out["fallbackShare"] = result.fallbacks / result.mode_decisions
    return out


def _metric(spec: AutoscalerSpec) -> str:
    """The scenario's metric, as simulated (a spec's own metrics are replaced by it)."""
    metric = spec.metrics[0] if spec.metrics else None
    if metric is not None and metric.resource is not None:
        return f"Resource {metric.resource.name}, Utilization {metric.resource.target.average_utilization} %"
    if metric is not None and metric.pods is not None:
        return f"Pods {metric.pods.metric.name}, AverageValue {metric.pods.target.average_value}"
    return "none"


def _scores(scores: Any) -> dict[str, float]:
    data = asdict(scores)
    return {"unserved": data["unserved"], "cost": data["cost"], "eventsPerDay": data["events_per_day"]}


def text(document: dict[str, Any]) -> str:
    """The scores as a small table."""
    lines = [
        f"{document['trace']} ({document['scenario']}): {document['days']:.2f} days, C = "
        f"{document['capacityPerPod']:.6g}/s per pod, {document['decisions']} decisions, "
        f"{document['scaleWrites']} scale writes",
        f"metric: {document['metric']} (the scenario's; a spec's own metrics are not simulated)",
        f"{'':18} {'unserved':>10} {'cost':>8} {'events/day':>11}",
    ]
    for label, key in ((f"spec ({document['mode']})", "scores"), ("oracle", "oracle")):
        s = document[key]
        lines.append(f"{label:18} {s['unserved'] * 100:9.3f}% {s['cost']:8.3f} {s['eventsPerDay']:11.1f}")
    if "fallbackShare" in document:
        lines.append(f"fell back to the HPA's answer in {document['fallbackShare'] * 100:.1f} % of decisions")
    return "\n".join(lines)


def run(args: argparse.Namespace, *, out: IO[str], err: IO[str]) -> int:
    """`autoscaler simulate`; 1 with one message on standard error when an input is wrong."""
    from autoscaler.simulate.chart import ChartError, check, draw

    try:
        model = model_of(args)
        settings = settings_of(args)
        base = base_spec(args)
        if args.chart is not None:
            check(args.chart)
        trace = load_trace(args.trace, per_second_factor=factor_of(args))
        try:
            prepared = prepare(trace.times, trace.rates(), model=model)
        except ValueError as error:
            raise InputError(f"{args.trace}: {error}") from error
        result, spec = run_prepared(
            prepared, scenario=args.scenario, base=base, model=model, settings=settings, snapshots=args.snapshots
        )
        document = summary(result, source=trace.name, spec=spec)
    except (InputError, TraceError, ChartError) as error:
        print(f"autoscaler simulate: {error}", file=err)
        return 1
    # The scores first: a chart that fails to be written after all does not lose them.
    print(json.dumps(document, indent=2) if args.output == "json" else text(document), file=out)
    if args.chart is not None:
        try:
            draw(result, args.chart, title=f"{trace.name}, {args.scenario}, mode {document['mode']}")
        except ChartError as error:
            print(f"autoscaler simulate: {error}", file=err)
            return 1
    return 0
