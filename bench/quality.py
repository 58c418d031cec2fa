"""Benchmark: scaling quality on load traces (BENCHMARK.md section 1), every mode beside the HPA and the oracle.

For every trace of TRACES_DIR (`*.csv` with their `.meta.json`) and both scenarios (cpu, rps), runs
`autoscaler simulate`'s model with each of the project's modes (autoscaler/simulate/modes.py; `hpa` is the
HPA-compatible default, the same code path as the daemon and replay) and prints per trace the share of demand
unserved, the cost vs the oracle and the scale writes per day (and, for a mode other than the HPA's, how often
it fell back to the HPA's answer), then the means per scenario and mode (unserved and events/day arithmetic,
cost geometric). The oracle is cost 1, unserved 0 by definition; its events/day are printed beside.

    .venv/bin/python bench/quality.py TRACES_DIR [--json out.json] [--jobs N] [--modes hpa predictive]
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
from autoscaler.simulate.trace import load_trace


def _one(path: str, scenario: Scenario, mode: str) -> dict[str, Any]:
    model = Model()
    trace = load_trace(path)
    prepared = prepare(trace.times, trace.rates(), model=model)
    spec = scenario_spec(mode_spec(mode), scenario, target_milli=target_milli(prepared.capacity, model), model=model)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", metavar="TRACES_DIR", help="a folder of trace CSVs with their .meta.json")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel processes")
    parser.add_argument("--modes", nargs="+", default=list(MODE_SPECS), choices=list(MODE_SPECS))
    args = parser.parse_args(argv)
    paths = sorted(str(p) for p in Path(args.traces).glob("*.csv"))
    if not paths:
        print(f"bench/quality.py: no *.csv in {args.traces}", file=sys.stderr)
        return 1
    jobs = [(p, s, m) for p in paths for s in SCENARIOS for m in args.modes]
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
