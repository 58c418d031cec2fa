"""The three patch formats kubectl and the client send, applied as the real server applies them."""

from __future__ import annotations

import pytest

from autoscaler.sim.apiserver.patch import PatchError, json_patch, merge_patch, strategic_merge_patch

POD_SPEC = {
    "containers": [
        {"name": "app", "image": "a:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "s:1"},
    ],
    "tolerations": [{"key": "x"}],
}


def test_merge_patch_merges_objects_deletes_nulls_and_replaces_lists() -> None:
    patched = merge_patch({"a": {"b": 1, "c": 2}, "l": [1, 2]}, {"a": {"b": None, "d": 3}, "l": [3]})
    assert patched == {"a": {"c": 2, "d": 3}, "l": [3]}


def test_json_patch_operations() -> None:
    doc = {"spec": {"replicas": 1, "items": ["a"]}}
    ops = [
        {"op": "test", "path": "/spec/replicas", "value": 1},
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "add", "path": "/spec/items/-", "value": "b"},
        {"op": "copy", "from": "/spec/replicas", "path": "/spec/copy"},
        {"op": "move", "from": "/spec/copy", "path": "/moved"},
        {"op": "remove", "path": "/spec/items/0"},
    ]
    assert json_patch(doc, ops) == {"spec": {"replicas": 4, "items": ["b"]}, "moved": 4}
    assert doc == {"spec": {"replicas": 1, "items": ["a"]}}, "the input is left alone"


def test_json_patch_failed_test_is_unprocessable() -> None:
    with pytest.raises(PatchError) as caught:
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert caught.value.code == 422


def test_strategic_merge_patch_merges_containers_by_name() -> None:
    patch = {"containers": [{"name": "app", "image": "a:2", "env": [{"name": "B", "value": "2"}]}]}
    patched = strategic_merge_patch(POD_SPEC, patch)
    assert [c["name"] for c in patched["containers"]] == ["app", "sidecar"]
    assert patched["containers"][0]["image"] == "a:2"
    assert patched["containers"][0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]


def test_strategic_merge_patch_directives() -> None:
    deleted = strategic_merge_patch(POD_SPEC, {"containers": [{"name": "sidecar", "$patch": "delete"}]})
    assert [c["name"] for c in deleted["containers"]] == ["app"]
    replaced = strategic_merge_patch(POD_SPEC, {"tolerations": [{"key": "y"}]})
    assert replaced["tolerations"] == [{"key": "y"}], "a list without a merge key is replaced"
    ordered = strategic_merge_patch({"a": 1}, {"$setElementOrder/containers": [{"name": "x"}], "b": 2})
    assert ordered == {"a": 1, "b": 2}
