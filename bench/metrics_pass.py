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
import os
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


def _cpu_seconds(pid: int) -> float:
    """A process's user + system CPU time so far (Linux /proc), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_one(targets: int, namespaces: int, passes: int, profile: Path | None = None) -> dict[str, Any]:
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
        walls, cpus, server_cpus, sent = [], [], [], 0
        failures = 0
        for index in range(passes + 1):
            server0 = _cpu_seconds(server.process.pid)
            wall0, cpu0 = time.perf_counter(), time.process_time()
            result = reader.read(requests)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            server_cpu = _cpu_seconds(server.process.pid) - server0
            failures = sum(1 for outcome in result.outcomes if isinstance(outcome, MetricsError))
            if failures:
                first = next(o for o in result.outcomes if isinstance(o, MetricsError))
                raise SystemExit(f"{failures} metrics failed, the first: {first}")
            sent = result.queries_sent
            del result
            if index:  # the first pass warms connections and Prometheus's caches
                walls.append(wall)
                cpus.append(cpu)
                server_cpus.append(server_cpu)
        stages = _stages(reader, requests, profile) if profile is not None else {}
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
        "prometheus_cpu_p50_seconds": round(statistics.median(server_cpus), 3),
        **stages,
        "requests_sent": sent,
        "rss_before_pass_mib": round(rss_before, 1),
        "peak_rss_mib": round(peak, 1),
        "prometheus": server.version,
    }


def _stages(reader: Any, requests: list[Any], profile: Path) -> dict[str, float]:
    """The pass taken apart, one stage at a time on this thread: the HTTP exchanges alone (Prometheus's
    evaluation, transfer, gunzip; on the pass's pool), then reading the bodies and reading every metric
    from the answers, both under cProfile (its statistics written to `profile`)."""
    import cProfile
    import gc
    from concurrent.futures import ThreadPoolExecutor

    from autoscaler.metrics.wire import read_answer

    plans = reader.plan(requests)
    queries = list(dict.fromkeys(plan.query for plan in plans))
    client = reader._clients["main"]
    url = client._url

    def fetch(query: Any) -> bytes:
        params = {"query": query.promql, "time": f"{query.time.timestamp():.3f}"}
        response = client._session.get(url, params=params, timeout=60)
        response.raise_for_status()
        return bytes(response.content)

    gc.disable()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=reader._settings.max_concurrent_queries) as pool:
        bodies = dict(zip(queries, pool.map(fetch, queries), strict=True))
    http = time.perf_counter() - started
    profiler = cProfile.Profile()
    started, cpu0 = time.perf_counter(), time.process_time()
    profiler.enable()
    answers = {query: read_answer(body) for query, body in bodies.items()}
    profiler.disable()
    read_cpu = time.process_time() - cpu0
    cpu0 = time.process_time()
    profiler.enable()
    for request, plan in zip(requests, plans, strict=True):
        reader._registry.for_request(request).parse(request, plan, answers[plan.query])
    profiler.disable()
    parse_cpu = time.process_time() - cpu0
    gc.enable()
    profiler.dump_stats(str(profile))
    return {
        "stage_http_wall_seconds": round(http, 3),
        "stage_bytes": sum(len(body) for body in bodies.values()),
        "stage_read_answers_cpu_seconds": round(read_cpu, 3),
        "stage_read_metrics_cpu_seconds": round(parse_cpu, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--namespaces", type=int, default=50)
    parser.add_argument("--passes", type=int, default=3, help="measured passes per N (after one warm-up)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--profile",
        type=Path,
        help="also take the pass apart by stage (HTTP alone; reading the bodies; reading the metrics) and write "
        "cProfile statistics of the last two to FILE-<N>.prof",
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child's entry
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.namespaces, args.passes, args.profile)))
        return
    rows = []
    for targets in args.targets:
        argv = [sys.executable, __file__, "--one", str(targets), "--namespaces", str(args.namespaces)]
        argv += ["--passes", str(args.passes)]
        if args.profile is not None:
            argv += ["--profile", f"{args.profile}-{targets}.prof"]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"N={targets} failed:\n{done.stderr[-3000:]}{done.stdout[-2000:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{rows[0]['prometheus']}; {args.namespaces} namespaces; 10 pods and 2 metrics per target")
    print(
        "| targets | pods | set-up (s) | pass wall p50 (s) | max (s) | client CPU p50 (s) | Prometheus CPU p50 (s) "
        "| requests | peak RSS (MiB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['targets']:,} | {row['pods']:,} | {row['setup_seconds']} | {row['wall_p50_seconds']} | "
            f"{row['wall_max_seconds']} | {row['cpu_p50_seconds']} | {row['prometheus_cpu_p50_seconds']} | "
            f"{row['requests_sent']} | {row['peak_rss_mib']} |"
        )
    if args.profile is not None:
        print("\n| targets | HTTP alone, wall (s) | body MiB | reading bodies, CPU (s) | reading metrics, CPU (s) |")
        print("|---:|---:|---:|---:|---:|")
        for row in rows:
            print(
                f"| {row['targets']:,} | {row['stage_http_wall_seconds']} | {row['stage_bytes'] / 2**20:.1f} | "
                f"{row['stage_read_answers_cpu_seconds']} | {row['stage_read_metrics_cpu_seconds']} |"
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
