"""The pod cache's label index answers selectors like a scan would, through adds, relabels and deletes."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.labels import parse_selector
from autoscaler.kube.cache import PodCache
from autoscaler.kube.client import ClientSettings, connect
from autoscaler.kube.errors import RequestContext

CTX = RequestContext(verb="watch", resource="pods", namespace="shop")


def event(kind: str, name: str, labels: dict[str, str], rv: int) -> dict[str, Any]:
    return {
        "type": kind,
        "object": {"metadata": {"name": name, "namespace": "shop", "labels": labels, "resourceVersion": str(rv)}},
    }


@pytest.fixture
def cache() -> PodCache:
    # Nothing listens there: these tests feed watch events straight in.
    return PodCache(connect(ClientSettings(server="http://127.0.0.1:1")), namespace="shop")


def names(cache: PodCache, selector: str) -> set[str]:
    return {p.name for p in cache.pods("shop", selector)}


def scan(cache: PodCache, selector: str) -> set[str]:
    sel = parse_selector(selector)
    return {p.name for p in cache.informer.items("shop") if sel.matches(p.labels)}


SELECTORS = ["app=web", "app=web,tier=front", "tier in (front,back)", "app!=web", "!tier", "app", "app=none", ""]


def test_the_index_agrees_with_a_scan(cache: PodCache) -> None:
    apply = cache.informer._apply
    apply(event("ADDED", "a", {"app": "web", "tier": "front"}, 1), CTX)
    apply(event("ADDED", "b", {"app": "web", "tier": "back"}, 2), CTX)
    apply(event("ADDED", "c", {"app": "api"}, 3), CTX)
    for selector in SELECTORS:
        assert names(cache, selector) == scan(cache, selector), selector
    assert names(cache, "app=web,tier=front") == {"a"}

    apply(event("MODIFIED", "a", {"app": "api", "tier": "front"}, 4), CTX)  # relabelled away from web
    assert names(cache, "app=web") == {"b"}
    assert names(cache, "app=api") == {"a", "c"}
    apply(event("DELETED", "b", {"app": "web", "tier": "back"}, 5), CTX)
    assert names(cache, "app=web") == set()
    for selector in SELECTORS:
        assert names(cache, selector) == scan(cache, selector), selector
    assert cache.pods("elsewhere", "app=api") == ()
