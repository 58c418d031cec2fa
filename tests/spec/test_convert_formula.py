"""`autoscaler convert` of a KEDA ScaledObject's `advanced.scalingModifiers` into the spec's `formula`."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.spec.convert import convert
from autoscaler.spec.errors import SpecError
from tests.spec.test_convert import _notices, _valid, scaled_object, trigger


def named(name: str, query: str, **fields: Any) -> dict[str, Any]:
    return trigger(query, name=name, **fields)


def test_scaling_modifiers_become_a_formula_over_the_triggers_it_reads() -> None:
    obj = scaled_object(
        named("queue_depth", "sum(queue_depth)"),
        named("consumers", "sum(kafka_consumers)"),
        named("errors", "sum(rate(errors_total[1m]))"),
        {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "70"}},
        minReplicaCount=1,
        advanced={
            "scalingModifiers": {
                "formula": "queue_depth / max(consumers, 1)",
                "target": "10",
                "metricType": "Value",
                "activationTarget": "5",
            }
        },
    )
    conversion = convert(obj)
    spec = _valid(conversion)["spec"]
    assert spec["formula"] == {
        "inputs": [
            {"name": "queue_depth", "prometheus": {"query": "sum(queue_depth)"}},
            {"name": "consumers", "prometheus": {"query": "sum(kafka_consumers)"}},
        ],
        "expression": "queue_depth / max(consumers, 1)",
        "target": {"type": "Value", "value": "10"},
    }
    # The triggers the formula does not read keep scaling on their own.
    assert [m["type"] for m in spec["metrics"]] == ["External", "Resource"]
    assert spec["metrics"][0]["external"]["metric"]["name"] == "errors"
    notices = _notices(conversion)
    assert notices["spec.advanced.scalingModifiers.activationTarget"] == (
        True,
        "KEDA activates (scales from zero) above it; here a formula is active while its value proposes a replica "
        "(above 0), with no threshold of its own",
    )
    assert notices["spec.advanced.scalingModifiers.formula"][0] is False
    assert "queue_depth, consumers" in notices["spec.advanced.scalingModifiers.formula"][1]


def test_a_formula_reading_every_trigger_leaves_no_metric_and_no_cpu_default() -> None:
    obj = scaled_object(
        named("a", "sum(x)"),
        named("b", "sum(y)"),
        minReplicaCount=0,
        advanced={"scalingModifiers": {"formula": "(a + b) / 2", "target": "3"}},
    )
    spec = _valid(convert(obj))["spec"]
    assert "metrics" not in spec
    assert spec["minReplicas"] == 0
    assert spec["formula"]["target"] == {"type": "AverageValue", "averageValue": "3"}


@pytest.mark.parametrize(
    ("formula", "why"),
    [
        pytest.param("a > 1 ? a : b", "column 3: unexpected character '>'", id="a conditional"),
        pytest.param("a + c", "column 5: unknown name 'c' (the inputs: a, b)", id="a trigger that does not exist"),
        pytest.param("max([a, b])", "column 5: unexpected character '['", id="expr's list syntax"),
    ],
)
def test_a_formula_outside_the_language_is_not_carried_over_with_why(formula: str, why: str) -> None:
    obj = scaled_object(
        named("a", "sum(x)"), named("b", "sum(y)"), advanced={"scalingModifiers": {"formula": formula, "target": "3"}}
    )
    conversion = convert(obj)
    spec = _valid(conversion)["spec"]
    assert "formula" not in spec and len(spec["metrics"]) == 2
    dropped, message = _notices(conversion)["spec.advanced.scalingModifiers"]
    assert dropped and why in message and "one prometheus query" in message


@pytest.mark.parametrize(
    ("modifiers", "field"),
    [
        pytest.param({"target": "3"}, "spec.advanced.scalingModifiers.formula", id="no formula"),
        pytest.param({"formula": "a", "target": "3", "metricType": "Utilization"},
                     "spec.advanced.scalingModifiers.metricType", id="a Utilization type"),
        pytest.param({"formula": "a", "target": "3", "strategy": "x"}, "spec.advanced.scalingModifiers.strategy",
                     id="an unknown field"),
        pytest.param({"formula": "a"}, "spec.advanced.scalingModifiers.target", id="no target"),
    ],
)  # fmt: skip
def test_bad_scaling_modifiers_are_refused_naming_the_field(modifiers: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        convert(scaled_object(named("a", "sum(x)"), advanced={"scalingModifiers": modifiers}))
    assert field in [path for path, _ in caught.value.problems]


def test_an_activation_threshold_of_a_trigger_the_formula_reads_is_named_as_not_carried() -> None:
    obj = scaled_object(
        named("a", "sum(x)", metadata={"activationThreshold": "5"}),
        named("b", "sum(y)", metadata={"activationThreshold": "2"}),
        named("c", "sum(z)"),
        minReplicaCount=0,
        advanced={"scalingModifiers": {"formula": "a + c", "target": "3"}},
    )
    conversion = convert(obj)
    spec = _valid(conversion)["spec"]
    assert spec["metrics"][0]["activationThreshold"] == "2", "b scales on its own and keeps its threshold"
    dropped, why = _notices(conversion)["spec.triggers[0].metadata.activationThreshold"]
    assert dropped and "input of the formula" in why
    assert "spec.triggers[1].metadata.activationThreshold" not in _notices(conversion)
