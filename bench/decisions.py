"""Benchmark: how many decisions per second the core makes, for the daemon's "thousands of targets" budget.

Builds N synthetic targets (each with P pods and two metrics: CPU utilization and a Pods metric, with
behavior), then times `core.decide` over all of them, R rounds, in one process. Prints a table and writes
the figures as JSON (--json) so two runs can be compared. Not a test: timings are never asserted.

    python bench/decisions.py --targets 100 1000 5000 --pods 10 --rounds 5 --json bench/results/decisions.json

By default every target rescales every round (behavior, readings made of items, no conditions carried over).
`--like-daemon` decides as `autoscaler run` does in bench/throughput.py's steady run: no behavior (the legacy
path), readings made from columns as the metric sources make them, each target's conditions, lastScaleTime and
desired count carried to its next round, its state compacted as the daemon keeps it, and the ambiguous-selector
check (`controlling_autoscalers`) timed with the decision; every target holds.
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

from autoscaler.core.decision import controlling_autoscalers, decide
from autoscaler.core.state import compact_recommendations
from autoscaler.core.types import (
    AutoscalerSpec,
    Behavior,
    BehaviorState,
    Condition,
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


def _spec(utilization: int, behavior: Behavior | None = None) -> AutoscalerSpec:
    """CPU at `utilization` % and 100 requests per second per pod, min 1, max 100."""
    return AutoscalerSpec(
        max_replicas=100,
        min_replicas=1,
        metrics=(
            MetricSpec(
                MetricSourceType.RESOURCE,
                MetricTarget(MetricTargetType.UTILIZATION, average_utilization=utilization),
                resource_name="cpu",
            ),
            MetricSpec(
                MetricSourceType.PODS,
                MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=100_000),
                metric_name="http_requests_per_second",
            ),
        ),
        behavior=behavior,
    )


SPEC = _spec(
    60,
    Behavior(
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


# bench/throughput.py's steady spec: no behavior, both targets at the load (every target holds).
DAEMON_SPEC = _spec(80)


def _daemon_target(index: int, pods: int) -> tuple[tuple[Pod, ...], tuple[ResourceReading, PodsReading]]:
    """A target as the daemon sees it: labelled pods, and readings made from columns sharing one names tuple."""
    start = NOW - timedelta(hours=1)
    names = tuple(sorted(f"t{index}-p{i}" for i in range(pods)))
    labels = {"app": f"t{index}"}
    pod_list = tuple(
        Pod(
            name=name,
            namespace=f"ns{index % 50}",
            phase="Running",
            ready="True",
            labels=labels,
            ready_transition=start,
            start_time=start,
            containers=(Container("app", {"cpu": 500}),),
        )
        for name in names
    )
    stamp = NOW - timedelta(seconds=15)
    cpu = ResourceReading.from_columns(
        resource="cpu",
        names=names,
        containers=["app"] * pods,
        stamps=[stamp] * pods,
        windows=[180.0] * pods,
        values=[380 + (i * 37) % 41 for i in range(pods)],
    )
    rps = PodsReading.from_columns(
        names=names,
        stamps=[stamp] * pods,
        windows=[180.0] * pods,
        values=[95_000 + (i * 7919) % 10_000 for i in range(pods)],
    )
    return pod_list, (cpu, rps)


def run(targets: int, pods: int, rounds: int, *, like_daemon: bool = False) -> dict[str, float]:
    spec = DAEMON_SPEC if like_daemon else SPEC
    inputs = [(_daemon_target if like_daemon else _target)(i, pods) for i in range(targets)]
    states = [BehaviorState(recommendations=()) for _ in range(targets)]
    conditions: list[tuple[Condition, ...]] = [() for _ in range(targets)]
    scale_times: list[datetime | None] = [None] * targets
    desired: list[int | None] = [None] * targets
    settings = Settings()
    durations = []

    def tick(now: datetime) -> None:
        for i, (pod_list, readings) in enumerate(inputs):
            controllers: tuple[str, ...] = ()
            if like_daemon:
                key = f"{pod_list[0].namespace}/t{i}"
                controllers = controlling_autoscalers(pod_list, {key: f"app=t{i}"})
            decision = decide(
                spec=spec,
                scale=Scale(pods, pods, f"app=t{i}" if like_daemon else "app=x"),
                pods=pod_list,
                metrics=readings,
                state=states[i],
                settings=settings,
                now=now,
                conditions=conditions[i],
                last_scale_time=scale_times[i],
                previous_desired_replicas=desired[i],
                controllers=controllers,
            )
            states[i] = compact_recommendations(decision.state) if like_daemon else decision.state
            if like_daemon:
                conditions[i] = decision.conditions
                scale_times[i] = decision.status.last_scale_time
                desired[i] = decision.status.desired_replicas

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
        "like_daemon": like_daemon,
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
    parser.add_argument("--like-daemon", action="store_true", help="decide as the daemon's steady run does (above)")
    parser.add_argument("--json", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args()
    rows = [run(n, args.pods, args.rounds, like_daemon=args.like_daemon) for n in args.targets]
    kind = "as the daemon decides, every target holding" if args.like_daemon else "every target rescaling"
    print(
        f"core.decide, {args.pods} pods and 2 metrics per target, {args.rounds} rounds, {kind} "
        f"({platform.python_version()})"
    )
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
