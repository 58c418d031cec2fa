"""Watches: the stream of ADDED / MODIFIED / DELETED / BOOKMARK / ERROR events of one resource type.

From no resourceVersion (or "0") a watch first sends every matching object as ADDED; from a resourceVersion
it sends the changes after it, or one ERROR event with a 410 Expired Status when those changes are no longer
retained (after `Store.compact()` or when the history overflowed), as the real server does. With a label or
field selector, an object that starts matching arrives as ADDED and one that stops matching as DELETED.
Bookmarks carry the latest resourceVersion when `allowWatchBookmarks` is set and the watch is idle.
Timeouts are measured on the monotonic clock: they are about the connection, not the simulated world.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from autoscaler.sim.apiserver import errors
from autoscaler.sim.apiserver.convert import from_storage
from autoscaler.sim.apiserver.operations import Filter
from autoscaler.sim.apiserver.resources import ResourceType
from autoscaler.sim.apiserver.store import Store, WatchEvent

JSON = dict[str, Any]

# The real server ends a watch after a random 30-60 minutes when the client gives no timeoutSeconds.
DEFAULT_TIMEOUT_SECONDS = 1800.0

_NEEDS_NOT_OLDER_THAN = "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
_NEEDS_BOOKMARKS = "sendInitialEvents requires setting allowWatchBookmarks to true"
_NEEDS_INITIAL_EVENTS = "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"


def _translate(event: WatchEvent, rtype: ResourceType, selection: Filter) -> JSON | None:
    obj = from_storage(rtype, event.object)
    if event.type == "MODIFIED" and event.previous is not None:
        was = selection.matches(from_storage(rtype, event.previous))
        now = selection.matches(obj)
        if not was and not now:
            return None
        kind = "MODIFIED" if was and now else ("ADDED" if now else "DELETED")
        return {"type": kind, "object": obj}
    if not selection.matches(obj):
        return None
    return {"type": event.type, "object": obj}


def watch_options(query: dict[str, str]) -> tuple[bool, bool]:
    """(sendInitialEvents, allowWatchBookmarks) of a watch request, validated as the real ListOptions are."""
    initial_events = query.get("sendInitialEvents") in ("true", "1")
    bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
    match = query.get("resourceVersionMatch", "")
    causes: list[tuple[str, str]] = []
    if initial_events and match != "NotOlderThan":
        causes.append(("resourceVersionMatch", f"Forbidden: {_NEEDS_NOT_OLDER_THAN}"))
    if initial_events and not bookmarks:
        causes.append(("allowWatchBookmarks", f"Required value: {_NEEDS_BOOKMARKS}"))
    if match and "sendInitialEvents" not in query:
        causes.append(("resourceVersionMatch", f"Forbidden: {_NEEDS_INITIAL_EVENTS}"))
    if causes:
        raise errors.invalid("meta.k8s.io", "ListOptions", "", causes)
    return initial_events, bookmarks


def _bookmark(rtype: ResourceType, resource_version: int, annotations: dict[str, str] | None = None) -> JSON:
    meta: JSON = {"resourceVersion": str(resource_version)}
    if annotations:
        meta["annotations"] = annotations
    return {"type": "BOOKMARK", "object": {"kind": rtype.kind, "apiVersion": rtype.api_version, "metadata": meta}}


def stream(
    store: Store,
    rtype: ResourceType,
    namespace: str | None,
    selection: Filter,
    *,
    resource_version: str = "",
    timeout_seconds: float | None = None,
    bookmarks: bool = False,
    bookmark_interval_seconds: float = 1.0,
    initial_events: bool = False,
) -> Iterator[JSON]:
    """The events of one watch request, until it times out or the store closes (the server stops).

    `initial_events` is `sendInitialEvents=true` (a watch-list): the current objects as ADDED, then a
    BOOKMARK annotated `k8s.io/initial-events-end`, then the changes."""
    deadline = time.monotonic() + (DEFAULT_TIMEOUT_SECONDS if timeout_seconds is None else timeout_seconds)
    if resource_version in ("", "0") or initial_events:
        items, cursor = store.list(rtype, namespace)
        for obj in items:
            served = from_storage(rtype, obj)
            if selection.matches(served):
                yield {"type": "ADDED", "object": served}
        if initial_events:
            yield _bookmark(rtype, cursor, {"k8s.io/initial-events-end": "true"})
    else:
        cursor = int(resource_version)
    last_sent = time.monotonic()
    while not store.closed:
        try:
            events = store.events_after(cursor)
        except errors.ApiError as err:
            yield {"type": "ERROR", "object": err.status()}
            return
        for event in events:
            cursor = event.resource_version
            if event.key != rtype.key or (namespace is not None and event.namespace != namespace):
                continue
            translated = _translate(event, rtype, selection)
            if translated is not None:
                last_sent = time.monotonic()
                yield translated
        now = time.monotonic()
        if now >= deadline:
            return
        if bookmarks and now - last_sent >= bookmark_interval_seconds:
            last_sent = now
            yield _bookmark(rtype, cursor)
        wait = deadline - now
        if bookmarks:
            wait = min(wait, max(bookmark_interval_seconds - (now - last_sent), 0.01))
        store.wait_for_change(cursor, wait)
