"""Watch-fed caches: list, then watch from the list's resourceVersion, relist on 410, clean stop."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from autoscaler.core.types import ObjectReference
from autoscaler.kube.cache import PodCache, WorkloadCache
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import Expired, RequestContext, Unavailable
from autoscaler.kube.scale import ScaleClient
from autoscaler.sim.apiserver import EmulatedApiServer
from tests.kube.conftest import NS, Setup, client_for


def eventually(check: Callable[[], bool], *, timeout: float = 5.0) -> None:
    """Poll `check` until it holds or the deadline passes (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.02)


def test_pod_cache_lists_then_follows_the_watch(kube: KubeClient, setup: Setup, server: Any) -> None:
    setup.pod("web-1", labels={"app": "web"})
    cache = PodCache(kube, watch_timeout_seconds=30)
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        assert cache.has_synced()
        assert [p.name for p in cache.pods(NS, "app=web")] == ["web-1"]

        setup.pod("web-2", labels={"app": "web"})
        setup.pod("api-1", labels={"app": "api"})
        eventually(lambda: {p.name for p in cache.pods(NS, "app=web")} == {"web-1", "web-2"})
        eventually(lambda: [p.name for p in cache.pods(NS, "app=api")] == ["api-1"])

        setup.delete(f"/api/v1/namespaces/{NS}/pods/web-1")
        eventually(lambda: [p.name for p in cache.pods(NS, "app=web")] == ["web-2"])
        assert cache.pods("elsewhere", "app=web") == ()
        assert cache.informer.stats.lists == 1
    finally:
        started = time.monotonic()
        cache.stop()
        assert time.monotonic() - started < 2.0
    assert not [t for t in threading.enumerate() if t.name.startswith("informer-")], "stop() ends the thread"
    lists = server.audit.records(verb="list", resource="pods", user_agent=kube.settings.user_agent)
    assert len(lists) == 1
    # A watch is recorded when it ends; the server notices the closed connection at its next bookmark.
    eventually(lambda: len(server.audit.records(verb="watch", resource="pods")) >= 1)


def test_a_410_on_the_watch_makes_the_cache_list_again(kube: KubeClient, setup: Setup, server: Any) -> None:
    setup.pod("web-1", labels={"app": "web"})
    cache = PodCache(kube, namespace=NS, watch_timeout_seconds=1)
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        eventually(lambda: cache.informer.stats.watches >= 1)
        # The watch ends after 1 s; the next GET (the re-watch) is answered 410 Gone.
        server.faults.add(rf"/api/v1/namespaces/{NS}/pods$", method="GET", status=410, times=1)
        eventually(lambda: cache.informer.stats.lists == 2, timeout=8)
        assert cache.informer.stats.expired == 1
        setup.pod("web-2", labels={"app": "web"})
        eventually(lambda: {p.name for p in cache.pods(NS, "app=web")} == {"web-1", "web-2"})
    finally:
        cache.stop()
    lists = server.audit.records(verb="list", resource="pods", user_agent=kube.settings.user_agent)
    assert len(lists) == 2


def test_watch_timeouts_rewatch_from_the_last_resource_version(kube: KubeClient, setup: Setup) -> None:
    setup.pod("web-1", labels={"app": "web"})
    cache = PodCache(kube, namespace=NS, watch_timeout_seconds=1)
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        eventually(lambda: cache.informer.stats.watches >= 2, timeout=8)
        setup.pod("web-2", labels={"app": "web"})
        eventually(lambda: len(cache.pods(NS, "app=web")) == 2)
        assert cache.informer.stats.lists == 1
    finally:
        cache.stop()


def test_workload_cache_derives_scales(kube: KubeClient, setup: Setup) -> None:
    setup.workload("deployments", "web", replicas=2)
    setup.workload("statefulsets", "db", replicas=3)
    cache = WorkloadCache(kube, watch_timeout_seconds=30)
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        web = cache.scale(NS, "Deployment", "web")
        assert web is not None
        assert (web.scale.spec_replicas, web.scale.selector) == (2, "app=web")
        db = cache.scale(NS, "StatefulSet", "db")
        assert db is not None and db.scale.spec_replicas == 3
        setup.patch(f"/apis/apps/v1/namespaces/{NS}/deployments/web/scale", {"spec": {"replicas": 6}})

        def web_replicas() -> int:
            cached = cache.scale(NS, "Deployment", "web")
            return cached.scale.spec_replicas if cached else -1

        eventually(lambda: web_replicas() == 6)
    finally:
        cache.stop()


def test_an_error_event_410_in_the_stream_is_expired(kube: KubeClient) -> None:
    """A real API server answers a too-old resourceVersion with 200 and one ERROR event carrying 410."""
    cache = PodCache(kube, namespace=NS)
    context = RequestContext(verb="watch", resource="pods", namespace=NS)
    with pytest.raises(Expired):
        cache.informer._apply({"type": "ERROR", "object": {"kind": "Status", "code": 410}}, context)
    with pytest.raises(Unavailable):
        cache.informer._apply({"type": "ERROR", "object": {"kind": "Status", "code": 500}}, context)
    cache.informer._apply({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "42"}}}, context)
    assert cache.informer.resource_version == "42"


def test_a_compacted_history_makes_the_cache_list_again() -> None:
    """The real thing: a watch from a resourceVersion older than the server's history meets 410 Expired."""
    from tests.kube.conftest import Setup

    # No bookmarks, so the cache's resourceVersion stays behind the compaction.
    with EmulatedApiServer(namespaces=("default", NS), emit_events=False, bookmark_interval_seconds=3600) as srv:
        setup = Setup(srv.url)
        setup.pod("web-1", labels={"app": "web"})
        cache = PodCache(client_for(srv.url), namespace=NS, watch_timeout_seconds=1)
        cache.start()
        try:
            assert cache.wait_for_sync(5)
            setup.workload("deployments", "other", replicas=0)  # moves the server's resourceVersion on
            srv.compact()
            eventually(lambda: cache.informer.stats.lists == 2, timeout=8)
            assert cache.informer.stats.expired == 1
            setup.pod("web-2", labels={"app": "web"})
            eventually(lambda: len(cache.pods(NS, "app=web")) == 2)
        finally:
            cache.stop()


def test_bookmarks_move_the_resource_version_on(kube: KubeClient, setup: Setup) -> None:
    cache = PodCache(kube, namespace=NS, watch_timeout_seconds=30)
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        elsewhere = setup.pod("api-1", labels={"app": "api"}, ns="ops")
        rv = elsewhere["metadata"]["resourceVersion"]
        eventually(lambda: int(cache.informer.resource_version) >= int(rv))
        assert cache.pods("ops", "app=api") == ()
    finally:
        cache.stop()


def test_the_list_is_read_in_pages(kube: KubeClient, setup: Setup, server: Any) -> None:
    for i in range(7):
        setup.pod(f"web-{i}", labels={"app": "web"})
    cache = PodCache(kube, namespace=NS, watch_timeout_seconds=30, page_size=3)
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        assert len(cache.pods(NS, "app=web")) == 7
        assert cache.informer.stats.lists == 1
    finally:
        cache.stop()
    pages = server.audit.records(verb="list", resource="pods", user_agent=kube.settings.user_agent)
    assert len(pages) == 3
    assert all("limit=3" in r.query for r in pages)


def test_the_pods_of_a_scaled_deployment_follow_its_scale(kube: KubeClient, setup: Setup) -> None:
    """The daemon's read path: /scale gives the selector, the pod cache gives the pods it selects."""
    setup.workload("deployments", "web", replicas=2)
    setup.workload("deployments", "api", replicas=1)
    ref = ObjectReference(kind="Deployment", name="web", api_version="apps/v1")
    scales = ScaleClient(kube)
    cache = PodCache(kube, watch_timeout_seconds=30)
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        selector = scales.read_scale(NS, ref).scale.selector
        eventually(lambda: sum(p.is_ready for p in cache.pods(NS, selector)) == 2, timeout=10)
        scales.write_scale(NS, ref, lambda scale: 4)
        eventually(lambda: sum(p.is_ready for p in cache.pods(NS, selector)) == 4, timeout=10)
        assert all(p.labels["app"] == "web" for p in cache.pods(NS, selector))
    finally:
        cache.stop()


def _pod_informer() -> Any:
    """A pod informer that is never started: the test applies its events by hand."""
    from autoscaler.kube.informer import Informer, ListWatch
    from autoscaler.kube.pods import pod_from_json

    return Informer(
        None,  # type: ignore[arg-type]
        ListWatch(lambda: None, (), RequestContext(verb="list", resource="pods")),
        transform=pod_from_json,
        labels_of=lambda pod: pod.labels,
    )


def test_the_label_index_follows_a_pod_relabelled_and_deleted() -> None:
    """The index keeps no copy of each object's labels: a relabelled pod leaves its old entries (found from the
    stored object), and a deleted one leaves none behind."""
    from autoscaler.core.labels import parse_selector

    informer = _pod_informer()
    context = RequestContext(verb="watch", resource="pods")

    def event(kind: str, labels: dict[str, str], version: str) -> dict[str, Any]:
        meta = {"name": "p", "namespace": NS, "labels": labels, "resourceVersion": version}
        return {"type": kind, "object": {"metadata": meta, "status": {"phase": "Running"}}}

    def names(selector: str) -> list[str]:
        return [pod.name for pod in informer.select(NS, parse_selector(selector))]

    informer._apply(event("ADDED", {"app": "a", "tier": "web"}, "1"), context)
    assert names("app=a") == ["p"] and names("app=b") == []
    informer._apply(event("MODIFIED", {"app": "a", "tier": "web"}, "2"), context)  # same labels
    assert names("app=a,tier=web") == ["p"]
    informer._apply(event("MODIFIED", {"app": "b"}, "3"), context)
    assert names("app=a") == [] and names("tier=web") == [] and names("app=b") == ["p"]
    informer._apply(event("DELETED", {"app": "b"}, "4"), context)
    assert names("app=b") == [] and informer._index == {NS: {}}


@pytest.mark.parametrize("seed", range(5))
def test_the_label_index_answers_as_a_scan_does_through_adds_relabels_and_deletes(seed: int) -> None:
    """Label pairs shared by a few pods keep their names in a tuple, by many (past SMALL_NAMES) in a dict: either
    way, after any sequence of events, a selector finds exactly the pods a scan of the store finds."""
    import random

    from autoscaler.core.labels import parse_selector
    from autoscaler.kube.informer import SMALL_NAMES

    informer = _pod_informer()
    context = RequestContext(verb="watch", resource="pods")
    rng = random.Random(seed)
    pods = [f"p{i}" for i in range(3 * SMALL_NAMES)]
    selectors = [parse_selector(s) for s in ("app=a", "app=b", "app=a,tier=web", "tier in (web,db)", "app=c")]
    for version in range(1, 600):
        name = rng.choice(pods)
        labels = {"app": rng.choice("aab")} | ({"tier": rng.choice(["web", "db"])} if rng.random() < 0.5 else {})
        kind = "DELETED" if rng.random() < 0.2 else rng.choice(["ADDED", "MODIFIED"])
        meta = {"name": name, "namespace": NS, "labels": labels, "resourceVersion": str(version)}
        informer._apply({"type": kind, "object": {"metadata": meta, "status": {"phase": "Running"}}}, context)
        if version % 7 == 0:
            stored = informer.items(NS)
            for selector in selectors:
                found = sorted(pod.name for pod in informer.select(NS, selector))
                assert found == sorted(pod.name for pod in stored if selector.matches(pod.labels)), (version, selector)
    sizes = {len(names) for names in informer._index[NS].values()}
    assert max(sizes) > SMALL_NAMES  # the dict form was reached too
