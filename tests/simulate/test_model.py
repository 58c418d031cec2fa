"""The simulator's model against hand-computed cases (docs/performance.md): C = 1 unit/s per pod, so a pod's
share of the 0.7 target is 0.7 units/s and the oracle runs ceil(L / 0.7) pods."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from autoscaler.core.decision import Decision
from autoscaler.core.types import PodsReading, ResourceReading, Settings
from autoscaler.simulate.model import EPOCH, Model, Result, Scenario, scenario_spec, simulate, target_milli
from autoscaler.simulate.modes import mode_spec
from autoscaler.spec.snapshot_out import DecisionInputs

MODEL = Model(capacity=1.0)
STEP = MODEL.step


def _run(
    demand: Sequence[float], scenario: Scenario, *, min_replicas: int = 1, max_replicas: int = 100
) -> tuple[Result, list[tuple[int, DecisionInputs, Decision]]]:
    base = mode_spec("hpa").model_copy(update={"min_replicas": min_replicas, "max_replicas": max_replicas})
    spec = scenario_spec(base, scenario, target_milli=target_milli(1.0, MODEL), model=MODEL)
    seen: list[tuple[int, DecisionInputs, Decision]] = []
    result = simulate(
        demand,
        capacity=1.0,
        spec_model=spec,
        scenario=scenario,
        model=MODEL,
        settings=Settings(),
        observer=lambda inputs, decision: seen.append((round((inputs.now - EPOCH).total_seconds()), inputs, decision)),
    )
    return result, seen


def _writes(seen: list[tuple[int, DecisionInputs, Decision]]) -> list[tuple[int, int | None, int | None]]:
    return [(t, d.current_replicas, d.desired_replicas) for t, _, d in seen if d.rescale]


def _sample(inputs: DecisionInputs, pod: int = 0) -> int:
    reading = inputs.metrics[0]
    if isinstance(reading, ResourceReading):
        return reading.pods[pod].containers[0].usage["cpu"]
    assert isinstance(reading, PodsReading)
    return reading.items[pod].value


def test_a_step_in_demand_waits_out_the_start_up_delay() -> None:
    # 1.4/s (2 pods at exactly 0.7 each) for 300 s, then 2.8/s.
    demand = [1.4] * 60 + [2.8] * 360
    result, seen = _run(demand, "rps")
    # t=300: window 0.7, 0.7, 0.7, 1.4 -> 875m against 700m, ratio 1.25 -> ceil(2.5) = 3.
    # t=315: the new pod runs (not ready) and reports 0: (1050 + 1050 + 0) / 3 = 700m -> stay.
    # t=330: (1225 + 1225 + 0) / 3 = 816.67m, ratio 1.167 -> ceil(3.5) = 4.
    assert _writes(seen)[:2] == [(300, 2, 3), (330, 3, 4)]
    by_time = {t: inputs for t, inputs, _ in seen}
    assert [_sample(by_time[t]) for t in (300, 315, 330)] == [875, 1050, 1225]
    assert _sample(by_time[315], pod=2) == 0
    # Until the first new pod is ready at 300 + 45 = 345 s, 2 pods serve 2.8/s: 0.8/s unserved for 45 s.
    series = result.series
    assert [series.ready_capacity[series.times.index(t)] for t in (330, 345)] == [2.0, 3.0]
    unserved = result.scores.unserved * sum(demand) * STEP
    assert unserved == pytest.approx(0.8 * 45)


def test_cpu_saturates_at_100_percent_where_requests_per_pod_do_not() -> None:
    # 0.7/s on one pod, then ten times as much: the pod's CPU cannot go beyond 100 %.
    demand = [0.7] * 60 + [7.0] * 360
    cpu, cpu_seen = _run(demand, "cpu")
    rps, rps_seen = _run(demand, "rps")
    cpu_at = {t: inputs for t, inputs, _ in cpu_seen}
    rps_at = {t: inputs for t, inputs, _ in rps_seen}
    # Window at t=300: 0.7, 0.7, 0.7 and the saturated 1.0 -> 775m (77 %: within the tolerance of 70 %),
    # where the request rate per pod is (0.7 * 3 + 7) / 4 = 2.275/s.
    assert _sample(cpu_at[300]) == 775
    assert _sample(rps_at[300]) == 2275
    assert max(_sample(inputs) for _, inputs, _ in cpu_seen) == 1000
    # The cpu scenario scales at t=315 (850m: ratio 1.21, ceil = 2); the rps one at t=300 to the scale-up
    # limit max(2 x 1, 4) = 4.
    assert _writes(cpu_seen)[0] == (315, 1, 2)
    assert _writes(rps_seen)[0] == (300, 1, 4)
    assert cpu.scores.unserved > 2 * rps.scores.unserved


@pytest.mark.parametrize(
    ("level", "min_replicas", "oracle_pods"),
    [
        pytest.param(1.4, 1, 2, id="two-pods-at-target"),
        pytest.param(1.0, 1, 2, id="ceil-of-1/0.7"),
        pytest.param(0.1, 3, 3, id="min-replicas-floor"),
    ],
)
def test_the_oracle_on_a_flat_trace(level: float, min_replicas: int, oracle_pods: int) -> None:
    # A flat demand: the simulation starts at the oracle's count and the HPA keeps it (its proposal is within
    # the tolerance, or below the minimum), so the cost is exactly 1 and nothing is unserved or written.
    result, seen = _run([level] * 720, "rps", min_replicas=min_replicas)
    assert set(result.series.oracle) == {oracle_pods}
    assert set(result.series.replicas) == {oracle_pods}
    assert result.scores.cost == 1.0
    assert result.scores.unserved == 0.0
    assert result.writes == 0 and result.oracle.events_per_day == 0.0
    assert len(seen) == 720 * STEP // MODEL.sync - 1  # decisions at 15, 30, ... < 3600


def test_scale_events_are_counted_once_per_write() -> None:
    demand = [0.7] * 60 + [7.0] * 300 + [0.7] * 600
    result, seen = _run(demand, "rps")
    writes = _writes(seen)
    assert writes[0] == (300, 1, 4)  # one write of 3 pods: one event
    assert result.writes == len(writes)
    assert result.scores.events_per_day == pytest.approx(len(writes) / (len(demand) * STEP / 86400))
    # The oracle's events are the changes of its count: up once at t=300 (1 -> 10), down once at t=1800.
    assert result.oracle.events_per_day == pytest.approx(2 / (len(demand) * STEP / 86400))


@pytest.mark.parametrize("scenario", ["cpu", "rps"])
def test_the_start_is_the_oracles_count_within_max_replicas(scenario: Scenario) -> None:
    # L(0) = 70/s needs 100 pods at 0.7 each; with maxReplicas 10 the workload starts at 10 (it could not have run
    # more), and its first decision sees 10 pods, not 100.
    result, seen = _run([70.0] * 4 + [3.5] * 120, scenario, max_replicas=10)
    assert result.series.replicas[0] == 10
    assert seen[0][2].current_replicas == 10
    assert max(result.series.replicas) == 10
    # The oracle is not bounded: 100 pods at t = 0, then 5 from t = 20 s: one change of its count, not two.
    assert result.oracle.events_per_day == pytest.approx(86400 / result.seconds)
