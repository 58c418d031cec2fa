"""Benchmark: how many decisions per second the core makes, for the daemon's "thousands of targets" budget.

Builds N synthetic targets (each with P pods and two metrics: CPU utilization and a Pods metric, with
behavior), then times `core.decide` over all of them, R rounds, in one process. Prints a table and writes
the figures as JSON (--json) so two runs can be compared. Not a test: timings are never asserted.

    python bench/decisions.py --targets 100 1000 5000 --pods 10 --rounds 5 --json bench/results/decisions.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

from autoscaler.core.decision import decide
from autoscaler.core.types import (
    AutoscalerSpec,
    Behavior,
    BehaviorState,
    Container,
    ContainerUsage,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Pod,
    PodsReading,
    PodUsage,
    PodValue,
    ResourceReading,
    Scale,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    Settings,
)

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SPEC = AutoscalerSpec(
    max_replicas=100,
    min_replicas=1,
    metrics=(
        MetricSpec(
            MetricSourceType.RESOURCE,
            MetricTarget(MetricTargetType.UTILIZATION, average_utilization=60),
            resource_name="cpu",
        ),
        MetricSpec(
            MetricSourceType.PODS,
            MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=100_000),
            metric_name="http_requests_per_second",
        ),
    ),
    behavior=Behavior(
        scale_up=ScalingRules(
            policies=(ScalingPolicy(ScalingPolicyType.PODS, 4, 15), ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15)),
            stabilization_window_seconds=0,
        ),
        scale_down=ScalingRules(policies=(ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15),)),
    ),
)


def _target(index: int, pods: int) -> tuple[tuple[Pod, ...], tuple[ResourceReading, PodsReading]]:
    start = NOW - timedelta(hours=1)
    pod_list = tuple(
        Pod(
            name=f"t{index}-p{i}",
            phase="Running",
            ready="True",
            ready_transition=start + timedelta(seconds=40),
            start_time=start,
            containers=(Container("app", {"cpu": 500}),),
        )
        for i in range(pods)
    )
    cpu = ResourceReading(
        tuple(
            PodUsage(p.name, NOW - timedelta(seconds=15), 30.0, (ContainerUsage("app", {"cpu": 250 + (i * 37) % 300}),))
            for i, p in enumerate(pod_list)
        )
    )
    rps = PodsReading(tuple(PodValue(p.name, 80_000 + (i * 7919) % 60_000, NOW) for i, p in enumerate(pod_list)))
    return pod_list, (cpu, rps)


def run(targets: int, pods: int, rounds: int) -> dict[str, float]:
    inputs = [_target(i, pods) for i in range(targets)]
    states = [BehaviorState(recommendations=()) for _ in range(targets)]
    settings = Settings()
    durations = []

    def tick(now: datetime) -> None:
        for i, (pod_list, readings) in enumerate(inputs):
            decision = decide(
                spec=SPEC,
                scale=Scale(pods, pods, "app=x"),
                pods=pod_list,
                metrics=readings,
                state=states[i],
                settings=settings,
                now=now,
            )
            states[i] = decision.state

    for r in range(rounds):
        began = time.perf_counter()
        tick(NOW + timedelta(seconds=15 * r))
        durations.append(time.perf_counter() - began)
    # One more tick under tracemalloc (which slows it) for the memory a tick allocates at its peak.
    tracemalloc.start()
    tick(NOW + timedelta(seconds=15 * rounds))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median = statistics.median(durations)
    return {
        "targets": targets,
        "pods_per_target": pods,
        "rounds": rounds,
        "tick_seconds_p50": median,
        "tick_seconds_max": max(durations),
        "decisions_per_second": targets / median,
        "peak_traced_mib": peak / 2**20,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--pods", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args()
    rows = [run(n, args.pods, args.rounds) for n in args.targets]
    print(f"core.decide, {args.pods} pods and 2 metrics per target, {args.rounds} rounds ({platform.python_version()})")
    print(f"{'targets':>8} {'tick p50 (s)':>13} {'tick max (s)':>13} {'decisions/s':>12} {'peak MiB':>9}")
    for row in rows:
        print(
            f"{row['targets']:>8} {row['tick_seconds_p50']:>13.3f} {row['tick_seconds_max']:>13.3f} "
            f"{row['decisions_per_second']:>12.0f} {row['peak_traced_mib']:>9.1f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"benchmark": "decisions", "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
