"""The label-selector strings the Kubernetes layer works with: parsed as the API server parses them, and a
workload's selector written as the API server writes it into /scale (so a cached scale equals a read one)."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.labels import SelectorSyntaxError, parse_selector
from autoscaler.core.types import ObjectReference
from autoscaler.kube.cache import workload_scale
from autoscaler.kube.client import KubeClient
from autoscaler.kube.scale import ScaleClient
from tests.kube.conftest import NS, Setup

LABELS = {"app": "web", "tier": "front", "version": "3"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        pytest.param("", True, id="empty matches everything"),
        pytest.param("app=web", True, id="equality"),
        pytest.param("app==web", True, id="double equals"),
        pytest.param("app=api", False, id="equality mismatch"),
        pytest.param("app=", False, id="empty value: only the empty label matches"),
        pytest.param("app!=api", True, id="inequality"),
        pytest.param("missing!=x", True, id="inequality on an absent key"),
        pytest.param("tier in (front, back)", True, id="in"),
        pytest.param("tier in ()", False, id="in the empty value"),
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


@pytest.mark.parametrize("bad", ["=web", "app=we b", "version>x", "a b", "tier in (a"])
def test_invalid_selector(bad: str) -> None:
    with pytest.raises(SelectorSyntaxError):
        parse_selector(bad)


SELECTOR = {
    "matchLabels": {"tier": "front", "app": "web"},
    "matchExpressions": [
        {"key": "env", "operator": "In", "values": ["prod", "canary"]},
        {"key": "debug", "operator": "DoesNotExist"},
    ],
}


def _deployment(selector: dict[str, Any]) -> dict[str, Any]:
    labels = {"app": "web", "tier": "front", "env": "prod"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {
            "replicas": 2,
            "selector": selector,
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "a:1"}]}},
        },
    }


def test_cached_scale_selector_is_the_one_scale_reports(kube: KubeClient, setup: Setup) -> None:
    """The workload cache derives the same status.selector string that GET /scale answers."""
    created = setup.post(f"/apis/apps/v1/namespaces/{NS}/deployments", _deployment(SELECTOR))
    read = ScaleClient(kube).read_scale(NS, ObjectReference("Deployment", "web", api_version="apps/v1"))
    expected = "app=web,!debug,env in (canary,prod),tier=front"
    assert workload_scale(created).scale.selector == read.scale.selector == expected


def test_workload_with_an_invalid_selector_is_unreadable() -> None:
    """A ValueError naming the workload, which the informer logs and leaves out of the cache."""
    bad = _deployment({"matchExpressions": [{"key": "env", "operator": "Equals", "values": ["a"]}]})
    with pytest.raises(ValueError, match=r"Deployment shop/web: spec.selector: .*'Equals' is not a valid"):
        workload_scale(bad)
