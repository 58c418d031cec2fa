"""Properties of the replica calculator that the HPA's rules promise, over generated pods and readings.

Each example is a snapshot built like the upstream fixtures (`builders`) and replayed; the properties are
checked on the per-metric proposal. Pods are ready, unready (Ready=False and never ready), pending, or
missing their metrics; the current replica count is drawn independently (a rollout may have more pods).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.replay import replay_data
from tests.conformance.builders import (
    NUM_CONTAINERS_PER_POD,
    calculator_snapshot,
    fake_pods,
    milli,
    pod_metrics_list,
    pod_name,
    pods_metric,
    pods_metric_value_list,
    resource_utilization_metric,
)

READY, UNREADY, PENDING, MISSING = "ready", "unready", "pending", "missing"
TOLERANCES = st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.5])


@dataclass(frozen=True)
class PodCase:
    state: str
    request: int  # millicores per container
    usage: int  # millicores per container (or the Pods metric's value)


@dataclass(frozen=True)
class Scenario:
    pods: tuple[PodCase, ...]
    current_replicas: int
    target: int
    tolerances: tuple[float, float]

    def has(self, *states: str) -> bool:
        return any(p.state in states for p in self.pods)


pod_cases = st.builds(
    PodCase,
    state=st.sampled_from([READY, UNREADY, PENDING, MISSING]),
    request=st.integers(100, 2000),
    usage=st.integers(0, 4000),
)


@st.composite
def scenarios(draw: st.DrawFn, *, target: st.SearchStrategy[int]) -> Scenario:
    pods = draw(st.lists(pod_cases, min_size=1, max_size=10))
    # At least one pod with a usable metric, or the calculator has nothing to compute from.
    first_ready = PodCase(READY, draw(st.integers(100, 2000)), draw(st.integers(0, 4000)))
    return Scenario(
        pods=(first_ready, *pods),
        current_replicas=draw(st.integers(1, 15)),
        target=draw(target),
        tolerances=(draw(TOLERANCES), draw(TOLERANCES)),
    )


def _pods(scenario: Scenario) -> list[dict[str, Any]]:
    return fake_pods(
        len(scenario.pods),
        readiness=["False" if p.state == UNREADY else "True" for p in scenario.pods],
        phases=["Pending" if p.state == PENDING else "Running" for p in scenario.pods],
        requests=[milli(p.request) for p in scenario.pods],
    )


def _reported(scenario: Scenario) -> list[tuple[str, PodCase]]:
    return [(pod_name(i), p) for i, p in enumerate(scenario.pods) if p.state != MISSING]


def utilization_proposal(scenario: Scenario) -> dict[str, Any]:
    reported = _reported(scenario)
    snapshot = calculator_snapshot(
        metric=resource_utilization_metric(scenario.target),
        reading=pod_metrics_list(
            [[p.usage] * NUM_CONTAINERS_PER_POD for _, p in reported], pod_names=[name for name, _ in reported]
        ),
        pods=_pods(scenario),
        current_replicas=scenario.current_replicas,
        tolerances=scenario.tolerances,
    )
    return replay_data(snapshot)["metrics"][0]


def pods_metric_proposal(scenario: Scenario) -> dict[str, Any]:
    reading = pods_metric_value_list("qps", [p.usage for p in scenario.pods])
    reading["items"] = [item for item, p in zip(reading["items"], scenario.pods, strict=True) if p.state != MISSING]
    snapshot = calculator_snapshot(
        metric=pods_metric("qps", scenario.target),
        reading=reading,
        pods=_pods(scenario),
        current_replicas=scenario.current_replicas,
        tolerances=scenario.tolerances,
    )
    return replay_data(snapshot)["metrics"][0]


UTILIZATION = scenarios(target=st.integers(10, 300))
AVERAGE_VALUE = scenarios(target=st.integers(1, 4000))
PROPOSALS = {"cpu utilization": utilization_proposal, "pods metric": pods_metric_proposal}


def _within(tolerances: tuple[float, float], ratio: float) -> bool:
    down, up = tolerances
    return 1.0 - down <= ratio <= 1.0 + up


@settings(max_examples=150, deadline=None)
@given(scenario=UTILIZATION)
def test_utilization_never_scales_down_on_partial_data_above_target(scenario: Scenario) -> None:
    """Missing or unready pods with usage above target: the proposal is never below the current count."""
    out = utilization_proposal(scenario)
    assert out["error"] is None
    if scenario.has(MISSING, UNREADY, PENDING) and out["usageRatio"] > 1.0:
        assert out["proposedReplicas"] >= scenario.current_replicas


@settings(max_examples=150, deadline=None)
@given(scenario=AVERAGE_VALUE)
def test_pods_metric_never_scales_down_on_partial_data_above_target(scenario: Scenario) -> None:
    """The same rule for a Pods metric (calcPlainMetricReplicas); pending pods are its only unready pods."""
    out = pods_metric_proposal(scenario)
    assert out["error"] is None
    if scenario.has(MISSING, PENDING) and out["usageRatio"] > 1.0:
        assert out["proposedReplicas"] >= scenario.current_replicas


@settings(max_examples=150, deadline=None)
@given(scenario=UTILIZATION)
def test_scale_down_with_missing_pods_counts_them_at_least_at_their_request(scenario: Scenario) -> None:
    """A scale-down with missing pods never goes below what counting each missing pod at 100 % would give."""
    out = utilization_proposal(scenario)
    assert out["error"] is None
    if not scenario.has(MISSING) or out["usageRatio"] >= 1.0 or out["proposedReplicas"] >= scenario.current_replicas:
        return
    counted = [p for p in scenario.pods if p.state in (READY, MISSING)]
    used = sum(p.request if p.state == MISSING else p.usage for p in counted)
    requested = sum(p.request for p in counted)
    ratio_at_100 = (used * 100 // requested) / scenario.target
    assert out["proposedReplicas"] >= math.ceil(ratio_at_100 * len(counted))


@settings(max_examples=150, deadline=None)
@given(scenario=UTILIZATION, kind=st.sampled_from(sorted(PROPOSALS)))
def test_a_ratio_within_tolerance_keeps_the_current_count(scenario: Scenario, kind: str) -> None:
    """All pods ready and reporting, usage ratio within tolerance: the proposal is the current count."""
    ready_only = Scenario(
        tuple(PodCase(READY, p.request, p.usage) for p in scenario.pods),
        scenario.current_replicas,
        scenario.target,
        scenario.tolerances,
    )
    out = PROPOSALS[kind](ready_only)
    assert out["error"] is None
    assert out["withinTolerance"] is _within(scenario.tolerances, out["usageRatio"])
    if out["withinTolerance"]:
        assert out["proposedReplicas"] == scenario.current_replicas


@settings(max_examples=150, deadline=None)
@given(scenario=UTILIZATION, kind=st.sampled_from(sorted(PROPOSALS)))
def test_proposals_are_never_negative_and_tolerance_always_holds(scenario: Scenario, kind: str) -> None:
    """Any mix of pods: a proposal is >= 0, and whenever the calculator says "within tolerance" it holds."""
    out = PROPOSALS[kind](scenario)
    assert out["error"] is None
    assert out["proposedReplicas"] >= 0
    if out["withinTolerance"]:
        assert out["proposedReplicas"] == scenario.current_replicas
