"""The spec's drainTime and formula blocks (autoscaler/spec/queue.py): loading, errors, core values, snapshots."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core import types as core
from autoscaler.core.decision import decide
from autoscaler.replay import decide_snapshot, replay_data
from autoscaler.spec.errors import SpecError
from autoscaler.spec.files import load_spec_text
from autoscaler.spec.objects import load_autoscaler
from autoscaler.spec.render import decision
from autoscaler.spec.snapshot import load_snapshot
from autoscaler.spec.snapshot_out import DecisionInputs, snapshot_json

OBJECT: dict[str, Any] = {
    "apiVersion": "autoscaler.dev/v1alpha1",
    "kind": "PrometheusAutoscaler",
    "metadata": {"name": "worker", "namespace": "jobs"},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
        "maxReplicas": 30,
        "drainTime": {
            "backlog": {"prometheus": {"query": 'sum(queue_depth{queue="jobs"})'}},
            "processingRate": {"prometheus": {"query": "sum(rate(jobs_done_total[2m]))", "emptyAsZero": True}},
            "targetSeconds": 120,
        },
        "formula": {
            "inputs": [
                {"name": "queue_depth", "prometheus": {"query": "sum(queue_depth)"}},
                {"name": "consumers", "metricName": "queue_consumers"},
            ],
            "expression": "queue_depth / max(consumers, 1)",
            "target": {"type": "AverageValue", "averageValue": "20"},
        },
    },
}


def load(**spec: Any) -> Any:
    obj = copy.deepcopy(OBJECT)
    obj["spec"].update(spec)
    return load_autoscaler(obj, scale_to_zero=False)


def problems(**spec: Any) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        load(**spec)
    return caught.value.problems


def test_both_blocks_read_into_the_core_values() -> None:
    autoscaler = load()
    spec = autoscaler.spec
    assert spec.metrics == ()  # no CPU default beside a drain time or a formula
    extra = spec.extra_metrics
    assert extra is not None and extra.drain_time is not None and extra.formula is not None
    assert extra.drain_time.target_seconds == 120
    assert extra.formula.formula.names == ("queue_depth", "consumers")
    assert extra.formula.target == core.MetricTarget(core.MetricTargetType.AVERAGE_VALUE, average_value=20_000)
    assert [(i.field, i.name, i.metric.metric_name, i.metric.type) for i in extra.inputs()] == [
        ("drainTime.backlog", "backlog", "backlog", core.MetricSourceType.EXTERNAL),
        ("drainTime.processingRate", "processingRate", "processing_rate", core.MetricSourceType.EXTERNAL),
        ("formula.inputs[0]", "queue_depth", "queue_depth", core.MetricSourceType.EXTERNAL),
        ("formula.inputs[1]", "consumers", "queue_consumers", core.MetricSourceType.EXTERNAL),
    ]


def test_without_either_block_the_spec_is_the_hpas() -> None:
    autoscaler = load(drainTime=None, formula=None)
    assert autoscaler.spec.extra_metrics is None
    assert [m.resource_name for m in autoscaler.spec.metrics] == ["cpu"]  # the CPU default


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        pytest.param("queue_depth / max(consumer, 1)", "column 19: unknown name 'consumer' (the inputs: consumers, "
                     "queue_depth)", id="an unknown name"),
        pytest.param("queue_depth / max(consumers)", "column 15: max() takes 2 or more arguments, not 1",
                     id="a wrong arity"),
        pytest.param("queue_depth / 0", "column 13: division by zero (the divisor is a constant 0)",
                     id="a literal zero"),
        pytest.param("queue_depth /", "column 14: expected a number, a name or '(', found the end of the formula",
                     id="a syntax error"),
        pytest.param("pow(queue_depth, 2)", "column 1: unknown function 'pow' (known: abs, ceil, floor, max, min)",
                     id="an unknown function"),
    ],
)  # fmt: skip
def test_a_formula_error_is_a_configuration_error_naming_the_field_and_the_column(
    expression: str, message: str
) -> None:
    formula = {**OBJECT["spec"]["formula"], "expression": expression}
    assert problems(formula=formula) == [("spec.formula.expression", message)]


def test_a_formula_error_reads_in_check_output_with_its_file_and_document() -> None:
    obj = copy.deepcopy(OBJECT)
    obj["spec"]["formula"]["expression"] = "queue_depth * consumers)"
    result = load_spec_text(yaml.safe_dump(obj), source="worker.yaml", scale_to_zero=False)
    (document,) = result.documents
    assert document.problems == [
        ("spec.formula.expression", "column 24: expected an operator or the end, found ')'"),
    ]


@pytest.mark.parametrize("field", ["drainTime", "formula"])
def test_the_blocks_belong_to_the_custom_resource_not_to_an_hpa(field: str) -> None:
    obj = copy.deepcopy(OBJECT)
    obj.update(apiVersion="autoscaling/v2", kind="HorizontalPodAutoscaler")
    other = "formula" if field == "drainTime" else "drainTime"
    del obj["spec"][other]
    with pytest.raises(SpecError) as caught:
        load_autoscaler(obj, scale_to_zero=False)
    assert caught.value.problems == [
        (f"spec.{field}", f"unknown field: a HorizontalPodAutoscaler has no {field} (a PrometheusAutoscaler has)")
    ]


def test_every_problem_of_both_blocks_at_once() -> None:
    found = problems(
        drainTime={"backlog": {}, "processingRate": {"metricName": "rate"}, "targetSeconds": 0},
        formula={
            "inputs": [{"name": "q"}, {"name": "q"}],
            "expression": "q",
            "target": {"type": "Value", "averageValue": "1"},
        },
    )
    assert found == [
        ("spec.drainTime.backlog", "set `prometheus.query`, or `metricName` for a query template"),
        ("spec.drainTime.targetSeconds", "Input should be greater than or equal to 1, not 0"),
        ("spec.formula.inputs", "input name 'q' is used more than once"),
        ("spec.formula.target.value", "required for a target of type Value"),
    ]


# --- snapshots: the inputs are carried, and replay decides the same ------------------------------------------

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
READINGS = st.one_of(
    st.builds(
        lambda values: core.ExternalReading(tuple(values), NOW),
        st.lists(st.integers(min_value=-(10**9), max_value=10**12), min_size=0, max_size=3),
    ),
    st.just(core.MetricFailure("Prometheus is unreachable")),
)


def _pods(count: int) -> tuple[core.Pod, ...]:
    since = NOW - timedelta(minutes=10)
    return tuple(
        core.Pod(f"worker-{i}", "Running", labels={"app": "worker"}, ready="True", ready_transition=since,
                 start_time=since, namespace="jobs")
        for i in range(count)
    )  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(inputs=st.lists(READINGS, min_size=4, max_size=4), replicas=st.integers(min_value=0, max_value=30))
def test_a_snapshot_carries_the_inputs_and_replay_decides_the_same(
    inputs: list[core.MetricInput], replicas: int
) -> None:
    autoscaler = load(minReplicas=0)
    values: dict[str, Any] = {
        "scale": core.Scale(replicas, replicas, "app=worker"),
        "pods": _pods(replicas),
        "metrics": (),
        "state": core.BehaviorState(recommendations=()),
        "settings": core.Settings(hpa_scale_to_zero=True),
        "now": NOW,
    }
    direct = decide(spec=autoscaler.spec, inputs=tuple(inputs), **values)
    written = snapshot_json(
        name="worker", namespace="jobs", spec_model=autoscaler.model, inputs=tuple(inputs), **values
    )
    text = json.dumps(written, allow_nan=False, sort_keys=True)
    snap = load_snapshot(json.loads(text))
    assert snap.inputs == tuple(inputs)
    replayed = decide_snapshot(snap)
    assert repr(replayed) == repr(direct)
    assert replay_data(json.loads(text)) == decision(direct, now=NOW, name="worker", namespace="jobs", source="")
    lazy = DecisionInputs(name="worker", namespace="jobs", spec_model=autoscaler.model, inputs=tuple(inputs), **values)
    assert json.dumps(lazy.json()) == json.dumps(written)


def test_the_replayed_decision_explains_the_extra_proposals() -> None:
    autoscaler = load()
    inputs = tuple(core.ExternalReading((v,), NOW) for v in (2_400_000, 10_000, 2_400_000, 8_000))
    written = snapshot_json(
        name="worker",
        namespace="jobs",
        spec_model=autoscaler.model,
        scale=core.Scale(4, 4, "app=worker"),
        pods=_pods(4),
        metrics=(),
        state=core.BehaviorState(recommendations=()),
        settings=core.Settings(),
        now=NOW,
        inputs=inputs,
    )
    assert [entry["items"][0]["value"] for entry in written["inputs"]] == ["2400", "10", "2400", "8"]
    out = replay_data(written)
    drain, formula = out["extraMetrics"]
    assert (drain["kind"], drain["proposedReplicas"], drain["value"]) == ("drainTime", 8, 240.0)
    assert drain["inputs"] == {"backlog": 2400.0, "processingRate": 10.0}
    assert drain["explanation"] == (
        "drain time: backlog 2400, processing 10/s by 4 ready pods (2.5/s per replica), drained in 240 s against "
        "a target of 120 s: ceil(2400 / (2.5/s x 120 s)) = 8"
    )
    assert (formula["proposedReplicas"], formula["value"], formula["inputs"]) == (
        15,
        300.0,
        {"queue_depth": 2400.0, "consumers": 8.0},
    )
    assert (out["metricProposal"], out["proposingMetric"]) == (15, "formula queue_depth / max(consumers, 1)")
    assert out["desiredReplicas"] == 8  # the legacy scale-up limit: twice the count
    assert drain["explanation"] in out["summary"] and formula["explanation"] in out["summary"]


@pytest.mark.parametrize(
    ("inputs", "problem"),
    [
        pytest.param(None, ("inputs", "has 0 entries but the spec has 4 inputs (drainTime.backlog, "
                                      "drainTime.processingRate, formula.inputs[0], formula.inputs[1])"),
                     id="missing"),
        pytest.param([{"error": "x"}] * 3 + [{"items": [{"value": "5 apples"}]}],
                     ("inputs[3].items[0].value", "is not a Kubernetes quantity"), id="a bad reading"),
    ],
)  # fmt: skip
def test_a_snapshot_without_its_inputs_is_refused_naming_the_field(inputs: Any, problem: tuple[str, str]) -> None:
    autoscaler = load()
    written = snapshot_json(
        name="worker",
        namespace="jobs",
        spec_model=autoscaler.model,
        scale=core.Scale(4, 4, "app=worker"),
        pods=(),
        metrics=(),
        state=core.BehaviorState(),
        settings=core.Settings(),
        now=NOW,
    )
    if inputs is not None:
        written["inputs"] = inputs
    with pytest.raises(SpecError) as caught:
        load_snapshot(written)
    path, message = caught.value.problems[0]
    assert path == problem[0] and problem[1] in message
