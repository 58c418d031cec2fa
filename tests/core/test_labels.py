"""The label-selector string grammar of labels.Parse: what parses, what matches, what is refused."""

from __future__ import annotations

import pytest

from autoscaler.core.labels import SelectorSyntaxError, parse_selector


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "web", "x": "y"}, True),
        ("app=web", {"app": "api"}, False),
        ("app!=web", {"app": "api"}, True),
        ("app!=web", {}, True),
        ("tier in (a, b)", {"tier": "b"}, True),
        ("tier in (a,b)", {"tier": "c"}, False),
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
    ["app=", "=web", "app=web,", "tier in ()", "tier in (a", "a b", "app=we b", "-app=web", "app=web!", "gen>x"],
)
def test_invalid_selectors_are_refused(selector: str) -> None:
    if selector == "app=":
        # An empty value is valid: app has the empty value.
        assert parse_selector(selector).matches({"app": ""})
        return
    with pytest.raises(SelectorSyntaxError):
        parse_selector(selector)
