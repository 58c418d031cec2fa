"""The HPA-compatible default in the simulator is the HPA of the daemon and `autoscaler replay`: every decision
of a simulated run, written as a snapshot and replayed, is decided the same."""

from __future__ import annotations

import json
import math

import pytest

from autoscaler.core.decision import Decision
from autoscaler.core.types import Settings
from autoscaler.replay import replay_data
from autoscaler.simulate.model import Model, Scenario, scenario_spec, simulate, target_milli
from autoscaler.simulate.modes import mode_spec
from autoscaler.spec.snapshot_out import DecisionInputs


def _demand(steps: int) -> list[float]:
    """Three hours of a daily-like swell with two sudden bursts and a drop (5 s steps, C = 1)."""
    out = []
    for k in range(steps):
        t = k * 5
        level = 6 + 4 * math.sin(t / 1800)
        if 2400 <= t < 2700 or 6000 <= t < 6120:
            level *= 3
        if 8000 <= t < 8600:
            level = 0.5
        out.append(level)
    return out


@pytest.mark.parametrize("scenario", ["cpu", "rps"])
def test_every_simulated_decision_replays_the_same(scenario: Scenario) -> None:
    model = Model(capacity=1.0)
    spec = scenario_spec(mode_spec("hpa"), scenario, target_milli=target_milli(1.0, model), model=model)
    seen: list[tuple[DecisionInputs, Decision]] = []
    result = simulate(
        _demand(3 * 720),
        capacity=1.0,
        spec_model=spec,
        scenario=scenario,
        model=model,
        settings=Settings(),
        observer=lambda inputs, decision: seen.append((inputs, decision)),
    )
    assert result.writes >= 6  # the run scales both ways, so the comparison covers rescales
    assert any(d.desired_replicas < d.current_replicas for _, d in seen if d.rescale and d.current_replicas)
    for inputs, decision in seen:
        # Through JSON text, as a file from --snapshots would be read.
        replayed = replay_data(json.loads(json.dumps(inputs.json())))
        assert (replayed["desiredReplicas"], replayed["rescale"], replayed["summary"]) == (
            decision.desired_replicas,
            decision.rescale,
            decision.summary,
        ), inputs.now
