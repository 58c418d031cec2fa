"""Queue workers scaled by the real daemon on a drain time and on a formula, read from a real Prometheus scraping
the load model's `queue_depth`, `http_requests_total` and `load_model_demand` series; the flight recorder's
snapshots carry the extra inputs and replay to the same decisions."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from autoscaler.sim.load import Series, Workload, WorkloadRef
from tests.e2e.conftest import Demand, Stack, write_spec
from tests.e2e.stack import DaemonProcess, wait_for
from tests.sim.conftest import NS, workload

CAPACITY = 5.0  # items per second one ready pod processes
DRAIN_SECONDS = 20
MAX_DRAIN = 6
ARRIVALS = 30.0  # the formula worker's steady arrivals: 30 / 5 = 6 pods
BEHAVIOR = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}]},
    "scaleDown": {"stabilizationWindowSeconds": 3, "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}]},
}


def autoscaler(name: str, max_replicas: int, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": max_replicas,
            "behavior": BEHAVIOR,
            **extra,
        },
    }


DRAIN = autoscaler(
    "drainer",
    MAX_DRAIN,
    drainTime={
        "backlog": {"prometheus": {"query": f'sum(queue_depth{{namespace="{NS}",queue="drainer"}})'}},
        "processingRate": {
            "prometheus": {
                "query": f'sum(rate(http_requests_total{{namespace="{NS}",pod=~"drainer-.+"}}[4s]))',
                "emptyAsZero": True,
            }
        },
        "targetSeconds": DRAIN_SECONDS,
    },
)
FORMULA = autoscaler(
    "former",
    10,
    formula={
        "inputs": [
            {"name": "arrivals", "prometheus": {"query": f'sum(load_model_demand{{namespace="{NS}",name="former"}})'}},
            {"name": "backlog", "prometheus": {"query": f'sum(queue_depth{{namespace="{NS}",queue="former"}})'}},
        ],
        # the arrivals, plus the backlog drained over 10 s, at 5 items per second per replica
        "expression": "arrivals + backlog / 10",
        "target": {"type": "AverageValue", "averageValue": str(int(CAPACITY))},
    },
)


@dataclass
class Run:
    stack: Stack
    daemon: DaemonProcess
    address: str
    drainer: Demand
    peak: int


def queue_worker(stack: Stack, name: str, arrivals: float) -> Demand:
    stack.emulator.create(workload("Deployment", name, replicas=1))
    demand = Demand(arrivals)
    ref = WorkloadRef(NS, "Deployment", name)
    stack.generator.add(Workload(ref, demand, series=frozenset({Series.QUEUE, Series.RPS}), capacity=CAPACITY))
    return demand


@pytest.fixture(scope="module")
def run(emulator: Any, generator: Any, prometheus: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    tmp = tmp_path_factory.mktemp("queue")
    stack = Stack(emulator, generator, prometheus, tmp)
    drainer = queue_worker(stack, "drainer", 0.0)
    queue_worker(stack, "former", ARRIVALS)
    write_spec(tmp / "specs", "drainer", DRAIN)
    write_spec(tmp / "specs", "former", FORMULA)
    daemon, address = stack.daemon("queue", tmp / "specs", flightRecorder={"size": 400})
    daemon.start()
    try:
        wait_for(
            lambda: [
                d for d in daemon.events("decision", target=f"{NS}/drainer") if "nothing to drain" in d["summary"]
            ],
            deadline_seconds=20,
            what="a drain-time decision on the empty queue",
            explain=daemon.tail,
        )
        drainer.value = 100.0  # a burst: far more than the 6 replicas can process (30/s)
        wait_for(
            lambda: stack.replicas("drainer") == MAX_DRAIN,
            deadline_seconds=20,
            what="the drainer at its maximum",
            explain=daemon.tail,
        )
        peak = stack.replicas("drainer")
        drainer.value = 0.0  # the burst ends: the backlog drains at 30/s and the worker shrinks back to 1
        wait_for(lambda: stack.replicas("drainer") == 1, deadline_seconds=30, what="the drainer back at 1",
                 explain=daemon.tail)  # fmt: skip
        assert daemon.alive(), daemon.tail()
        yield Run(stack, daemon, address, drainer, peak)
    finally:
        if daemon.alive():
            daemon.terminate()


def test_the_formula_worker_settles_at_arrivals_over_capacity(run: Run) -> None:
    """30 arrivals per second at 5 per replica: 6 replicas once the backlog of the start is drained."""
    expected = math.ceil(ARRIVALS / CAPACITY)
    wait_for(
        lambda: (
            run.stack.replicas("former") == expected
            and [d for d in run.daemon.events("decision", target=f"{NS}/former") if d.get("current") == expected]
        ),
        deadline_seconds=20,
        what=f"the formula worker at {expected}",
        explain=run.daemon.tail,
    )
    summaries = [d["summary"] for d in run.daemon.events("decision", target=f"{NS}/former")]
    assert any("formula arrivals + backlog / 10 = 30 (arrivals=30, backlog=0)" in s for s in summaries), summaries[-3:]


DRAIN_LINE = re.compile(
    r"drain time: backlog (?P<backlog>[\d.e+]+), processing (?P<rate>[\d.e+]+)/s by (?P<ready>\d+) ready pods .*"
    r"ceil\([\d.e+]+ / \((?P<per>[\d.e+]+)/s x (?P<seconds>\d+) s\)\) = (?P<wanted>\d+)"
)


def test_the_drain_time_scales_up_on_a_burst_and_back_when_the_queue_is_empty(run: Run) -> None:
    assert run.peak == MAX_DRAIN
    decisions = run.daemon.events("decision", target=f"{NS}/drainer")
    summaries = [d["summary"] for d in decisions]
    # Before the burst: nothing to drain. At its start, the idle pod's rate is 0: held at 1, never down.
    assert any("backlog 0, nothing to drain" in s for s in summaries), summaries[:8]
    # Each computed proposal is ceil(backlog / (rate / ready pods x target seconds)), from what the daemon read.
    computed = [m for s in summaries if (m := DRAIN_LINE.search(s))]
    assert computed, summaries[-5:]
    for match in computed:
        backlog, rate, ready = float(match["backlog"]), float(match["rate"]), int(match["ready"])
        assert int(match["seconds"]) == DRAIN_SECONDS
        assert float(match["per"]) == pytest.approx(rate / ready, rel=1e-5)
        exact = backlog / (rate / ready * DRAIN_SECONDS)
        # the log prints six significant digits: a quotient this close to a whole number may round either way
        assert int(match["wanted"]) == math.ceil(exact) or abs(exact - round(exact)) < 1e-3
    assert any(int(m["wanted"]) >= MAX_DRAIN for m in computed)


def test_the_recorded_snapshots_carry_the_inputs_and_replay_to_the_same_decisions(run: Run, tmp_path: Path) -> None:
    for name, count in (("drainer", 2), ("former", 2)):
        status, body = run.daemon.get(run.address, f"/debug/snapshots?target={NS}/{name}")
        assert status == 200, body
        served = json.loads(body)
        entries = served if isinstance(served, list) else served[f"{NS}/{name}"]
        assert len(entries) >= 3
        assert all(len(entry["snapshot"]["inputs"]) == count for entry in entries)
        paths = []
        for i, entry in enumerate(entries):
            path = tmp_path / f"{name}-{i}.json"
            path.write_text(json.dumps(entry["snapshot"]))
            paths.append(path)
        done = subprocess.run(
            [sys.executable, "-m", "autoscaler", "replay", "-o", "jsonl", *map(str, paths)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        replayed = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        assert len(replayed) == len(entries)
        for got, entry in zip(replayed, entries, strict=True):
            want = entry["decision"]
            assert (got["desiredReplicas"], got["summary"]) == (want["desiredReplicas"], want["summary"])
