"""Benchmark: scaling quality on load traces (docs/performance.md, "The model, in full"), every mode and the oracle.

For every trace of TRACES_DIR (`*.csv` with their `.meta.json`) and both scenarios (cpu, rps), runs
`autoscaler simulate`'s model with each of the project's modes (autoscaler/simulate/modes.py; `hpa` is the
HPA-compatible default, the same code path as the daemon and replay) and prints per trace the share of demand
unserved, the cost vs the oracle and the scale writes per day (and, for a mode other than the HPA's, how often
it fell back to the HPA's answer), then the means per scenario and mode (unserved and events/day arithmetic,
cost geometric). The oracle is cost 1, unserved 0 by definition; its events/day are printed beside.
`--traces` and `--scenarios` run a subset (a trace by its file name without `.csv`); `--set NAME=VALUE` sets a
field of spec.predictive for the predictive mode (camelCase, the value read as JSON: `--set fill=0.75`),
validated as a user's spec is, so a variant is scored without editing the defaults.

    .venv/bin/python bench/quality.py TRACES_DIR [--json out.json] [--jobs N] [--modes hpa predictive]
        [--traces NAME ...] [--scenarios cpu|rps ...] [--set NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from autoscaler.core.types import Settings
from autoscaler.simulate.model import SCENARIOS, Model, Scenario, prepare, scenario_spec, simulate, target_milli
from autoscaler.simulate.modes import MODE_SPECS, mode_spec
from autoscaler.simulate.trace import TraceError, load_trace
from autoscaler.spec.errors import SpecError


def _one(path: str, scenario: Scenario, mode: str, predictive: dict[str, Any]) -> dict[str, Any]:
    model = Model()
    trace = load_trace(path)
    prepared = prepare(trace.times, trace.rates(), model=model)
    spec = scenario_spec(
        mode_spec(mode, predictive=predictive),
        scenario,
        target_milli=target_milli(prepared.capacity, model),
        model=model,
    )
    started = time.perf_counter()
    result = simulate(
        prepared.demand,
        capacity=prepared.capacity,
        spec_model=spec,
        scenario=scenario,
        model=model,
        settings=Settings(),
        keep_series=False,
    )
    return {
        "trace": trace.name,
        "scenario": scenario,
        "mode": mode,
        "unserved": result.scores.unserved,
        "cost": result.scores.cost,
        "eventsPerDay": result.scores.events_per_day,
        "fallbackShare": result.fallbacks / result.mode_decisions if result.mode_decisions else None,
        "oracleEventsPerDay": result.oracle.events_per_day,
        "seconds": time.perf_counter() - started,
    }


def means(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per scenario and mode: unserved and events/day arithmetic means, cost a geometric mean."""
    out = []
    for scenario in SCENARIOS:
        for mode in dict.fromkeys(r["mode"] for r in rows):
            group = [r for r in rows if r["scenario"] == scenario and r["mode"] == mode]
            if not group:
                continue
            shares = [r["fallbackShare"] for r in group if r["fallbackShare"] is not None]
            out.append(
                {
                    "scenario": scenario,
                    "mode": mode,
                    "traces": len(group),
                    "unserved": sum(r["unserved"] for r in group) / len(group),
                    "cost": math.exp(sum(math.log(r["cost"]) for r in group) / len(group)),
                    "eventsPerDay": sum(r["eventsPerDay"] for r in group) / len(group),
                    "fallbackShare": sum(shares) / len(shares) if shares else None,
                }
            )
    return out


def table(rows: list[dict[str, Any]], summary: list[dict[str, Any]]) -> str:
    """Rows per trace, then the means, as Markdown."""
    lines = [
        "| trace | scenario | mode | unserved | cost | events/day | fallback | oracle events/day |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        fallback = "" if r["fallbackShare"] is None else f"{r['fallbackShare'] * 100:.1f} %"
        lines.append(
            f"| {r['trace']} | {r['scenario']} | {r['mode']} | {r['unserved'] * 100:.3f} % | {r['cost']:.3f} "
            f"| {r['eventsPerDay']:.1f} | {fallback} | {r['oracleEventsPerDay']:.1f} |"
        )
    lines += ["", "| scenario | mode | traces | mean unserved | geo-mean cost | mean events/day | mean fallback |"]
    lines.append("|---|---|---:|---:|---:|---:|---:|")
    for m in summary:
        fallback = "" if m["fallbackShare"] is None else f"{m['fallbackShare'] * 100:.1f} %"
        lines.append(
            f"| {m['scenario']} | {m['mode']} | {m['traces']} | {m['unserved'] * 100:.3f} % | {m['cost']:.3f} "
            f"| {m['eventsPerDay']:.1f} | {fallback} |"
        )
    return "\n".join(lines)


def _settings(items: list[str]) -> dict[str, Any]:
    """`--set NAME=VALUE` as spec.predictive's fields; raises ValueError naming the item that is not one."""
    fields: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--set {item!r}: expected NAME=VALUE, e.g. fill=0.75")
        try:
            fields[name] = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(f"--set {item!r}: the value {text!r} is not a JSON number, boolean or string") from None
    return fields


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", metavar="TRACES_DIR", nargs="?", help="a folder of trace CSVs with their .meta.json")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel processes")
    parser.add_argument("--modes", nargs="+", default=list(MODE_SPECS), choices=list(MODE_SPECS))
    parser.add_argument("--traces", nargs="+", metavar="NAME", help="only these traces (file names without .csv)")
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a field of spec.predictive, e.g. fill=0.75 (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.folder is None:
        # `--traces a b TRACES_DIR`: the list takes the folder as a name; say so rather than that it is missing.
        taken = [name for name in args.traces or () if Path(name).is_dir()]
        if taken:
            parser.error(
                f"TRACES_DIR is missing: {taken[-1]} was read as a name of --traces; give TRACES_DIR before --traces"
            )
        parser.error("the following arguments are required: TRACES_DIR")
    if args.jobs < 1:
        print(f"bench/quality.py: --jobs: must be 1 or more, not {args.jobs}", file=sys.stderr)
        return 1
    if args.set and "predictive" not in args.modes:
        print("bench/quality.py: --set: sets spec.predictive, but --modes has no predictive", file=sys.stderr)
        return 1
    if not Path(args.folder).is_dir():
        print(f"bench/quality.py: TRACES_DIR: {args.folder} is not a directory", file=sys.stderr)
        return 1
    found = {p.stem: str(p) for p in sorted(Path(args.folder).glob("*.csv"))}
    if not found:
        print(f"bench/quality.py: no *.csv in {args.folder}", file=sys.stderr)
        return 1
    missing = [name for name in args.traces or () if name not in found]
    if missing:
        print(f"bench/quality.py: --traces: no {', '.join(missing)}.csv in {args.folder}", file=sys.stderr)
        return 1
    paths = [found[name] for name in args.traces] if args.traces else list(found.values())
    try:
        predictive = _settings(args.set)
        mode_spec("predictive", predictive=predictive)  # refused here, with the field named, not in a worker
    except (ValueError, SpecError) as err:
        print(f"bench/quality.py: {err}", file=sys.stderr)
        return 1
    model = Model()
    for path in paths:  # a trace that cannot be used is named here, with its line, not lost in a worker
        try:
            trace = load_trace(path)
            prepare(trace.times, trace.rates(), model=model)
        except TraceError as err:
            print(f"bench/quality.py: {err}", file=sys.stderr)
            return 1
        except ValueError as err:
            print(f"bench/quality.py: {path}: {err}", file=sys.stderr)
            return 1
    jobs = [(p, s, m, predictive) for p in paths for s in args.scenarios for m in args.modes]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(_one, *zip(*jobs, strict=True)))
    summary = means(rows)
    print(table(rows, summary))
    print(f"\n{len(rows)} runs in {time.perf_counter() - started:.0f} s on {args.jobs} processes")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"runs": rows, "means": summary}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
