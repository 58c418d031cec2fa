"""One `MetricsReader.read` pass over N targets x 2 metrics (10 pods each) against a real, backfilled
Prometheus: wall time, client CPU, requests sent and peak RSS.

Each N runs in a child process of its own (so one N's peak memory does not hide the next's): the child
loads Prometheus (bench/fixtures.py), builds the requests, runs one warm-up pass and `--passes` measured
passes, and prints its figures as JSON; the parent prints the table and, with `--json FILE`, writes them.

    .venv/bin/python bench/metrics_pass.py --targets 1000 5000 10000
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import fixtures


def _rss_mib() -> float:
    """This process's resident memory now (Linux), in MiB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def run_one(targets: int, namespaces: int, passes: int) -> dict[str, Any]:
    """The figures of one N, measured in this process."""
    from autoscaler.metrics import MetricsError, MetricsReader
    from autoscaler.metrics.registry import SourceRegistry

    layout = fixtures.Layout(targets=targets, namespaces=namespaces)
    at = fixtures.evaluation_time()
    setup_started = time.perf_counter()
    with fixtures.prometheus(layout, at) as server:
        setup = time.perf_counter() - setup_started
        reader = MetricsReader(fixtures.settings(server.url), registry=SourceRegistry.builtin())
        requests = fixtures.requests(layout, at)
        rss_before = _rss_mib()
        walls, cpus, sent = [], [], 0
        failures = 0
        for index in range(passes + 1):
            wall0, cpu0 = time.perf_counter(), time.process_time()
            result = reader.read(requests)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            failures = sum(1 for outcome in result.outcomes if isinstance(outcome, MetricsError))
            if failures:
                first = next(o for o in result.outcomes if isinstance(o, MetricsError))
                raise SystemExit(f"{failures} metrics failed, the first: {first}")
            sent = result.queries_sent
            del result
            if index:  # the first pass warms connections and Prometheus's caches
                walls.append(wall)
                cpus.append(cpu)
        reader.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "targets": targets,
        "metrics": len(requests),
        "namespaces": namespaces,
        "pods": targets * layout.pods,
        "setup_seconds": round(setup, 2),
        "wall_p50_seconds": round(statistics.median(walls), 3),
        "wall_max_seconds": round(max(walls), 3),
        "cpu_p50_seconds": round(statistics.median(cpus), 3),
        "requests_sent": sent,
        "rss_before_pass_mib": round(rss_before, 1),
        "peak_rss_mib": round(peak, 1),
        "prometheus": server.version,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--namespaces", type=int, default=50)
    parser.add_argument("--passes", type=int, default=3, help="measured passes per N (after one warm-up)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child's entry
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.namespaces, args.passes)))
        return
    rows = []
    for targets in args.targets:
        argv = [sys.executable, __file__, "--one", str(targets), "--namespaces", str(args.namespaces)]
        argv += ["--passes", str(args.passes)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"N={targets} failed:\n{done.stderr[-3000:]}{done.stdout[-2000:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{rows[0]['prometheus']}; {args.namespaces} namespaces; 10 pods and 2 metrics per target")
    print(
        "| targets | pods | set-up (s) | pass wall p50 (s) | max (s) | client CPU p50 (s) | requests | peak RSS (MiB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['targets']:,} | {row['pods']:,} | {row['setup_seconds']} | {row['wall_p50_seconds']} | "
            f"{row['wall_max_seconds']} | {row['cpu_p50_seconds']} | {row['requests_sent']} | {row['peak_rss_mib']} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
