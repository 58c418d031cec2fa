"""The API verbs over the store, independent of HTTP: get, list, create, update, patch, delete, and the
/status and /scale subresources. The HTTP layer and the Python API both call these, so a test that sets up
objects in Python gets exactly what a client sending the same request would get.

Each verb takes a resource type, a namespace and a name, and returns the object as served by that type (or
raises `ApiError`). Listing applies label and field selectors, `resourceVersionMatch` and pagination.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from autoscaler.sim.apiserver import errors, patch
from autoscaler.sim.apiserver.clock import Clock
from autoscaler.sim.apiserver.convert import from_storage, to_storage
from autoscaler.sim.apiserver.resources import Registry, ResourceType, from_crd
from autoscaler.sim.apiserver.selectors import (
    LabelSelector,
    SelectorError,
    matches_fields,
    parse_field_selector,
    parse_label_selector,
)
from autoscaler.sim.apiserver.store import Store, clone
from autoscaler.sim.apiserver.strategy import apply_scale, prepare_create, prepare_update, to_scale

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Filter:
    """Parsed `labelSelector` and `fieldSelector` of a list, watch or deletecollection."""

    rtype: ResourceType
    labels: LabelSelector
    fields: tuple[Any, ...]

    @classmethod
    def parse(cls, rtype: ResourceType, label_selector: str = "", field_selector: str = "") -> Filter:
        try:
            labels = parse_label_selector(label_selector)
            fields = parse_field_selector(field_selector, rtype.field_getters)
        except SelectorError as err:
            raise errors.bad_request(str(err)) from err
        return cls(rtype, labels, fields)

    def matches(self, obj: JSON) -> bool:
        meta = obj.get("metadata") or {}
        return self.labels.matches(meta.get("labels") or {}) and matches_fields(
            obj, self.fields, self.rtype.field_getters
        )


def _list_options_invalid(field: str, detail: str) -> errors.ApiError:
    return errors.invalid("meta.k8s.io", "ListOptions", "", [(field, detail)])


def _encode_continue(resource_version: int, last: tuple[str, str]) -> str:
    """A continue token: the list's resourceVersion and the key of the last object served."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": resource_version, "start": f"{last[0]}/{last[1]}"}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        namespace, _, name = str(data["start"]).partition("/")  # namespace names hold no "/"
        return int(data["rv"]), (namespace, name)
    except (ValueError, KeyError, TypeError, binascii.Error) as err:
        raise errors.bad_request(f"continue key is not valid: {err}") from err


def _key(obj: JSON) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


# Paged lists whose snapshot is kept for their next pages; an older one's next page is rebuilt from the history.
_SNAPSHOTS_KEPT = 8


Keys = list[tuple[str, str]]
Objects = list[JSON]


@dataclass(frozen=True, slots=True)
class _View:
    """A list's matching stored objects at its resourceVersion, sorted by (namespace, name)."""

    keys: list[tuple[str, str]]
    objects: list[JSON]


class Operations:
    """The verbs (see the module docstring). `namespace` is "" for cluster-scoped types."""

    def __init__(self, store: Store, registry: Registry, clock: Clock) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock
        namespaces = registry.lookup("", "v1", "namespaces")
        assert namespaces is not None
        self._namespaces = namespaces
        self._snapshots: OrderedDict[tuple[Any, ...], _View] = OrderedDict()
        self._snapshots_lock = threading.Lock()

    # -- reads ------------------------------------------------------------------------------------------

    def get(self, rtype: ResourceType, namespace: str, name: str, subresource: str = "") -> JSON:
        obj = from_storage(rtype, self.store.get(rtype, namespace, name))
        return to_scale(rtype, obj) if subresource == "scale" else obj

    def list(
        self,
        rtype: ResourceType,
        namespace: str | None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> JSON:
        """A `<Kind>List` with metadata.resourceVersion (and metadata.continue when a page is cut)."""
        selection = Filter.parse(rtype, label_selector, field_selector)
        if resource_version_match not in ("", "Exact", "NotOlderThan"):
            raise _list_options_invalid(
                "resourceVersionMatch",
                f'Unsupported value: "{resource_version_match}": supported values: "Exact", "NotOlderThan", ""',
            )
        if resource_version_match and not resource_version:
            raise _list_options_invalid(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            )
        if resource_version_match == "Exact" and resource_version == "0":
            raise _list_options_invalid(
                "resourceVersionMatch", 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
            )
        if resource_version and not resource_version.isdigit():
            raise errors.bad_request(f'invalid resource version "{resource_version}"')
        start: tuple[str, str] | None = None
        if continue_token:
            list_rv, start = _decode_continue(continue_token)
            if not self.store.retains(list_rv):
                raise errors.expired(
                    "The provided continue parameter is too old to display a consistent list result. You can "
                    "start a new list without the continue parameter."
                )
            with self._snapshots_lock:
                view = self._snapshots.get((rtype.key, namespace, list_rv, label_selector, field_selector))
            if view is None:  # evicted (or another selector): rebuilt from the history, once
                view = self._select(selection, self.store.list_at(rtype, namespace, list_rv))
        elif resource_version_match == "Exact":
            list_rv = int(resource_version)
            view = self._select(selection, self.store.list_at(rtype, namespace, list_rv))
        else:
            stored, list_rv = self.store.snapshot(rtype, namespace)
            if resource_version and int(resource_version) > list_rv:
                self.store.list_at(rtype, namespace, int(resource_version))  # raises "Too large resource version"
            view = self._select(selection, [obj for _, obj in stored], keys=[key for key, _ in stored])
        first = bisect.bisect_right(view.keys, start) if start is not None else 0
        last = len(view.keys) if limit <= 0 else min(first + limit, len(view.keys))
        meta: JSON = {"resourceVersion": str(list_rv)}
        cache_key = (rtype.key, namespace, list_rv, label_selector, field_selector)
        if last < len(view.keys):
            meta["continue"] = _encode_continue(list_rv, view.keys[last - 1])
            meta["remainingItemCount"] = len(view.keys) - last
            self._remember(cache_key, view)
        else:
            with self._snapshots_lock:
                self._snapshots.pop(cache_key, None)
        # Only this page is copied (and, over HTTP, serialised): the snapshot holds the stored objects.
        served = [clone(from_storage(rtype, obj)) for obj in view.objects[first:last]]
        if not rtype.custom:
            # Typed lists of built-in kinds carry no kind/apiVersion per item.
            for item in served:
                item.pop("kind", None)
                item.pop("apiVersion", None)
        return {"kind": rtype.list_kind, "apiVersion": rtype.api_version, "metadata": meta, "items": served}

    def _select(self, selection: Filter, objects: Objects, *, keys: Keys | None = None) -> _View:
        """The objects of a list that the selectors match, with their (namespace, name) keys."""
        rtype = selection.rtype
        if keys is None:
            keys = [_key(obj) for obj in objects]
        if not selection.labels.requirements and not selection.fields:
            return _View(keys, objects)
        chosen = [i for i, obj in enumerate(objects) if selection.matches(from_storage(rtype, obj))]
        return _View([keys[i] for i in chosen], [objects[i] for i in chosen])

    def _remember(self, key: tuple[Any, ...], view: _View) -> None:
        """Keep a paged list's snapshot for its next pages (the few most recent lists)."""
        with self._snapshots_lock:
            self._snapshots[key] = view
            self._snapshots.move_to_end(key)
            while len(self._snapshots) > _SNAPSHOTS_KEPT:
                self._snapshots.popitem(last=False)

    # -- writes -----------------------------------------------------------------------------------------

    def create(self, rtype: ResourceType, namespace: str, body: Any, *, dry_run: bool = False) -> JSON:
        """Create; in a namespace that does not exist it is 404, as the NamespaceLifecycle admission answers."""
        if rtype.namespaced and self.store.find(self._namespaces, "", namespace) is None:
            raise errors.not_found("", "namespaces", namespace)
        obj = prepare_create(rtype, body, namespace, self.clock.now())
        created = self.store.create(rtype, to_storage(rtype, obj), dry_run=dry_run)
        if dry_run:
            created["metadata"].pop("resourceVersion", None)
            return from_storage(rtype, created)
        if rtype.plural == "customresourcedefinitions":
            self.registry.add(from_crd(created))
        return from_storage(rtype, created)

    def update(
        self, rtype: ResourceType, namespace: str, name: str, body: Any, subresource: str = "", *, dry_run: bool = False
    ) -> JSON:
        def change(old: JSON) -> JSON:
            if subresource == "scale":
                return apply_scale(rtype, from_storage(rtype, old), body, name=name)
            new = prepare_update(rtype, from_storage(rtype, old), body, name=name, subresource=subresource)
            return to_storage(rtype, new)

        stored = self.store.modify(rtype, namespace, name, change, dry_run=dry_run)
        if rtype.plural == "customresourcedefinitions" and not dry_run:
            self.registry.add(from_crd(stored))
        return self._served(rtype, stored, subresource)

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        content_type: str,
        subresource: str = "",
        *,
        dry_run: bool = False,
    ) -> JSON:
        accepted = list(rtype.patch_types)
        if content_type not in accepted:
            accepted.append(patch.APPLY_PATCH)
            raise errors.unsupported_media_type(content_type, accepted)

        def change(old: JSON) -> JSON:
            served = from_storage(rtype, old)
            current = to_scale(rtype, served) if subresource == "scale" else served
            try:
                if content_type == patch.MERGE_PATCH:
                    patched = patch.merge_patch(current, body)
                elif content_type == patch.JSON_PATCH:
                    patched = patch.json_patch(current, body)
                else:
                    patched = patch.strategic_merge_patch(current, body)
            except patch.PatchError as err:
                if err.code == 400:
                    raise errors.bad_request(str(err)) from err
                raise errors.ApiError(422, "Invalid", str(err)) from err
            if subresource == "scale":
                return apply_scale(rtype, served, patched, name=name)
            return to_storage(rtype, prepare_update(rtype, served, patched, name=name, subresource=subresource))

        stored = self.store.modify(rtype, namespace, name, change, dry_run=dry_run)
        if rtype.plural == "customresourcedefinitions" and not dry_run:
            self.registry.add(from_crd(stored))
        return self._served(rtype, stored, subresource)

    def _served(self, rtype: ResourceType, stored: JSON, subresource: str) -> JSON:
        obj = from_storage(rtype, stored)
        return to_scale(rtype, obj) if subresource == "scale" else obj

    def delete(
        self, rtype: ResourceType, namespace: str, name: str, options: Any = None, *, dry_run: bool = False
    ) -> JSON:
        """Delete now (no graceful termination); the Pod itself for pods, a Success Status otherwise."""
        preconditions = (options.get("preconditions") or {}) if isinstance(options, dict) else {}

        def check(current: JSON) -> None:
            meta = current["metadata"]
            if preconditions.get("uid") and preconditions["uid"] != meta.get("uid"):
                raise errors.ApiError(
                    409, "Conflict",
                    f"Precondition failed: UID in precondition: {preconditions['uid']}, "
                    f"UID in object meta: {meta.get('uid')}",
                    details={"name": name, "group": rtype.group, "kind": rtype.plural},
                )  # fmt: skip
            rv = preconditions.get("resourceVersion")
            if rv and rv != meta.get("resourceVersion"):
                raise errors.ApiError(
                    409, "Conflict",
                    f"Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: "
                    f"{meta.get('resourceVersion')}",
                    details={"name": name, "group": rtype.group, "kind": rtype.plural},
                )  # fmt: skip

        deleted = from_storage(rtype, self.store.delete(rtype, namespace, name, check, dry_run=dry_run))
        if rtype.plural == "customresourcedefinitions" and not dry_run:
            spec = deleted.get("spec") or {}
            self.registry.remove_group_resource(spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
        if rtype.plural == "pods" and not rtype.group:
            return deleted
        details: JSON = {"name": name}
        if rtype.group:
            details["group"] = rtype.group
        details["kind"] = rtype.plural
        details["uid"] = deleted["metadata"].get("uid", "")
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    def delete_collection(
        self, rtype: ResourceType, namespace: str | None, *, label_selector: str = "", field_selector: str = ""
    ) -> JSON:
        listed = self.list(rtype, namespace, label_selector=label_selector, field_selector=field_selector)
        for item in listed["items"]:
            meta = item["metadata"]
            try:
                self.store.delete(rtype, meta.get("namespace", ""), meta["name"])
            except errors.ApiError as err:
                if err.code != 404:
                    raise
        return listed
