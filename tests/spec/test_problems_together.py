"""A spec with several wrong fields gets every problem at once, as the API server reports them.

Each case lists the exact field paths reported, in order, through the three ways in: `replay` of a snapshot
holding the object, the spec-file loader, and `autoscaler check` (its command function, on a file); the CRD
applied offline (tests/spec/crd_schema.py) names the same fields but where a case says otherwise. A value
of the right type that breaks its field's rule is reported with every problem of the rules that span
fields; a value that does not decode stops those rules; a rule that needs the value of a field with a
problem of its own is not checked, so it adds no second problem. docs/spec.md ("How problems are reported")
says the same in words.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.cli import check
from autoscaler.spec.errors import SpecError
from autoscaler.spec.hpa import to_core
from autoscaler.spec.validation import load_spec
from tests.spec.crd_schema import crd_problems
from tests.spec.specs import (
    CONTAINER_METRIC,
    DELETE,
    EXTERNAL_TARGET,
    PODS_TARGET,
    RESOURCE_TARGET,
    Mutation,
    apply,
    at,
    base,
    check_problems,
    replay_problems,
)

EXTERNAL_METRIC = base()["spec"]["metrics"][2]
RESOURCE_METRIC = base()["spec"]["metrics"][0]
MAX_BELOW_MIN = (at("spec.minReplicas", 5), at("spec.maxReplicas", 4))
WINDOW = "spec.behavior.scaleDown.stabilizationWindowSeconds"


def case(name: str, *mutations: Mutation, reported: tuple[str, ...], crd: tuple[str, ...] | None = None) -> Any:
    """`reported`: the paths the spec layer names, in order; `crd`: the CRD's, where they differ (a set)."""
    return pytest.param(mutations, reported, frozenset(reported if crd is None else crd), id=name)


# The API server skips a custom resource's CEL rules (the CRD's rules across fields) after an enum or a
# required-field error too, and runs them after an integer beyond int32 or a string that is not a quantity,
# which a custom resource's schema checks as a bound and a pattern (docs/spec.md).


# fmt: off
CASES = [
    # Validation failures of single fields, reported with the rules that span fields.
    case("the issue's example: a window over 3600, maxReplicas below minReplicas, a Resource metric's Value target",
         *MAX_BELOW_MIN, at(RESOURCE_TARGET, {"type": "Value", "value": "500m"}),
         at(WINDOW, 7200),
         reported=("spec.maxReplicas", "spec.metrics[0].resource.target.type", WINDOW)),
    case("a period of 0, an unknown selectPolicy, an empty policy list, maxReplicas below minReplicas",
         *MAX_BELOW_MIN, at("spec.behavior.scaleUp.policies", []),
         at("spec.behavior.scaleDown.selectPolicy", "Maximum"),
         at("spec.behavior.scaleDown.policies", [{"type": "Pods", "value": 1, "periodSeconds": 0}]),
         reported=("spec.maxReplicas", "spec.behavior.scaleUp.policies", "spec.behavior.scaleDown.selectPolicy",
                   "spec.behavior.scaleDown.policies[0].periodSeconds"),
         crd=("spec.behavior.scaleUp.policies", "spec.behavior.scaleDown.selectPolicy",
              "spec.behavior.scaleDown.policies[0].periodSeconds")),
    case("averageUtilization 0 beside a second member and a Pods metric's Value target",
         at(f"{RESOURCE_TARGET}.averageUtilization", 0), at("spec.metrics.1.resource", RESOURCE_METRIC["resource"]),
         at(PODS_TARGET, {"type": "Value", "value": "5"}),
         reported=("spec.metrics[0].resource.target.averageUtilization", "spec.metrics[1].resource",
                   "spec.metrics[1].pods.target.type")),
    case("bad names beside an External metric's Utilization target",
         at("spec.scaleTargetRef.name", ""), at("spec.metrics.0", CONTAINER_METRIC),
         at("spec.metrics.0.containerResource.container", "Main_App"), at("spec.metrics.1.pods.metric.name", "a/b"),
         at(EXTERNAL_TARGET, {"type": "Utilization", "averageUtilization": 50}),
         reported=("spec.scaleTargetRef.name", "spec.metrics[0].containerResource.container",
                   "spec.metrics[1].pods.metric.name", "spec.metrics[2].external.target.type")),
    case("a non-positive averageValue beside an External target with both value and averageValue",
         at(f"{PODS_TARGET}.averageValue", "0"), at(f"{EXTERNAL_TARGET}.averageValue", "5"),
         reported=("spec.metrics[1].pods.target.averageValue", "spec.metrics[2].external.target.value")),
    case("a quantity too large for 64 bits and a negative tolerance beside maxReplicas below minReplicas",
         *MAX_BELOW_MIN, at(f"{PODS_TARGET}.averageValue", "1e30"), at("spec.behavior.scaleDown.tolerance", "-0.1"),
         reported=("spec.maxReplicas", "spec.metrics[1].pods.target.averageValue",
                   "spec.behavior.scaleDown.tolerance"),
         crd=("spec.maxReplicas", "spec.behavior.scaleDown.tolerance")),  # a pattern cannot bound a magnitude
    case("a missing scaleTargetRef kind and a missing target beside maxReplicas below minReplicas",
         *MAX_BELOW_MIN, at("spec.scaleTargetRef.kind", DELETE), at("spec.metrics.1.pods.target", DELETE),
         reported=("spec.scaleTargetRef.kind", "spec.maxReplicas", "spec.metrics[1].pods.target"),
         crd=("spec.scaleTargetRef.kind", "spec.metrics[1].pods.target")),
    case("minReplicas 0 without an Object or External metric beside a window over 3600",
         at("spec.minReplicas", 0), at("spec.metrics", [RESOURCE_METRIC]), at(WINDOW, 7200),
         reported=("spec.metrics", WINDOW)),
    case("a field set aside still counts as given: averageUtilization 0 with an averageValue is told both",
         at(f"{RESOURCE_TARGET}.averageUtilization", 0), at(f"{RESOURCE_TARGET}.averageValue", "500m"),
         reported=("spec.metrics[0].resource.target.averageValue",
                   "spec.metrics[0].resource.target.averageUtilization")),
    case("a selector's bad key and In without values beside maxReplicas below minReplicas",
         *MAX_BELOW_MIN, at("spec.metrics.1.pods.metric.selector",
                            {"matchExpressions": [{"key": "bad key!", "operator": "In"}]}),
         reported=("spec.maxReplicas", "spec.metrics[1].pods.metric.selector.matchExpressions[0].key",
                   "spec.metrics[1].pods.metric.selector.matchExpressions[0].values")),
    # A field with a problem of its own, read by a rule that spans fields: one problem, not two.
    case("maxReplicas 0 is not also below minReplicas", at("spec.maxReplicas", 0),
         reported=("spec.maxReplicas",)),
    case("minReplicas -1 is not also below the lower bound of 1", at("spec.minReplicas", -1),
         reported=("spec.minReplicas",)),
    case("an averageValue of 0 is given: not also required for an AverageValue target",
         at(f"{PODS_TARGET}.averageValue", "0"), reported=("spec.metrics[1].pods.target.averageValue",)),
    case("an unknown target type: no rule about the field its type needs",
         at(f"{RESOURCE_TARGET}.type", "Percent"), reported=("spec.metrics[0].resource.target.type",)),
    case("an unknown metric type: no rule about its members", at("spec.metrics.0.type", "CheddarCheese"),
         reported=("spec.metrics[0].type",)),
    case("33 metrics with minReplicas 0: not refused for want of an Object metric (the default CPU)",
         at("spec.minReplicas", 0), at("spec.metrics", [EXTERNAL_METRIC] * 33), reported=("spec.metrics",)),
    case("minReplicas 0 and a misspelled metric type: it may have been the External metric",
         at("spec.minReplicas", 0), at("spec.metrics", [RESOURCE_METRIC, {**EXTERNAL_METRIC, "type": "Externel"}]),
         reported=("spec.metrics[1].type",)),
    # Decode failures: the rules that span fields are not checked.
    case("maxReplicas as a string stops the rules that span fields",
         at("spec.minReplicas", 5), at("spec.maxReplicas", "4"), at(RESOURCE_TARGET, {"type": "Value", "value": "5"}),
         reported=("spec.maxReplicas",)),
    case("an unknown field stops them", *MAX_BELOW_MIN, at("spec.maxReplica", 3), reported=("spec.maxReplica",)),
    case("maxReplicas beyond int32 does not decode", at("spec.maxReplicas", 2**31),
         at(RESOURCE_TARGET, {"type": "Value", "value": "5"}), reported=("spec.maxReplicas",),
         crd=("spec.maxReplicas", "spec.metrics[0].resource.target.type")),
    case("a number for an enum does not decode", *MAX_BELOW_MIN, at("spec.behavior.scaleDown.selectPolicy", 1),
         reported=("spec.behavior.scaleDown.selectPolicy",)),
    case("a string that is not a quantity does not decode", *MAX_BELOW_MIN,
         at(f"{PODS_TARGET}.averageValue", "5 cores"), reported=("spec.metrics[1].pods.target.averageValue",),
         crd=("spec.maxReplicas", "spec.metrics[1].pods.target.averageValue")),
    case("a fractional window does not decode", *MAX_BELOW_MIN, at(WINDOW, 2.5), reported=(WINDOW,)),
    case("a value that does not decode: every field's own problem is still listed, no rule that spans fields",
         at("spec.maxReplicas", "ten"), at(f"{PODS_TARGET}.averageValue", "0"),
         at(EXTERNAL_TARGET, {"type": "Utilization", "averageUtilization": 50}),
         reported=("spec.maxReplicas", "spec.metrics[1].pods.target.averageValue")),
]
# fmt: on


def _check_command(obj: dict[str, Any], tmp_path: Path) -> list[tuple[str, str]]:
    """`autoscaler check` on the object written as a file: the (field, message) of each problem line."""
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(obj))
    out = io.StringIO()
    status = check([str(path)], gates={}, new=False, out=out)
    *lines, summary = out.getvalue().splitlines()
    assert (status, summary) == (1 if lines else 0, f"{0 if lines else 1} of 1 autoscaler(s) valid")
    where = f"{path}: document 1 (PrometheusAutoscaler shop/web): "
    assert all(line.startswith(where) for line in lines), lines
    fields_and_messages = [line.removeprefix(where).split(": ", 1) for line in lines]
    return [(field, message) for field, message in fields_and_messages]


@pytest.mark.parametrize(("mutations", "reported", "crd"), CASES)
def test_every_problem_is_reported_at_once_and_once_each(
    mutations: tuple[Mutation, ...], reported: tuple[str, ...], crd: frozenset[str], tmp_path: Path
) -> None:
    obj = apply(mutations)
    loader = check_problems(obj, new=False)
    assert [path for path, _ in loader] == list(reported)
    assert all(message for _, message in loader)
    assert replay_problems(obj) == loader
    assert _check_command(obj, tmp_path) == loader
    assert {path for path, _ in crd_problems(obj)} == crd


def test_the_issues_example_reads_as_the_api_server_would_report_it(tmp_path: Path) -> None:
    """The rule of each problem, in the order of the spec's fields."""
    obj = apply([*MAX_BELOW_MIN, at(RESOURCE_TARGET, {"type": "Value", "value": "500m"}), at(WINDOW, 7200)])
    assert _check_command(obj, tmp_path) == [
        ("spec.maxReplicas", "must be greater than or equal to `minReplicas` (4 < 5)"),
        (
            "spec.metrics[0].resource.target.type",
            "a Resource metric takes a Utilization or AverageValue target, not Value",
        ),
        (WINDOW, "Input should be less than or equal to 3600, not 7200"),
    ]


def test_problems_come_in_field_order_with_list_items_by_index() -> None:
    """Fields as the spec declares them, metrics[10] after metrics[2], whatever order the file has."""
    pods = base()["spec"]["metrics"][1]
    obj = apply(
        [
            at("spec.metrics", [copy.deepcopy(pods) for _ in range(12)]),
            at("spec.metrics.10.pods.target.averageValue", "0"),
            at("spec.metrics.2.pods.target", {"type": "Value", "value": "5"}),
            at(WINDOW, 7200),
            *MAX_BELOW_MIN,
            at("spec.scaleTargetRef.name", ""),
        ]
    )
    obj["spec"] = dict(reversed(obj["spec"].items()))  # behavior first in the file
    assert [path for path, _ in replay_problems(obj)] == [
        "spec.scaleTargetRef.name",
        "spec.maxReplicas",
        "spec.metrics[2].pods.target.type",
        "spec.metrics[10].pods.target.averageValue",
        WINDOW,
    ]


def test_a_new_object_gets_the_rules_of_its_history_with_the_others() -> None:
    """`check --new`: minReplicas 0 without the gate and an apiVersion without a group, with a window over 3600."""
    obj = apply(
        [
            at("spec.minReplicas", 0),
            at("spec.metrics", [EXTERNAL_METRIC]),
            at("spec.scaleTargetRef.apiVersion", "v1"),
            at(WINDOW, 7200),
        ]
    )
    assert [path for path, _ in check_problems(obj, new=True)] == [
        "spec.scaleTargetRef.apiVersion",
        "spec.minReplicas",
        WINDOW,
    ]
    assert [path for path, _ in check_problems(obj, new=False)] == [WINDOW]


def _places(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every field and list item of a spec, as key paths, the spec's own root excluded."""
    children: list[tuple[str | int, Any]] = []
    if isinstance(node, dict):
        children = list(node.items())
    elif isinstance(node, list):
        children = list(enumerate(node))
    places = []
    for key, child in children:
        places += [(*path, key), *_places(child, (*path, key))]
    return places


SPEC = {**base()["spec"], "metrics": [*base()["spec"]["metrics"], CONTAINER_METRIC]}
PLACES = _places(SPEC)
values = st.one_of(
    st.sampled_from([DELETE, None, True, 0, 1, -1, 7200, 2**31, -(2**31) - 1, 10**30, 2.5, "", "0", "x/y", "Maximum"]),
    st.integers(),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["type", "value", "name", "kind"]), st.text(max_size=4), max_size=2),
)


def _has(node: Any, key: str | int) -> bool:
    if isinstance(node, dict):
        return key in node
    return isinstance(node, list) and isinstance(key, int) and key < len(node)


def _change(node: Any, place: tuple[str | int, ...], value: Any) -> None:
    """Set (or, for DELETE, remove) the field or item at `place`, where earlier changes left a place for it."""
    *parents, last = place
    for key in parents:
        if not _has(node, key):
            return
        node = node[key]
    if isinstance(node, dict) and value is DELETE:
        node.pop(last, None)
    elif isinstance(node, dict):
        node[last] = value
    elif _has(node, last):
        node[last : last + 1] = [] if value is DELETE else [value]


@settings(max_examples=300, deadline=None)
@given(changes=st.lists(st.tuples(st.sampled_from(PLACES), values), min_size=1, max_size=6), stored=st.booleans())
def test_any_mix_of_wrong_fields_gets_problems_with_field_paths_never_a_crash(
    changes: list[tuple[tuple[str | int, ...], Any]], stored: bool
) -> None:
    """Whatever fields are wrong together (set aside, missing, undecodable), the answer is problems or a spec."""
    spec = copy.deepcopy(SPEC)
    for place, value in changes:
        _change(spec, place, value)
    try:
        model = load_spec(spec, scale_to_zero=False, stored=stored)
    except SpecError as err:
        assert err.problems
        assert all(path.startswith("spec") and message for path, message in err.problems), err.problems
        assert len(set(err.problems)) == len(err.problems)
    else:
        to_core(model)
