"""Paged lists: every page of one list comes from the snapshot the first page took (items of that
resourceVersion, each exactly once, whatever is written between pages), through the official client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from autoscaler.sim.apiserver import EmulatedApiServer, FakeClock


def _config_map(name: str, namespace: str, **labels: str) -> k8s.V1ConfigMap:
    return k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name=name, namespace=namespace, labels=labels), data={"k": name})


# "a" and "a-b": as strings "a-b/..." sorts before "a/...", as (namespace, name) pairs after: pages must
# follow the pairs' order or an object is served twice or never.
NAMESPACES = ("a", "a-b", "b")


@pytest.fixture
def paging_server() -> Iterator[EmulatedApiServer]:
    with EmulatedApiServer(clock=FakeClock(), namespaces=("default", *NAMESPACES)) as running:
        yield running


@pytest.fixture
def core(paging_server: EmulatedApiServer) -> Iterator[k8s.CoreV1Api]:
    config = k8s.Configuration(host=paging_server.url)
    with k8s.ApiClient(config) as api:
        yield k8s.CoreV1Api(api)


def _seed(core: k8s.CoreV1Api) -> list[tuple[str, str]]:
    made = []
    for namespace in NAMESPACES:
        for index in range(7):
            name = f"cm-{index}"
            core.create_namespaced_config_map(namespace, _config_map(name, namespace, parity=str(index % 2)))
            made.append((namespace, name))
    return sorted(made)


def _pages(
    core: k8s.CoreV1Api, limit: int, between: object = None, **options: str
) -> tuple[list[tuple[str, str]], set[str]]:
    """Every page of one list (`between(page_number)` runs before each later page); the keys served, and the
    resourceVersions the pages carried."""
    keys, versions = [], set()
    token = None
    page = 0
    while True:
        if token and callable(between):
            between(page)
        kwargs = {"limit": limit, **options}
        if token:
            kwargs["_continue"] = token
        listed = core.list_config_map_for_all_namespaces(**kwargs)
        keys += [(item.metadata.namespace, item.metadata.name) for item in listed.items]
        versions.add(listed.metadata.resource_version)
        token = listed.metadata._continue
        page += 1
        if not token:
            return keys, versions


@pytest.mark.parametrize("limit", [pytest.param(1, id="one-per-page"), pytest.param(4, id="four"),
                                   pytest.param(20, id="one-page"), pytest.param(0, id="unpaged")])  # fmt: skip
def test_every_object_exactly_once_in_order(core: k8s.CoreV1Api, limit: int) -> None:
    made = _seed(core)
    keys, versions = _pages(core, limit)
    assert keys == made
    assert len(versions) == 1


def test_writes_between_pages_do_not_show(core: k8s.CoreV1Api) -> None:
    made = _seed(core)

    def churn(page: int) -> None:
        # Remove an object not yet served, add one before and one after the position reached, change one.
        core.delete_namespaced_config_map("cm-6", "b")
        core.create_namespaced_config_map("a", _config_map(f"cm-0{page}", "a"))
        core.create_namespaced_config_map("b", _config_map(f"cm-9{page}", "b"))
        core.patch_namespaced_config_map("cm-5", "b", {"data": {"k": "changed"}})

    calls: list[int] = []

    def once(page: int) -> None:
        if not calls:
            churn(page)
        calls.append(page)

    keys, versions = _pages(core, 5, between=once)
    assert keys == made  # the snapshot's items: the deleted one still, the added ones not
    assert len(versions) == 1
    after, _ = _pages(core, 0)
    assert ("b", "cm-6") not in after and ("a", "cm-01") in after and ("b", "cm-91") in after


def test_selector_pages(core: k8s.CoreV1Api) -> None:
    made = _seed(core)
    keys, _ = _pages(core, 2, label_selector="parity=1")
    assert keys == [key for key in made if int(key[1][-1]) % 2 == 1]


def test_remaining_item_count(core: k8s.CoreV1Api) -> None:
    _seed(core)
    first = core.list_config_map_for_all_namespaces(limit=5)
    assert first.metadata.remaining_item_count == 21 - 5
    second = core.list_config_map_for_all_namespaces(limit=5, _continue=first.metadata._continue)
    assert second.metadata.remaining_item_count == 21 - 10


def test_continue_after_compaction_is_gone(core: k8s.CoreV1Api, paging_server: EmulatedApiServer) -> None:
    _seed(core)
    first = core.list_config_map_for_all_namespaces(limit=5)
    core.create_namespaced_config_map("a", _config_map("late", "a"))
    paging_server.compact()
    with pytest.raises(ApiException) as caught:
        core.list_config_map_for_all_namespaces(limit=5, _continue=first.metadata._continue)
    assert caught.value.status == 410


def test_continue_rebuilt_when_the_snapshot_was_dropped(core: k8s.CoreV1Api) -> None:
    made = _seed(core)
    first = core.list_config_map_for_all_namespaces(limit=5)
    for index in range(10):  # more paged lists than the snapshots kept: the first one's is evicted
        core.list_config_map_for_all_namespaces(limit=1, label_selector=f"parity!={index}")
    core.delete_namespaced_config_map("cm-6", "b")
    rest, versions = [], set()
    token = first.metadata._continue
    while token:
        listed = core.list_config_map_for_all_namespaces(limit=5, _continue=token)
        rest += [(item.metadata.namespace, item.metadata.name) for item in listed.items]
        versions.add(listed.metadata.resource_version)
        token = listed.metadata._continue
    served = [(item.metadata.namespace, item.metadata.name) for item in first.items] + rest
    assert served == made
    assert versions == {first.metadata.resource_version}


def test_bad_continue_token(core: k8s.CoreV1Api) -> None:
    with pytest.raises(ApiException) as caught:
        core.list_config_map_for_all_namespaces(limit=5, _continue="not-a-token")
    assert caught.value.status == 400
