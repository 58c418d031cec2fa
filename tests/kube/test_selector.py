"""The label-selector string grammar the pod cache evaluates in memory, as the API server parses it."""

from __future__ import annotations

import pytest

from autoscaler.core.labels import SelectorSyntaxError, parse_selector
from autoscaler.kube.cache import format_label_selector

LABELS = {"app": "web", "tier": "front", "version": "3"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        pytest.param("", True, id="empty matches everything"),
        pytest.param("app=web", True, id="equality"),
        pytest.param("app==web", True, id="double equals"),
        pytest.param("app=api", False, id="equality mismatch"),
        pytest.param("app!=api", True, id="inequality"),
        pytest.param("missing!=x", True, id="inequality on an absent key"),
        pytest.param("tier in (front, back)", True, id="in"),
        pytest.param("tier notin (front)", False, id="notin"),
        pytest.param("missing notin (x)", True, id="notin on an absent key"),
        pytest.param("app", True, id="exists"),
        pytest.param("!app", False, id="does not exist"),
        pytest.param("!canary", True, id="does not exist, absent"),
        pytest.param("version>2", True, id="greater than"),
        pytest.param("version<2", False, id="less than"),
        pytest.param("app=web,tier in (front,back),!canary", True, id="conjunction"),
        pytest.param("app=web,tier=back", False, id="conjunction with one miss"),
    ],
)
def test_selector_matches(selector: str, matches: bool) -> None:
    assert parse_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize("bad", ["app=", "=web", "tier in ()", "app=we b", "version>x", "a b"])
def test_invalid_selector(bad: str) -> None:
    if bad == "app=":
        # An empty value is valid: "app=" selects pods whose label app is the empty string.
        assert not parse_selector(bad).matches(LABELS)
        return
    with pytest.raises(SelectorSyntaxError):
        parse_selector(bad)


def test_format_label_selector_round_trips_through_the_parser() -> None:
    obj = {
        "matchLabels": {"tier": "front", "app": "web"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "canary"]},
            {"key": "debug", "operator": "DoesNotExist"},
        ],
    }
    text = format_label_selector(obj)
    assert text == "app=web,tier=front,env in (canary,prod),!debug"
    assert parse_selector(text).matches({"app": "web", "tier": "front", "env": "prod"})
