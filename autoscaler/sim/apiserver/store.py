"""The object store: every object by (group, plural, namespace, name), one global resourceVersion, a bounded
history of changes for watches, and read-modify-write under one lock.

It stands in for etcd plus the watch cache. It enforces existence and resourceVersion preconditions and
assigns resourceVersions; what a write may change (status vs spec, generation, defaults) is decided by
`strategy`, before the store commits. Objects go in and come out as copies, so no caller can change stored
state except through a write. Listeners (the pod lifecycle model) hear about every committed change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from autoscaler.sim.apiserver import errors
from autoscaler.sim.apiserver.resources import ResourceType

JSON = dict[str, Any]
Key = tuple[str, str]
Items = list[JSON]
Snapshot = list[tuple[Key, JSON]]  # (namespace, name) and the stored object
T = TypeVar("T")


def _clone(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    return value


def clone(value: T) -> T:
    """A deep copy of a JSON value (faster than copy.deepcopy for plain dicts and lists)."""
    return cast(T, _clone(value))


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One committed change. `previous` is the object before the change (None for ADDED)."""

    resource_version: int
    key: Key
    namespace: str
    type: str  # ADDED, MODIFIED, DELETED
    object: JSON
    previous: JSON | None


Listener = Callable[[WatchEvent], None]
History = list[WatchEvent]


class Store:
    """Thread-safe objects, resourceVersions and watch history (see the module docstring)."""

    def __init__(self, *, history_size: int = 10_000) -> None:
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._objects: dict[Key, dict[tuple[str, str], JSON]] = {}
        self._history: list[WatchEvent] = []
        self._history_size = history_size
        self._compacted = 0  # every change after this resourceVersion is still in the history
        self._rv = 0
        self._listeners: list[Listener] = []
        # controller owner uid -> the objects it owns, so that a controller finds its pods without a scan
        self._owned: dict[str, dict[tuple[Key, str, str], None]] = {}
        self._pending: list[WatchEvent] = []
        self._closed = False

    # -- reading ----------------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    @property
    def closed(self) -> bool:
        return self._closed

    def get(self, rtype: ResourceType, namespace: str, name: str) -> JSON:
        with self._lock:
            obj = self._objects.get(rtype.key, {}).get((namespace, name))
            if obj is None:
                raise errors.not_found(rtype.group, rtype.plural, name)
            return clone(obj)

    def find(self, rtype: ResourceType, namespace: str, name: str) -> JSON | None:
        with self._lock:
            obj = self._objects.get(rtype.key, {}).get((namespace, name))
            return None if obj is None else clone(obj)

    def list(
        self, rtype: ResourceType, namespace: str | None, where: Callable[[JSON], bool] | None = None
    ) -> tuple[Items, int]:
        """Objects in `namespace` (all namespaces when None) for which `where` holds (it sees the stored object
        and must not change it), sorted by (namespace, name), and the current resourceVersion."""
        with self._lock:
            items = self._objects.get(rtype.key, {})
            keys = sorted(k for k in items if namespace is None or k[0] == namespace)
            return [clone(items[k]) for k in keys if where is None or where(items[k])], self._rv

    def snapshot(self, rtype: ResourceType, namespace: str | None) -> tuple[Snapshot, int]:
        """The stored objects themselves (not copies: a committed object is never changed in place, a write
        stores a new one), keyed and sorted by (namespace, name), and the current resourceVersion: a
        consistent view that later writes do not touch. Callers must not change the objects."""
        with self._lock:
            items = self._objects.get(rtype.key, {})
            keys = sorted(k for k in items if namespace is None or k[0] == namespace)
            return [(k, items[k]) for k in keys], self._rv

    def retains(self, resource_version: int) -> bool:
        """Whether the state at `resource_version` is still known (not compacted away)."""
        with self._lock:
            return resource_version >= self._compacted

    def list_at(self, rtype: ResourceType, namespace: str | None, resource_version: int) -> Items:
        """The list as it was at `resource_version` (resourceVersionMatch=Exact), rebuilt from the history."""
        with self._lock:
            if resource_version > self._rv:
                raise errors.ApiError(
                    504,
                    "Timeout",
                    f"Too large resource version: {resource_version}, current: {self._rv}",
                    details={"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                             "retryAfterSeconds": 1},
                )  # fmt: skip
            if resource_version < self._compacted:
                raise errors.expired("The resourceVersion for the provided list is too old.")
            state = {k: v for k, v in self._objects.get(rtype.key, {}).items()}
            for event in reversed(self._history):
                if event.resource_version <= resource_version:
                    break
                if event.key != rtype.key:
                    continue
                name = (event.namespace, event.object["metadata"]["name"])
                if event.previous is None:
                    state.pop(name, None)
                else:
                    state[name] = event.previous
            keys = sorted(k for k in state if namespace is None or k[0] == namespace)
            return [clone(state[k]) for k in keys]

    def events_after(self, resource_version: int) -> History:
        """Changes after `resource_version`; 410 Expired when some of them are no longer retained."""
        with self._lock:
            if resource_version < self._compacted:
                oldest = self._history[0].resource_version if self._history else self._rv + 1
                raise errors.expired(f"too old resource version: {resource_version} ({oldest})")
            start = len(self._history)
            while start > 0 and self._history[start - 1].resource_version > resource_version:
                start -= 1
            return self._history[start:]

    def wait_for_change(self, resource_version: int, timeout: float) -> None:
        """Block until a change after `resource_version` is committed, the store closes, or `timeout` passes."""
        with self._changed:
            if self._rv <= resource_version and not self._closed:
                self._changed.wait(timeout)

    # -- writing ----------------------------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with self._lock:
            yield
            pending, self._pending = self._pending, []
            if pending:
                self._changed.notify_all()
        for event in pending:
            for listener in list(self._listeners):
                listener(event)

    def _commit(self, rtype: ResourceType, kind: str, obj: JSON, previous: JSON | None) -> JSON:
        self._rv += 1
        meta = obj.setdefault("metadata", {})
        namespace = meta.get("namespace", "") if rtype.namespaced else ""
        items = self._objects.setdefault(rtype.key, {})
        if kind == "DELETED":
            items.pop((namespace, meta["name"]), None)
            obj = clone(obj)
            obj["metadata"]["resourceVersion"] = str(self._rv)
        else:
            meta["resourceVersion"] = str(self._rv)
            items[(namespace, meta["name"])] = obj
        self._index_owners(rtype.key, namespace, meta["name"], previous, None if kind == "DELETED" else obj)
        event = WatchEvent(self._rv, rtype.key, namespace, kind, obj, previous)
        self._history.append(event)
        if len(self._history) > self._history_size:
            dropped = len(self._history) - self._history_size
            self._compacted = self._history[dropped - 1].resource_version
            del self._history[:dropped]
        self._pending.append(event)
        return clone(obj)

    def _index_owners(self, key: Key, namespace: str, name: str, old: JSON | None, new: JSON | None) -> None:
        def owners(obj: JSON | None) -> set[str]:
            refs = ((obj or {}).get("metadata") or {}).get("ownerReferences") or []
            return {str(r.get("uid")) for r in refs if r.get("controller") and r.get("uid")}

        entry = (key, namespace, name)
        for uid in owners(old):
            self._owned.get(uid, {}).pop(entry, None)
        for uid in owners(new):
            self._owned.setdefault(uid, {})[entry] = None

    def owned_by(self, rtype: ResourceType, owner_uid: str) -> Items:
        """The objects of `rtype` whose controller ownerReference has this uid, sorted by name."""
        with self._lock:
            items = self._objects.get(rtype.key, {})
            found = [items[(ns, name)] for key, ns, name in self._owned.get(owner_uid, {}) if key == rtype.key]
            return [clone(o) for o in sorted(found, key=lambda o: o["metadata"]["name"])]

    def create(self, rtype: ResourceType, obj: JSON, *, dry_run: bool = False) -> JSON:
        """Store a new object (409 AlreadyExists if its name is taken) and return it with its RV.

        With `dry_run` every check runs but nothing is stored (the object comes back without a RV).
        """
        with self._writing():
            meta = obj["metadata"]
            namespace = meta.get("namespace", "") if rtype.namespaced else ""
            if (namespace, meta["name"]) in self._objects.get(rtype.key, {}):
                raise errors.already_exists(rtype.group, rtype.plural, meta["name"])
            if dry_run:
                return clone(obj)
            return self._commit(rtype, "ADDED", clone(obj), None)

    def modify(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        change: Callable[[JSON], JSON | None],
        *,
        dry_run: bool = False,
    ) -> JSON:
        """Read-modify-write: `change` gets a copy of the object and returns the new one (None: no change).

        `change` runs under the store lock, so it sees the latest object; it raises `ApiError` to refuse.
        """
        with self._writing():
            current = self._objects.get(rtype.key, {}).get((namespace, name))
            if current is None:
                raise errors.not_found(rtype.group, rtype.plural, name)
            new = change(clone(current))
            if new is None or new == current:
                return clone(current)
            if dry_run:
                return new
            return self._commit(rtype, "MODIFIED", new, current)

    def delete(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        check: Callable[[JSON], None] | None = None,
        *,
        dry_run: bool = False,
    ) -> JSON:
        """Remove an object; `check` may refuse (preconditions). Returns the object as deleted."""
        with self._writing():
            current = self._objects.get(rtype.key, {}).get((namespace, name))
            if current is None:
                raise errors.not_found(rtype.group, rtype.plural, name)
            if check is not None:
                check(clone(current))
            if dry_run:
                return clone(current)
            return self._commit(rtype, "DELETED", current, current)

    def put(self, rtype: ResourceType, obj: JSON) -> JSON:
        """Create or overwrite an object as given, status included (the Python API for test setup)."""
        with self._writing():
            meta = obj["metadata"]
            namespace = meta.get("namespace", "") if rtype.namespaced else ""
            previous = self._objects.get(rtype.key, {}).get((namespace, meta["name"]))
            return self._commit(rtype, "ADDED" if previous is None else "MODIFIED", clone(obj), previous)

    # -- history and listeners --------------------------------------------------------------------------

    def compact(self) -> None:
        """Forget the whole history, as an etcd compaction does: older watches and exact lists get 410."""
        with self._lock:
            self._compacted = self._rv
            self._history.clear()

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def close(self) -> None:
        """Wake every waiting watch so that it ends (the server is stopping)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
