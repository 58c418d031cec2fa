"""How often a mode meets the issue's goal on trace sets drawn from the ones bench/quality.py ran.

Reads quality.py's JSON (`--json`) and draws `--sets` sets of as many traces as it holds, with replacement (a
bootstrap, seeded), then counts on how many sets the mode meets all six goals against the HPA-compatible
default (mean unserved <= 50 % of the HPA's, geometric-mean cost <= the HPA's, mean events/day <= 50 % of the
HPA's, in cpu and rps), how often each goal alone, and the mean points missed per set (the sum over the goals
of how far past its threshold each share is). docs/performance.md's twelfth-session paragraphs quote it.
A variant run with `--modes predictive` alone holds no HPA rows: give a full run as `--baseline`.

    .venv/bin/python bench/resample.py FIGURES.json [--baseline FIGURES.json] [--sets 4000] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any

GOALS = ("unserved", "cost", "events")


def _rows(path: str, mode: str) -> dict[tuple[str, str], dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        runs = json.load(f)["runs"]
    return {(r["trace"], r["scenario"]): r for r in runs if r["mode"] == mode}


def misses(hpa: dict[tuple[str, str], Any], mode: dict[tuple[str, str], Any], traces: list[str]) -> dict[str, float]:
    """Points by which each of the six goals is missed on this set of traces (0: met)."""
    out = {}
    for scenario in ("cpu", "rps"):
        h = [hpa[t, scenario] for t in traces]
        m = [mode[t, scenario] for t in traces]
        unserved_h = sum(r["unserved"] for r in h)
        unserved = sum(r["unserved"] for r in m) / unserved_h * 100 if unserved_h > 0 else 0.0
        cost = math.exp(sum(math.log(r["cost"] / q["cost"]) for r, q in zip(m, h, strict=True)) / len(h)) * 100
        events = sum(r["eventsPerDay"] for r in m) / sum(r["eventsPerDay"] for r in h) * 100
        out[f"{scenario} unserved"] = max(0.0, unserved - 50)
        out[f"{scenario} cost"] = max(0.0, cost - 100)
        out[f"{scenario} events"] = max(0.0, events - 50)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("figures", metavar="FIGURES.json", help="bench/quality.py's --json output")
    parser.add_argument("--baseline", metavar="FIGURES.json", help="where the HPA rows are (default: FIGURES.json)")
    parser.add_argument("--mode", default="predictive", help="the mode to score (default predictive)")
    parser.add_argument("--sets", type=int, default=4000, help="sets drawn (default 4000)")
    parser.add_argument("--seed", type=int, default=1, help="the draw's seed (default 1)")
    args = parser.parse_args(argv)
    try:
        hpa = _rows(args.baseline or args.figures, "hpa")
        mode = _rows(args.figures, args.mode)
    except (OSError, ValueError, KeyError) as err:
        print(f"bench/resample.py: {err}", file=sys.stderr)
        return 1
    traces = sorted({t for t, _ in mode})
    missing = sorted({f"{t} {s}" for t in traces for s in ("cpu", "rps") if (t, s) not in hpa or (t, s) not in mode})
    if not traces or missing:
        print(
            f"bench/resample.py: no HPA and {args.mode} rows for {', '.join(missing) or 'any trace'}", file=sys.stderr
        )
        return 1
    if args.sets < 1:
        print(f"bench/resample.py: --sets: must be 1 or more, not {args.sets}", file=sys.stderr)
        return 1
    draw = random.Random(args.seed)
    sets = [[draw.choice(traces) for _ in traces] for _ in range(args.sets)]
    results = [misses(hpa, mode, s) for s in sets]
    full = misses(hpa, mode, traces)
    print(
        f"{args.mode} on the {len(traces)} traces: "
        + ", ".join(f"{k} {'met' if not v else f'missed by {v:.1f}'}" for k, v in full.items())
    )
    every = sum(1 for r in results if not any(r.values())) / len(results)
    print(
        f"{args.sets} sets of {len(traces)} drawn with replacement (seed {args.seed}): all six goals met on {every:.1%}"
    )
    for goal in full:
        met = sum(1 for r in results if not r[goal]) / len(results)
        missed = sum(r[goal] for r in results) / len(results)
        print(f"  {goal:13} met on {met:6.1%} of the sets, {missed:5.1f} points missed on average")
    print(f"  mean points missed per set: {sum(sum(r.values()) for r in results) / len(results):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
