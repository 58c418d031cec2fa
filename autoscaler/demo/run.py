"""The demo driver: start the stack, show it per sync period, stop it, write the outputs (see the package)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from autoscaler.demo.processes import Child, DemoError, find_prometheus, free_port
from autoscaler.demo.report import (
    MetricView,
    Sample,
    WorkloadView,
    header,
    table_line,
    write_chart,
    write_csv,
)
from autoscaler.demo.scenario import WEB_CPU_PER_REQUEST, WORKER_CAPACITY, DemoClock, Scenario
from autoscaler.sim.apiserver import EmulatedApiServer, load_manifests
from autoscaler.sim.load import LoadGenerator, Series, Workload, WorkloadRef

NAMESPACE = "default"
WEB = WorkloadRef(NAMESPACE, "Deployment", "web")
WORKER = WorkloadRef(NAMESPACE, "Deployment", "worker")
QUEUE = "jobs"  # config/demo/worker.yaml's queue label
SAMPLE_SECONDS = 2.0  # one table line per sync period of config/demo/daemon.yaml
OUTPUTS = ("chart.png", "samples.csv", "decisions.jsonl", "daemon.log", "prometheus.log", "prometheus.yml")

PROMETHEUS_CONFIG = """\
# Written by the demo: Prometheus scrapes the load model every second.
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: load-model
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


class Stopped(Exception):
    """Ctrl-C (SIGINT) or SIGTERM: stop the demo and write what it has."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signal.Signals(signum).name)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m autoscaler.demo",
        description="Run the autoscaler on a simulated cluster with a real Prometheus, everything on 127.0.0.1.",
    )
    p.add_argument("--duration", type=float, default=120.0, help="seconds to run (0: until Ctrl-C; default 120)")
    p.add_argument("--config-dir", type=Path, default=Path("config/demo"), help="the demo's specs and settings")
    p.add_argument("--output", type=Path, default=Path("demo-output"), help="where the chart and logs go")
    p.add_argument("--prometheus", default=None, help="the prometheus binary (default: PATH, then .tools/)")
    return p


@dataclass
class Run:
    """One demo run: its paths, its parts, and what it saw."""

    config_dir: Path
    output: Path
    duration: float
    samples: list[Sample] = field(default_factory=list)
    rescales: list[str] = field(default_factory=list)
    children: list[Child] = field(default_factory=list)
    log_offset: int = 0
    prometheus_url: str = ""
    scenario: Scenario | None = None

    def offered(self, seconds: float) -> tuple[float, float, float]:
        """(seconds, web requests/s, worker jobs/s) at that demo time."""
        if self.scenario is None:
            return (seconds, 0.0, 0.0)
        return (seconds, self.scenario.web_load_at(seconds), self.scenario.jobs_at(seconds))


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.duration < 0:
        print(f"error: --duration {args.duration:g}: must be 0 (until Ctrl-C) or more seconds", file=sys.stderr)
        return 2
    run = Run(config_dir=args.config_dir, output=args.output, duration=args.duration)
    try:
        return demo(run, prometheus=args.prometheus)
    except DemoError as err:
        print(f"make demo: {err}", file=sys.stderr)
        return 1


def demo(run: Run, *, prometheus: str | None) -> int:
    for name in ("daemon.yaml", "web.yaml", "worker.yaml", "trace-excerpt.csv"):
        if not (run.config_dir / name).is_file():
            raise DemoError(f"{run.config_dir / name}: missing (run the demo from the repository's root)")
    binary = find_prometheus(prometheus, root=Path.cwd())
    check_specs(run)
    prepare_output(run.output)
    clock = DemoClock()
    scenario = Scenario.from_file(run.config_dir / "trace-excerpt.csv", duration=run.duration, clock=clock)
    run.scenario = scenario
    manifests = [
        *load_manifests((run.config_dir / "web.yaml").read_text(encoding="utf-8")),
        *load_manifests((run.config_dir / "worker.yaml").read_text(encoding="utf-8")),
    ]
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    tsdb = Path(tempfile.mkdtemp(prefix="autoscaler-demo-tsdb-"))
    emulator: EmulatedApiServer | None = None
    generator: LoadGenerator | None = None
    ended = "the duration ended"
    try:
        print("starting: the Kubernetes API emulator, the load model, Prometheus, the daemon ...", flush=True)
        emulator = EmulatedApiServer(seed=manifests).start()
        generator = LoadGenerator(load(scenario), api_url=emulator.url, poll_interval_seconds=0.5).start()
        daemon_address = f"127.0.0.1:{free_port()}"
        start_prometheus(run, binary, generator.port, tsdb)
        start_daemon(run, emulator.url, daemon_address)
        wait_for_first_value(run, daemon_address)
        clock.start()
        describe(run, emulator, scenario, daemon_address)
        loop(run, emulator, generator, scenario, clock, daemon_address)
    except Stopped as why:
        ended = f"stopped by {why}"
    finally:
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        stop_all(run, generator, emulator)
        shutil.rmtree(tsdb, ignore_errors=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return finish(run, ended)


def check_specs(run: Run) -> None:
    """`autoscaler check` on both specs: a refused spec stops the demo before it starts, with the check's words."""
    for name in ("web.yaml", "worker.yaml"):
        path = run.config_dir / name
        result = subprocess.run(
            [sys.executable, "-m", "autoscaler", "check", str(path)], capture_output=True, text=True, check=False
        )
        if result.returncode == 0:
            continue
        output = (result.stdout + result.stderr).strip()
        raise DemoError(f"`autoscaler check {path}` refused it:\n{output}")


def prepare_output(output: Path) -> None:
    output.mkdir(parents=True, exist_ok=True)
    for name in OUTPUTS:
        (output / name).unlink(missing_ok=True)
    shutil.rmtree(output / "snapshots", ignore_errors=True)
    (output / "snapshots").mkdir()


def load(scenario: Scenario) -> list[Workload]:
    """The load model's workloads: web in serve mode with CPU, the worker's queue."""
    return [
        Workload(WEB, scenario.web_load, series=frozenset({Series.CPU, Series.RPS}), cost=WEB_CPU_PER_REQUEST),
        Workload(WORKER, scenario.jobs, series=frozenset({Series.QUEUE}), capacity=WORKER_CAPACITY, queue=QUEUE),
    ]


def start_prometheus(run: Run, binary: str, scrape_port: int, tsdb: Path) -> None:
    config = run.output / "prometheus.yml"
    config.write_text(PROMETHEUS_CONFIG.format(port=scrape_port), encoding="utf-8")
    port = free_port()
    child = Child(
        "prometheus",
        [
            binary,
            f"--config.file={config}",
            f"--web.listen-address=127.0.0.1:{port}",
            f"--storage.tsdb.path={tsdb}",
        ],
        run.output / "prometheus.log",
        f"http://127.0.0.1:{port}/-/ready",
    )
    run.children.append(child)
    child.start(deadline_seconds=60)
    run.prometheus_url = f"http://127.0.0.1:{port}"


def start_daemon(run: Run, api_url: str, address: str) -> None:
    env = {
        **os.environ,
        "AUTOSCALER_METRICS__SERVERS__DEMO__URL": run.prometheus_url,
        "AUTOSCALER_KUBERNETES__SERVER": api_url,
        "AUTOSCALER_HTTP__LISTEN_ADDRESS": address,
        "AUTOSCALER_FLIGHT_RECORDER__DIRECTORY": str((run.output / "snapshots").resolve()),
    }
    child = Child(
        "autoscaler run",
        [sys.executable, "-m", "autoscaler", "run", "--config", str(run.config_dir / "daemon.yaml")],
        run.output / "daemon.log",
        f"http://{address}/readyz",
        env=env,
    )
    run.children.append(child)
    child.start(deadline_seconds=90)


def wait_for_first_value(run: Run, address: str, *, deadline_seconds: float = 90.0) -> None:
    """Start the demo clock once the daemon has read web's metric: Prometheus needs two scrapes for a rate."""
    print("waiting for the daemon's first CPU reading (a rate needs two scrapes) ...", flush=True)
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        values = daemon_metrics(address).get("autoscaler_target_metric_value", [])
        if any(labels.get("name") == WEB.name for labels, _ in values):
            return
        for child in run.children:
            if not child.alive():
                raise DemoError(f"{child.name} exited unexpectedly:\n{child.tail()}")
        time.sleep(0.5)  # polling for the first reading
    raise DemoError(
        f"the daemon read no value of web's metric within {deadline_seconds:g} s; its log:\n{run.children[-1].tail()}"
    )


def describe(run: Run, emulator: EmulatedApiServer, scenario: Scenario, address: str) -> None:
    timing = scenario.timing
    length = f"{run.duration:g} s" if run.duration else "until Ctrl-C"
    print(
        f"ready. The emulator: {emulator.url} (kubectl --server={emulator.url} get deploy,pas); the daemon: "
        f"http://{address}/metrics; Prometheus: {run.prometheus_url}.",
        flush=True,
    )
    print(
        f"Replaying config/demo/trace-excerpt.csv (NASA KSC web server, 13 July 1995, 05:00-19:00) "
        f"{timing.speed:.0f}x faster after a {timing.lead_seconds:.0f} s lead-in; running {length}, "
        f"Ctrl-C stops.",
        flush=True,
    )
    print(
        "load/s: web requests per second; capacity/s: what the ready web pods serve at the 60 % CPU target; "
        "pods: current->desired (ready)",
        flush=True,
    )
    print(header(), flush=True)


def loop(
    run: Run,
    emulator: EmulatedApiServer,
    generator: LoadGenerator,
    scenario: Scenario,
    clock: DemoClock,
    address: str,
) -> None:
    """One sample per `SAMPLE_SECONDS` of the demo clock until the duration ends (or forever with 0)."""
    step = 0
    while True:
        step += 1
        sample = take_sample(run, emulator, generator, scenario, clock.seconds(), address)
        run.samples.append(sample)
        print(table_line(sample), flush=True)
        for line in new_rescales(run):
            print(f"      {line}", flush=True)
        for child in run.children:
            if not child.alive():
                raise DemoError(f"{child.name} exited unexpectedly:\n{child.tail()}")
        if run.duration and clock.seconds() >= run.duration:
            return
        next_at = step * SAMPLE_SECONDS
        if run.duration:
            next_at = min(next_at, run.duration)
        time.sleep(max(0.0, next_at - clock.seconds()))  # the table's pace, not a wait for a condition


def take_sample(
    run: Run,
    emulator: EmulatedApiServer,
    generator: LoadGenerator,
    scenario: Scenario,
    seconds: float,
    address: str,
) -> Sample:
    daemon = daemon_metrics(address)
    exported = model_metrics(generator)
    web = workload_view(emulator, daemon, WEB, exported)
    return Sample(
        seconds,
        scenario.web_load_at(seconds),
        web,
        scenario.jobs_at(seconds),
        exported.get(("queue_depth", QUEUE), 0.0),
        workload_view(emulator, daemon, WORKER, exported),
    )


def daemon_metrics(address: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """The daemon's `/metrics` samples by name (empty when it does not answer)."""
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=2) as response:
            text = response.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return {}
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append((dict(s.labels), float(s.value)))
    return out


def model_metrics(generator: LoadGenerator) -> dict[tuple[str, str], float]:
    """The load model's gauges: (`load_model_ready_pods`, workload name) and (`queue_depth`, queue)."""
    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(generator.exposition().decode()):
        for s in family.samples:
            if s.name in ("load_model_ready_pods", "load_model_demand"):
                out[(s.name, s.labels["name"])] = float(s.value)
            elif s.name == "queue_depth":
                out[(s.name, s.labels["queue"])] = float(s.value)
    return out


def workload_view(
    emulator: EmulatedApiServer,
    daemon: dict[str, list[tuple[dict[str, str], float]]],
    ref: WorkloadRef,
    exported: dict[tuple[str, str], float],
) -> WorkloadView:
    deployment = emulator.get("apps/v1", ref.kind, ref.name, namespace=ref.namespace)
    mine = {"namespace": ref.namespace, "name": ref.name}

    def ours(labels: dict[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in mine.items())

    desired = next(
        (
            int(v)
            for labels, v in daemon.get("autoscaler_target_replicas", [])
            if ours(labels) and labels["kind"] == "desired"
        ),
        None,
    )
    values = {
        (lb["metric"], lb["target_type"]): v for lb, v in daemon.get("autoscaler_target_metric_value", []) if ours(lb)
    }
    targets = {
        (lb["metric"], lb["target_type"]): v for lb, v in daemon.get("autoscaler_target_metric_target", []) if ours(lb)
    }
    metrics = tuple(
        MetricView(name, kind, values.get((name, kind)), targets.get((name, kind)))
        for name, kind in sorted(set(values) | set(targets))
    )
    return WorkloadView(
        replicas=int(deployment["spec"].get("replicas", 0)),
        ready=int(exported.get(("load_model_ready_pods", ref.name), 0)),
        desired=desired,
        metrics=metrics,
    )


def decision_lines(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The daemon's `decision` log lines after byte `offset` (complete lines only), and the new offset."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1
    out = []
    for raw in data[:end].splitlines():
        if not raw.startswith(b"{"):
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict) and line.get("event") == "decision":
            out.append(line)
    return out, offset + end


def new_rescales(run: Run) -> list[str]:
    """The scale writes the daemon logged since the last call, as `target: summary` lines."""
    lines, run.log_offset = decision_lines(run.output / "daemon.log", run.log_offset)
    found = [f"{line.get('target')}: {line.get('summary')}" for line in lines if line.get("wrote")]
    run.rescales.extend(found)
    return found


def stop_all(run: Run, generator: LoadGenerator | None, emulator: EmulatedApiServer | None) -> None:
    """The daemon first (it may be writing), then Prometheus, then the in-process load model and emulator."""
    for child in reversed(run.children):
        status = child.stop()
        if status not in (None, 0, -signal.SIGTERM, 128 + signal.SIGINT, -signal.SIGINT):
            print(f"{child.name} exited with status {status}", file=sys.stderr)
    if generator is not None:
        generator.stop()
    if emulator is not None:
        emulator.stop()


def finish(run: Run, ended: str) -> int:
    """Write the decision log, the samples and the chart; say what happened and where the files are."""
    survivors = [f"{c.name} (pid {c.pid})" for c in run.children if c.alive()]
    decisions, _ = decision_lines(run.output / "daemon.log")
    with (run.output / "decisions.jsonl").open("w", encoding="utf-8") as handle:
        for line in decisions:
            handle.write(json.dumps(line, sort_keys=True) + "\n")
    write_csv(run.output / "samples.csv", run.samples)
    if run.samples:
        write_chart(
            run.output / "chart.png",
            run.samples,
            load=[run.offered(t / 4) for t in range(int(run.samples[-1].seconds * 4) + 1)],
            title="autoscaler demo: NASA KSC web server, 13 July 1995, 05:00-19:00, time-compressed",
        )
    print(f"\n{ended}; stopped the daemon, Prometheus, the load model and the emulator.")
    print(summary(run))
    print(
        f"outputs in {run.output}/: chart.png, samples.csv, decisions.jsonl ({len(decisions)} decisions), "
        "daemon.log, prometheus.log, snapshots/ (replay one with `autoscaler replay FILE`)"
    )
    if survivors:
        print(f"error: still running: {', '.join(survivors)}", file=sys.stderr)
        return 1
    return 0


def summary(run: Run) -> str:
    if not run.samples:
        return "no samples were taken."
    web = [s.web.replicas for s in run.samples]
    text = f"web: {web[0]} replicas at the start, {max(web)} at most, {web[-1]} at the end"
    workers = [s.worker.replicas for s in run.samples]
    text += f"; worker: {workers[0]} at the start, {max(workers)} at most, {workers[-1]} at the end"
    return text + f"; {len(run.rescales)} scale writes."
