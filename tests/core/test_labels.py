"""The label-selector grammar of labels.Parse (what parses, what matches, what is refused) and the string the
API server writes for a LabelSelector object (metav1.LabelSelectorAsSelector(selector).String())."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autoscaler.core.labels import (
    SelectorSyntaxError,
    _parsed,
    format_label_selector,
    parse_selector,
    selector_from_object,
)


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "web", "x": "y"}, True),
        ("app=web", {"app": "api"}, False),
        ("app=", {"app": ""}, True),
        ("app=", {"app": "web"}, False),
        ("app!=web", {"app": "api"}, True),
        ("app!=web", {}, True),
        ("tier in (a, b)", {"tier": "b"}, True),
        ("tier in (a,b)", {"tier": "c"}, False),
        ("tier in ()", {"tier": ""}, True),
        ("tier in ()", {"tier": "a"}, False),
        ("tier in (,a)", {"tier": ""}, True),
        ("tier notin (a,b)", {}, True),
        ("tier notin (a,b)", {"tier": "a"}, False),
        ("canary", {"canary": ""}, True),
        ("!canary", {"canary": "yes"}, False),
        ("app=web,tier in (a,b),!legacy", {"app": "web", "tier": "a"}, True),
        ("example.com/team=core", {"example.com/team": "core"}, True),
        ("gen>3", {"gen": "4"}, True),
        ("gen<3", {"gen": "4"}, False),
        ("", {"anything": "goes"}, True),
    ],
)
def test_matching(selector: str, labels: dict[str, str], matches: bool) -> None:
    assert parse_selector(selector).matches(labels) is matches


@pytest.mark.parametrize(
    "selector",
    [
        "=web", "app=web,", "tier in (a", "a b", "app=we b", "-app=web", "app=web!", "gen>x",
        # Gt/Lt: the value must parse as an int64 and be a label value, so digits only.
        "gen>+1", "gen>-1", "gen>1_000", "gen<99999999999999999999",
    ],
)  # fmt: skip
def test_invalid_selectors_are_refused(selector: str) -> None:
    with pytest.raises(SelectorSyntaxError):
        parse_selector(selector)


def test_a_selector_is_parsed_once_and_a_bad_one_each_time() -> None:
    """The memo of parsed selectors: the same text gives the same parsed selector (no second parse); a text that
    does not parse raises every time it is asked for, with its message (errors are not kept)."""
    assert parse_selector("app=memo,tier in (a,b)") is parse_selector("app=memo,tier in (a,b)")
    kept = _parsed.cache_info().currsize
    for _ in range(2):
        with pytest.raises(SelectorSyntaxError, match="unbalanced"):
            parse_selector("tier in (a")
    assert _parsed.cache_info().currsize == kept, "an error is not kept"


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)} if values else {"key": key, "operator": operator}


# The strings kube-apiserver writes into /scale's status.selector (pkg/labels Requirement.String and
# internalSelector.String over metav1.LabelSelectorAsSelector).
@pytest.mark.parametrize(
    ("selector", "text"),
    [
        pytest.param(None, "", id="no selector (labels.Nothing) prints empty"),
        pytest.param({}, "", id="empty selector (labels.Everything) prints empty"),
        pytest.param({"matchLabels": {}, "matchExpressions": []}, "", id="empty lists print empty"),
        pytest.param({"matchLabels": {"app": "web"}}, "app=web", id="one label"),
        pytest.param({"matchLabels": {"tier": "front", "app": "web"}}, "app=web,tier=front", id="labels by key"),
        pytest.param({"matchLabels": {"app": ""}}, "app=", id="empty label value"),
        pytest.param({"matchExpressions": [_expr("env", "In", "prod")]}, "env in (prod)", id="In, one value"),
        pytest.param(
            {"matchExpressions": [_expr("env", "In", "prod", "dev")]}, "env in (dev,prod)", id="In, values sorted"
        ),
        pytest.param(
            {"matchExpressions": [_expr("env", "NotIn", "b", "a")]}, "env notin (a,b)", id="NotIn, values sorted"
        ),
        pytest.param(
            {"matchExpressions": [_expr("env", "In", "b", "a", "b")]}, "env in (a,b,b)", id="duplicate values kept"
        ),
        pytest.param({"matchExpressions": [_expr("env", "In", "")]}, "env in ()", id="In the empty value"),
        pytest.param({"matchExpressions": [_expr("env", "In", "a", "")]}, "env in (,a)", id="empty value sorts first"),
        pytest.param({"matchExpressions": [_expr("canary", "Exists")]}, "canary", id="Exists"),
        pytest.param({"matchExpressions": [_expr("canary", "DoesNotExist")]}, "!canary", id="DoesNotExist"),
        pytest.param(
            {
                "matchLabels": {"tier": "front", "app": "web"},
                "matchExpressions": [_expr("env", "In", "prod", "dev"), _expr("canary", "DoesNotExist")],
            },
            "app=web,!canary,env in (dev,prod),tier=front",
            id="labels and expressions sorted together by key, ! not counted",
        ),
        pytest.param(
            {"matchLabels": {"app": "web"}, "matchExpressions": [_expr("app", "NotIn", "api"), _expr("app", "Exists")]},
            "app=web,app notin (api),app",
            id="same key: labels first, then expressions in order",
        ),
        pytest.param(
            {"matchLabels": {"app": "x", "Zone": "b", "example.com/team": "core"}},
            "Zone=b,app=x,example.com/team=core",
            id="keys sorted by bytes: upper case first",
        ),
    ],
)
def test_format_label_selector_as_the_api_server(selector: dict[str, Any] | None, text: str) -> None:
    assert format_label_selector(selector) == text


@pytest.mark.parametrize(
    ("selector", "words"),
    [
        pytest.param({"matchExpressions": [_expr("env", "Equals", "a")]}, "'Equals' is not a valid", id="operator"),
        pytest.param({"matchExpressions": [_expr("env", "In")]}, "must not be empty", id="In without values"),
        pytest.param({"matchExpressions": [_expr("env", "Exists", "a")]}, "must be empty", id="Exists with values"),
        pytest.param({"matchLabels": {"-app": "web"}}, "invalid label key '-app'", id="key"),
        pytest.param({"matchLabels": {"app": "we b"}}, "invalid label value 'we b'", id="value"),
        pytest.param({"matchLabels": {"app": 3}}, "must be strings", id="label value not a string"),
        pytest.param({"matchExpressions": [{"operator": "Exists"}]}, "matchExpressions[0].key", id="no key"),
        pytest.param({"matchExpressions": {"key": "a"}}, "matchExpressions: must be a list", id="not a list"),
    ],
)
def test_invalid_selector_objects_are_refused(selector: dict[str, Any], words: str) -> None:
    with pytest.raises(SelectorSyntaxError, match=words.replace("[", r"\[").replace("]", r"\]")):
        format_label_selector(selector)


KEYS = st.sampled_from(["app", "tier", "Zone", "example.com/team", "a-b.c_d"])
VALUES = st.sampled_from(["", "web", "api", "a.b", "x-1", "Z"])
EXPRESSIONS = st.one_of(
    st.builds(_expr, KEYS, st.sampled_from(["Exists", "DoesNotExist"])),
    st.builds(
        lambda key, op, values: _expr(key, op, *values),
        KEYS,
        st.sampled_from(["In", "NotIn"]),
        st.lists(VALUES, min_size=1, max_size=3),
    ),
)
SELECTORS = st.fixed_dictionaries(
    {}, optional={"matchLabels": st.dictionaries(KEYS, VALUES, max_size=3), "matchExpressions": st.lists(EXPRESSIONS)}
)
LABELS = st.dictionaries(KEYS, VALUES, max_size=5)


def _reference_matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """The LabelSelector's meaning, written straight from the API reference, without any string."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, op, values = expression["key"], expression["operator"], expression.get("values", [])
        holds = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not holds:
            return False
    return True


@given(selector=SELECTORS, labels=LABELS)
def test_formatted_selector_parses_back_to_the_same_meaning(selector: dict[str, Any], labels: dict[str, str]) -> None:
    """format -> labels.Parse selects exactly the pods the object selects (what the HPA relies on)."""
    expected = _reference_matches(selector, labels)
    assert parse_selector(format_label_selector(selector)).matches(labels) is expected
    assert selector_from_object(selector).matches(labels) is expected
