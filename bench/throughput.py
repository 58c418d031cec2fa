"""The daemon's cost per tick: one `autoscaler run` process over N targets x 2 metrics (10 pods each, 50
namespaces) against a real, backfilled Prometheus and the emulator, beside a naive loop in the same run.

Per N, in a child process of its own (bench/fixtures.py builds both servers):

- the emulator (in the child) holds N Deployments of ready pods and N PrometheusAutoscaler objects (custom
  resources, what a cluster user runs); Prometheus holds, for each of the emulator's pods, cAdvisor's CPU
  counter and a request counter, from a few minutes before the start to well after the end (the daemon reads
  at the wall clock);
- the daemon runs as `python -m autoscaler run --config FILE` (dry-run, no leader election, JSON logs), each
  spec with `syncPeriodSeconds` `--period` (default 1: the ticks run back to back, every tick evaluates every
  target); after `--warmup` ticks over all N targets, `--ticks` ticks are measured from the daemon's own
  `tick_finished` lines (duration, distinct queries), with Prometheus's `prometheus_http_requests_total`, the
  emulator's audit log (Kubernetes requests by verb and resource), the CPU of the daemon, of Prometheus and of
  the child (the emulator) over those ticks, and the daemon's peak RSS (VmHWM);
- then the naive mode: per target one pod list call and one instant query per metric (`pod=~"a|b|..."`, as
  an adapter-based stack asks), 5 targets at a time (kube-controller-manager's default HPA workers), with the
  project's own `PrometheusClient` and Kubernetes client, `--naive-ticks` passes.

`--churn N` adds one run where every target's desired count changes every tick: dry-run off, a request rate
target far below the load and a scale-up policy of one pod per second, so every tick writes a scale, an Event
and the status of every target, and the emulator creates the pods.

    .venv/bin/python bench/throughput.py --targets 100 1000 5000 10000 --churn 1000 --json bench/results/t.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import fixtures

CORES_PER_POD = 0.5  # the Deployments' CPU request
WINDOW_SECONDS = 180  # both templates' rate window: three samples of a 60 s step
NAIVE_WORKERS = 5  # --concurrent-horizontal-pod-autoscaler-syncs
TEMPLATES = 2  # the CPU resource template and `rps`
# The built-in CPU template (docs/metrics.md), restated only to set its window.
CPU_SELECTOR = 'container_cpu_usage_seconds_total{${matchers}, container!="", container!="POD"}'
CPU_QUERY = f"sum by (${{by}}) (rate({CPU_SELECTOR}[${{window}}]))"
CPU_FRESHNESS = CPU_SELECTOR


def cores(target: int) -> float:
    """Mean CPU cores per pod of `target` in the backfilled series (fixtures.write_openmetrics)."""
    return 0.1 + (target % 7) / 20 + sum(r / 1000 for r in range(fixtures.PODS_PER_TARGET)) / fixtures.PODS_PER_TARGET


def autoscaler_doc(layout: fixtures.Layout, target: int, *, period: int, churn: bool) -> dict[str, Any]:
    """Target `target`'s PrometheusAutoscaler: CPU utilization (built-in template) and requests per second
    per pod (template `rps`). Steady: both targets equal the load (no rescale). Churn: a request-rate target
    far below the load and one pod per second up, so every tick rescales."""
    utilization = round(cores(target) / CORES_PER_POD * 100)
    rps = "10m" if churn else str(1 + target % 5)
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"t{target}"},
        "minReplicas": 1,
        "maxReplicas": 1000 if churn else 100,
        "syncPeriodSeconds": period,
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
            },
            {
                "type": "Pods",
                "pods": {"metric": {"name": "http_requests"}, "target": {"type": "AverageValue", "averageValue": rps}},
                "prometheus": {"template": fixtures.RPS_TEMPLATE},
            },
        ],
    }
    if churn:
        spec["behavior"] = {
            "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 1}]}
        }
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": f"t{target}", "namespace": layout.namespace(target)},
        "spec": spec,
    }


def daemon_config(kube_url: str, prometheus_url: str, port: int, *, dry_run: bool) -> dict[str, Any]:
    """The daemon's settings: one server, the `rps` template, custom resources only, no election."""
    rps = "sum by (${by}) (rate(http_requests_total{${matchers}}[${window}]))"
    return {
        "kubernetes": {"server": kube_url},
        "metrics": {
            "servers": {"main": {"url": prometheus_url, "timeoutSeconds": 30}},
            "templates": {
                fixtures.RPS_TEMPLATE: {
                    "query": rps,
                    "freshness": "http_requests_total{${matchers}}",
                    "windowSeconds": WINDOW_SECONDS,
                }
            },
            "resourceTemplates": {
                "cpu": {"query": CPU_QUERY, "freshness": CPU_FRESHNESS, "windowSeconds": WINDOW_SECONDS}
            },
            # The specs' 1 s period would make the default deadline 0.8 s; the tick is what is measured.
            "passDeadlineSeconds": 14,
        },
        "dryRun": dry_run,
        "tickSeconds": 1,
        "specs": {"customResources": True},
        "leaderElection": {"enabled": False},
        "http": {"listenAddress": f"127.0.0.1:{port}"},
        "log": {"format": "json", "level": "info"},
    }


# -- reading the processes -------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int, field: str = "VmHWM") -> float:
    """A process's peak resident memory (VmHWM), or with `field` "VmRSS" its resident memory now, in MiB."""
    match = re.search(rf"^{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return int(match.group(1)) / 1024 if match else 0.0


def prometheus_queries(url: str) -> float:
    """`prometheus_http_requests_total` of the query endpoints, from the server's own /metrics."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("prometheus_http_requests_total{") and 'handler="/api/v1/query' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def audit_counts(server: Any) -> Counter[str]:
    """The emulator's audit log, drained: requests by `verb resource[/subresource]` (watches left out)."""
    records = server.audit.records()
    server.audit.clear()
    counts: Counter[str] = Counter()
    for record in records:
        if record.verb == "watch" or not record.resource:
            continue
        what = record.resource + (f"/{record.subresource}" if record.subresource else "")
        counts[f"{record.verb} {what}"] += 1
    return counts


class Daemon:
    """`autoscaler run` as a child process; its `tick_finished` lines arrive on `ticks`."""

    def __init__(self, config: Path, log: Path, *, profile: Path | None = None, memory: bool = False) -> None:
        self.ticks: queue.Queue[dict[str, Any]] = queue.Queue()
        self.log = log
        self.decisions: Counter[str] = Counter()
        command = ["-m", "autoscaler"]
        if profile is not None:
            command = [str(Path(__file__).with_name("profile_daemon.py")), str(profile)]
        self.process = subprocess.Popen(
            [sys.executable, *command, "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=fixtures.REPO,
            env={**os.environ, "PROFILE_MEMORY": "1"} if memory else None,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        finished: dict[str, Any] = {}
        with self.log.open("wb") as keep:
            for line in self.process.stderr:
                if b'"decision"' in line:
                    self.decisions["rescale" if b'"rescale": true' in line else "hold"] += 1
                    continue  # N per tick: not kept
                keep.write(line)
                if b'"tick_finished"' in line:
                    finished = json.loads(line)
                elif b'"tick_timing"' in line:  # logged after tick_finished, at the tick's very end
                    self.ticks.put({**finished, **json.loads(line)})
        self.ticks.put({})  # the process ended

    def next_tick(self, timeout: float) -> dict[str, Any]:
        try:
            tick = self.ticks.get(timeout=timeout)
        except queue.Empty:
            raise SystemExit(f"no tick within {timeout:g} s; the daemon's log: {self.log}") from None
        if not tick:
            raise SystemExit(f"the daemon exited ({self.process.wait()}): {self.log.read_text()[-3000:]}")
        return tick

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=10)


# -- one N ------------------------------------------------------------------------------------------------


def run_daemon(args: argparse.Namespace, targets: int, *, churn: bool) -> dict[str, Any]:
    """The figures of one N (or of the churn run), measured in this process."""
    layout = fixtures.Layout(targets=targets, namespaces=min(args.namespaces, targets))
    ticks = args.ticks
    setup_started = time.perf_counter()
    at = datetime.now(UTC).replace(second=0, microsecond=0)
    # Samples every 60 s from 5 minutes before now to long after the run (start-up, ticks, naive passes).
    minutes = 10 + targets // 400 + (ticks * (2 if churn else 1)) // 10
    span = fixtures.Span(before=5, after=minutes, step=60)
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp, fixtures.emulator(layout) as server:
        work = Path(tmp)
        pods = fixtures.pod_names(server, layout)
        for target in range(targets):
            server.create(autoscaler_doc(layout, target, period=args.period, churn=churn))
        with fixtures.prometheus(layout, at, span=span, pods=pods, workdir=work) as prom:
            port = fixtures.free_port()
            config = work / "daemon.yaml"
            config.write_text(yaml.safe_dump(daemon_config(server.url, prom.url, port, dry_run=not churn)))
            setup = time.perf_counter() - setup_started
            started = time.perf_counter()
            name = f"daemon-{'churn-' if churn else ''}{targets}"
            profile = Path(args.profile) / f"{name}.pstats" if args.profile else None
            daemon = Daemon(config, Path(args.logs) / f"{name}.log", profile=profile, memory=args.memory)
            try:
                measured = _measure(daemon, server, prom, targets, warmup=args.warmup, ticks=ticks, started=started)
                measured["daemon_peak_rss_mib"] = round(peak_rss_mib(daemon.process.pid), 1)
            finally:
                daemon.stop()
            measured["decisions"] = dict(daemon.decisions)
            naive = {} if churn or not args.naive_ticks else naive_mode(layout, server.url, prom.url, args.naive_ticks)
    return {
        "mode": "churn" if churn else "dry-run",
        "targets": targets,
        "namespaces": layout.namespaces,
        "pods": targets * layout.pods,
        "metrics": targets * 2,
        "prometheus": prom.version,
        "cores": os.cpu_count(),
        "setup_seconds": round(setup, 1),
        **measured,
        "naive": naive,
    }


def _measure(
    daemon: Daemon,
    server: Any,
    prom: fixtures.Prometheus,
    targets: int,
    *,
    warmup: int,
    ticks: int,
    started: float,
) -> dict[str, Any]:
    timeout = 120 + targets / 20
    seen = 0
    while seen < warmup:  # start-up (cache sync) and the warm-up ticks over all targets
        tick = daemon.next_tick(timeout + 300)
        if tick["targets"] == targets:
            seen += 1
    ready = time.perf_counter() - started
    peak_at_ready = peak_rss_mib(daemon.process.pid)  # start-up (the caches' first lists) and the warm-up ticks
    audit_counts(server)
    queries0, prom_cpu0 = prometheus_queries(prom.url), cpu_seconds(prom.process.pid)
    daemon_cpu0, own_cpu0 = cpu_seconds(daemon.process.pid), time.process_time()
    kube: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    wall0 = time.perf_counter()
    while len(rows) < ticks:
        tick = daemon.next_tick(timeout)
        kube += audit_counts(server)
        if tick["targets"] != targets:
            raise SystemExit(f"a tick evaluated {tick['targets']} of {targets} targets: {tick}")
        rows.append(tick)
    wall = time.perf_counter() - wall0
    rss_now = peak_rss_mib(daemon.process.pid, "VmRSS")
    queries = prometheus_queries(prom.url) - queries0
    durations = [float(r["total_seconds"]) for r in rows]
    n = len(rows)

    def p50(key: str) -> float:
        return round(statistics.median(float(r[key]) for r in rows), 3)

    return {
        "ready_seconds": round(ready, 1),
        "daemon_peak_rss_at_ready_mib": round(peak_at_ready, 1),
        "daemon_rss_after_ticks_mib": round(rss_now, 1),
        "ticks": n,
        "tick_p50_seconds": round(statistics.median(durations), 3),
        "tick_p99_seconds": round(_quantile(durations, 0.99), 3),
        "tick_max_seconds": round(max(durations), 3),
        "refresh_p50_seconds": p50("refresh_seconds"),
        "reconcile_p50_seconds": p50("reconcile_seconds"),
        "metric_p50_seconds": p50("metric_seconds"),
        "report_p50_seconds": p50("report_seconds"),
        "tick_errors": sum(int(r["errors"]) for r in rows),
        "daemon_queries_per_tick": statistics.median(int(r["metric_queries"]) for r in rows),
        "prometheus_requests_per_tick": round(queries / n, 1),
        "kube_calls_per_tick": round(sum(kube.values()) / n, 1),
        "kube_calls_by_kind_per_tick": {k: round(v / n, 1) for k, v in sorted(kube.items())},
        "wall_seconds": round(wall, 1),
        "daemon_cpu_per_tick_seconds": round((cpu_seconds(daemon.process.pid) - daemon_cpu0) / n, 3),
        "prometheus_cpu_per_tick_seconds": round((cpu_seconds(prom.process.pid) - prom_cpu0) / n, 3),
        "emulator_cpu_per_tick_seconds": round((time.process_time() - own_cpu0) / n, 3),
    }


def _quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank quantile (p99 of 20 ticks is their maximum)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(-(-q * len(ordered) // 1)) - 1))]


# -- the naive mode ---------------------------------------------------------------------------------------


def naive_mode(layout: fixtures.Layout, kube_url: str, prometheus_url: str, passes: int) -> dict[str, Any]:
    """Per target: one pod list call and one query per metric, NAIVE_WORKERS targets at a time; per pass wall
    time and requests (no decision, no write: the cheapest a per-target controller can be)."""
    import kubernetes.client as k8s

    from autoscaler.kube.client import ClientSettings, connect
    from autoscaler.kube.errors import RequestContext
    from autoscaler.metrics.client import PrometheusClient

    settings = fixtures.settings(prometheus_url, max_concurrent_queries=NAIVE_WORKERS)
    client = PrometheusClient("main", settings.servers["main"], pool_size=NAIVE_WORKERS)
    kube = connect(ClientSettings(server=kube_url))
    kube.api_client.rest_client.pool_manager.connection_pool_kw["maxsize"] = NAIVE_WORKERS
    core = k8s.CoreV1Api(kube.api_client)
    window = f"{WINDOW_SECONDS}s"

    def one(target: int, *, now: datetime) -> int:
        namespace = layout.namespace(target)
        context = RequestContext(verb="list", resource="pods", namespace=namespace)
        listed = kube.request_json(
            core.list_namespaced_pod, namespace, label_selector=f"app=t{target}", context=context
        )
        names = "|".join(p["metadata"]["name"] for p in listed["items"])  # [a-z0-9-]: no escaping
        matchers = f'namespace="{namespace}",pod=~"{names}"'
        cpu = (
            f"sum by (namespace, pod) (rate(container_cpu_usage_seconds_total"
            f'{{{matchers},container!="",container!="POD"}}[{window}]))'
        )
        rps = f"sum by (namespace, pod) (rate(http_requests_total{{{matchers}}}[{window}]))"
        series = 0
        for promql in (cpu, rps):
            series += len(client.query(promql, time=now, budget_seconds=5, deadline_seconds=30).series)
        return series

    walls, cpus = [], []
    queries0 = prometheus_queries(prometheus_url)
    try:
        with ThreadPoolExecutor(NAIVE_WORKERS) as pool:
            for _ in range(passes):
                now = datetime.now(UTC)
                wall0, cpu0 = time.perf_counter(), time.process_time()
                series = sum(pool.map(functools.partial(one, now=now), range(layout.targets)))
                walls.append(time.perf_counter() - wall0)
                cpus.append(time.process_time() - cpu0)
                if series != layout.targets * layout.pods * 2:
                    raise SystemExit(f"naive mode: {series} series, expected {layout.targets * layout.pods * 2}")
    finally:
        client.close()
        kube.close()
    return {
        "passes": passes,
        "tick_p50_seconds": round(statistics.median(walls), 3),
        "tick_max_seconds": round(max(walls), 3),
        "client_and_emulator_cpu_per_tick_seconds": round(statistics.median(cpus), 3),
        "prometheus_requests_per_tick": round((prometheus_queries(prometheus_url) - queries0) / passes, 1),
        "kube_calls_per_tick": layout.targets,
    }


# -- the table --------------------------------------------------------------------------------------------


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The figures as a Markdown table, daemon and naive side by side."""
    out = [
        "| mode | targets | pods | tick p50 (s) | p99 (s) | Prometheus req./tick | K8s calls/tick "
        "| daemon CPU/tick (s) | Prometheus CPU/tick (s) | emulator CPU/tick (s) | peak RSS (MiB) "
        "| peak RSS at ready (MiB) | RSS after the ticks (MiB) "
        "| naive tick p50 (s) | naive req./tick | naive K8s calls/tick | naive / daemon |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        naive = r.get("naive") or {}
        ratio = f"{naive['tick_p50_seconds'] / r['tick_p50_seconds']:.1f}x" if naive else "—"
        out.append(
            f"| {r['mode']} | {r['targets']:,} | {r['pods']:,} | {r['tick_p50_seconds']} | {r['tick_p99_seconds']} "
            f"| {r['prometheus_requests_per_tick']} | {r['kube_calls_per_tick']} | {r['daemon_cpu_per_tick_seconds']} "
            f"| {r['prometheus_cpu_per_tick_seconds']} | {r['emulator_cpu_per_tick_seconds']} "
            f"| {r['daemon_peak_rss_mib']} | {r['daemon_peak_rss_at_ready_mib']} | {r['daemon_rss_after_ticks_mib']} "
            f"| {naive.get('tick_p50_seconds', '—')} "
            f"| {naive.get('prometheus_requests_per_tick', '—')} | {naive.get('kube_calls_per_tick', '—')} | {ratio} |"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, nargs="*", default=[100, 1000, 5000, 10000])
    parser.add_argument("--churn", type=int, nargs="*", default=[], help="N of the run where every target rescales")
    parser.add_argument("--namespaces", type=int, default=50)
    parser.add_argument("--ticks", type=int, default=20, help="measured ticks per N")
    parser.add_argument("--warmup", type=int, default=1, help="ticks over all targets before measuring")
    parser.add_argument("--period", type=int, default=1, help="the specs' syncPeriodSeconds (1: back to back)")
    parser.add_argument("--naive-ticks", type=int, default=2, help="passes of the naive mode per N (0: none)")
    parser.add_argument("--logs", default=tempfile.gettempdir(), help="where the daemons' logs go")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--profile", default="", help="profile the daemon's ticks (cProfile) into this directory")
    parser.add_argument(
        "--memory", action="store_true", help="with --profile: trace the heap too (slow; PROFILE_MEMORY)"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child's entry: "<mode>:<N>"
    args = parser.parse_args(argv)
    if args.one is not None:
        mode, _, n = args.one.partition(":")
        print(json.dumps(run_daemon(args, int(n), churn=mode == "churn")))
        return 0
    Path(args.logs).mkdir(parents=True, exist_ok=True)
    rows = []
    runs = [("dry-run", n) for n in args.targets] + [("churn", n) for n in args.churn]
    for mode, n in runs:
        child = [sys.executable, str(Path(__file__).resolve()), "--one", f"{mode}:{n}"]
        for flag in ("namespaces", "ticks", "warmup", "period", "naive_ticks", "logs", "profile"):
            child += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
        child += ["--memory"] if args.memory else []
        done = subprocess.run(child, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{mode} N={n} failed:\n{done.stderr[-3000:]}{done.stdout[-2000:]}", file=sys.stderr)
            return 1
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"{mode} N={n}: {json.dumps(rows[-1])}", file=sys.stderr)
    first = rows[0]
    print(
        f"{first['prometheus']}; {first['cores']} cores; {args.namespaces} namespaces; 10 pods and 2 metrics per "
        f"target; {args.ticks} ticks after {args.warmup} warm-up; specs' sync period {args.period} s"
    )
    print(table(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
