"""The label-selector grammar of k8s.io/apimachinery/pkg/labels, and field selectors, parsed and matched."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from autoscaler.core.labels import format_label_selector, parse_selector
from autoscaler.sim.apiserver.selectors import (
    SelectorError,
    matches_label_selector,
    parse_field_selector,
    parse_label_selector,
    path_getter,
)
from tests.core.test_labels import LABELS as LABEL_SETS
from tests.core.test_labels import SELECTORS
from tests.sim.conftest import NS, Raw, workload

LABELS = {"app": "web", "tier": "front", "version": "3", "track": ""}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        pytest.param("", True, id="empty selects everything"),
        pytest.param("app=web", True, id="equals"),
        pytest.param("app==web", True, id="double equals"),
        pytest.param("app!=web", False, id="not equals"),
        pytest.param("missing!=x", True, id="not equals holds for an absent key"),
        pytest.param("app in (api, web)", True, id="in"),
        pytest.param("app notin (api,web)", False, id="notin"),
        pytest.param("missing notin (x)", True, id="notin holds for an absent key"),
        pytest.param("tier", True, id="exists"),
        pytest.param("!tier", False, id="does not exist"),
        pytest.param("!missing", True, id="does not exist, absent"),
        pytest.param("track=", True, id="empty value"),
        pytest.param("version>2", True, id="greater than"),
        pytest.param("version<3", False, id="less than"),
        pytest.param("app=web,tier=front,!missing", True, id="all requirements must hold"),
        pytest.param("app=web,tier=back", False, id="one failing requirement fails"),
        pytest.param("app in (web,),tier", True, id="empty value inside a set"),
        pytest.param("track in ()", True, id="an empty set is the set of the empty value, as labels.Parse reads it"),
        pytest.param("app in ()", False, id="the empty value only"),
        pytest.param("example.com/team notin (a)", True, id="prefixed key"),
    ],
)
def test_label_selector_matches(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param("app in web", id="set without parentheses"),
        pytest.param("app=web,", id="trailing comma"),
        pytest.param("app = we b", id="two values"),
        pytest.param("-app=web", id="key starting with a dash"),
        pytest.param("app=web!", id="invalid value"),
        pytest.param("app>x", id="non-integer bound"),
        pytest.param("app>-1", id="a negative bound (not a label value)"),
        pytest.param("app>+1", id="a signed bound (not a label value)"),
        pytest.param("a" * 64 + "=x", id="key too long"),
        pytest.param("app=(web)", id="parenthesis as a value"),
        pytest.param("!app=web", id="operator after not"),
        pytest.param("app in (a", id="unclosed set"),
        pytest.param("Example.com/app=x", id="upper-case prefix"),
    ],
)
def test_invalid_label_selectors_raise(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_label_selector(selector)


@given(selector=SELECTORS, labels=LABEL_SETS)
def test_emulator_parses_what_the_api_server_writes_as_the_core_does(
    selector: dict[str, Any], labels: dict[str, str]
) -> None:
    """The emulator's `?labelSelector=` parser and the core's agree on every /scale selector string."""
    text = format_label_selector(selector)
    expected = matches_label_selector(selector, labels)
    assert parse_label_selector(text).matches(labels) is expected
    assert parse_selector(text).matches(labels) is expected


def test_workload_with_an_invalid_selector_operator_is_invalid(raw: Raw) -> None:
    """422 naming spec.selector, as the real server's validation answers (not a 500)."""
    manifest: dict[str, Any] = workload("Deployment", "web")
    manifest["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}
    code, body = raw.request("POST", f"/apis/apps/v1/namespaces/{NS}/deployments", manifest)
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "spec.selector"
    assert "'Equals' is not a valid label selector operator" in body["message"]


def test_field_selector_supports_only_declared_fields() -> None:
    getters = {"metadata.name": path_getter("metadata", "name")}
    (requirement,) = parse_field_selector("metadata.name!=web", getters)
    assert (requirement.field, requirement.equal, requirement.value) == ("metadata.name", False, "web")
    with pytest.raises(SelectorError, match=r"field label not supported: spec\.nodeName"):
        parse_field_selector("spec.nodeName=n1", getters)
