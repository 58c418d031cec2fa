"""`Informer`: one resource's list+watch loop and its in-memory store, as client-go's reflector and store.

An `Informer` lists a resource (in pages), then watches from the list's resourceVersion on a background
thread, applying ADDED / MODIFIED / DELETED events and BOOKMARKs to a store indexed by namespace (and, given
`labels_of`, by label). A 410 Gone (on the watch request or as an ERROR event) makes it list again; any other
watch failure re-watches from the last resourceVersion after a short, growing pause. Objects are parsed from
raw JSON, not the client's models (see docs/kube.md for the measured difference).

`start()` returns at once; `has_synced()` / `wait_for_sync()` tell when the first list has landed; `stop()`
closes the open watch connection so the thread ends promptly. This module must not know any resource.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import structlog
import urllib3

from autoscaler.core.labels import Selector
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import Expired, KubeError, RequestContext, Unavailable

log = structlog.get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ListWatch:
    """How to list and watch one resource: a generated list method, its leading arguments, and context."""

    method: Callable[..., Any]
    args: tuple[Any, ...]
    context: RequestContext
    label_selector: str | None = None


@dataclass(slots=True)
class InformerStats:
    """Counters tests and /metrics can read: lists (1 + relists), watches opened, events applied."""

    lists: int = 0
    watches: int = 0
    events: int = 0
    expired: int = 0
    errors: int = 0
    last_error: str = field(default="")


def _lines(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """The newline-delimited JSON events of a watch response, as they arrive."""
    chunks: Iterator[bytes]
    if getattr(response, "chunked", False):
        chunks = response.read_chunked(decode_content=True)
    else:
        chunks = iter(lambda: response.read1(65536), b"")
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield line
    if buffer.strip():
        yield buffer


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


# How many names a label pair of the index keeps in a tuple before it keeps them as a dict's keys.
SMALL_NAMES = 16


class Informer(Generic[T]):
    """One resource's list+watch loop and its store of transformed objects, by namespace and name."""

    def __init__(
        self,
        kube: KubeClient,
        list_watch: ListWatch,
        *,
        transform: Callable[[Mapping[str, Any]], T],
        name: str = "",
        watch_timeout_seconds: int = 300,
        initial_backoff_seconds: float = 0.2,
        max_backoff_seconds: float = 10.0,
        page_size: int = 500,
        labels_of: Callable[[T], Mapping[str, str]] | None = None,
    ) -> None:
        self._kube = kube
        self._page_size = page_size
        # With `labels_of`, an index (namespace -> (label, value) -> names) answers selectors without a scan.
        self._labels_of = labels_of
        # The names of each label pair: a tuple while there are few (a workload's pods: 0.12 KiB for 10 names, a
        # dict's keys 0.27 KiB, a set's 0.7), a dict's keys past SMALL_NAMES (O(1) changes for thousands).
        self._index: dict[str, dict[tuple[str, str], tuple[str, ...] | dict[str, None]]] = {}
        self._lw = list_watch
        self._transform = transform
        self.name = name or list_watch.context.resource_path
        self._watch_timeout = watch_timeout_seconds
        self._initial_backoff = initial_backoff_seconds
        self._max_backoff = max_backoff_seconds
        self._lock = threading.Lock()
        self._store: dict[str, dict[str, T]] = {}
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._response: urllib3.BaseHTTPResponse | None = None
        self.resource_version = ""
        self.stats = InformerStats()

    # --- queries -------------------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """True once the first list has been stored (and ever after, as in client-go)."""
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    def get(self, namespace: str, name: str) -> T | None:
        with self._lock:
            return self._store.get(namespace, {}).get(name)

    def items(self, namespace: str | None = None) -> list[T]:
        """All objects, or those of one namespace."""
        with self._lock:
            if namespace is not None:
                return list(self._store.get(namespace, {}).values())
            return [obj for objs in self._store.values() for obj in objs.values()]

    def select(self, namespace: str, selector: Selector) -> list[T]:
        """The objects of `namespace` whose labels match; needs `labels_of`. Equality and `in` use the index."""
        labels_of = self._labels_of
        if labels_of is None:
            raise TypeError(f"informer {self.name} was built without labels_of")
        with self._lock:
            objs = self._store.get(namespace, {})
            index = self._index.get(namespace, {})
            candidates: set[str] | None = None
            for req in selector.requirements:
                if req.operator == "=":
                    names = set(index.get((req.key, req.values[0]), ()))
                elif req.operator == "in":
                    names = set().union(*(index.get((req.key, v), ()) for v in req.values))
                else:
                    continue
                candidates = names if candidates is None else candidates & names
            pool = list(objs.values()) if candidates is None else [objs[n] for n in candidates if n in objs]
        return [obj for obj in pool if selector.matches(labels_of(obj))]

    def _put(self, namespace: str, name: str, item: T) -> None:
        """Store one object and index its labels; the caller holds the lock."""
        objs = self._store.setdefault(namespace, {})
        old = objs.get(name)
        objs[name] = item
        labels_of = self._labels_of
        if labels_of is None:
            return
        labels = labels_of(item)  # kept as is: pods of one workload share one mapping (kube/pods.py)
        if old is not None:
            before = labels_of(old)
            if before is labels or before == labels:
                return
            self._unindex(namespace, name, before)
        index = self._index.setdefault(namespace, {})
        for pair in labels.items():
            names = index.get(pair)
            if names is None:
                index[pair] = (name,)
            elif isinstance(names, tuple):
                if name not in names:
                    index[pair] = (*names, name) if len(names) < SMALL_NAMES else dict.fromkeys((*names, name))
            else:
                names[name] = None

    def _remove(self, namespace: str, name: str) -> None:
        """Forget one object; the caller holds the lock."""
        old = self._store.get(namespace, {}).pop(name, None)
        if old is not None and self._labels_of is not None:
            self._unindex(namespace, name, self._labels_of(old))

    def _unindex(self, namespace: str, name: str, labels: Mapping[str, str]) -> None:
        """Take `name` out of the index entries of `labels` (the stored object's: no copy of them is kept)."""
        index = self._index.get(namespace, {})
        for pair in labels.items():
            names = index.get(pair)
            if names is None:
                continue
            if isinstance(names, tuple):
                if name in names:
                    rest = tuple(other for other in names if other != name)
                    if rest:
                        index[pair] = rest
                    else:
                        del index[pair]
                continue
            names.pop(name, None)
            if not names:
                del index[pair]

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and close its watch connection; returns when the thread has ended (or timeout)."""
        self._stop.set()
        with self._lock:
            response = self._response
        if response is not None:
            _shutdown(response)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> Informer[T]:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the loop ------------------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = self._initial_backoff
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                self._watch()
                backoff = self._initial_backoff
            except Expired:
                self.stats.expired += 1
                log.info("informer_relist", informer=self.name, resource_version=self.resource_version)
                need_list = True
            except KubeError as err:
                if self._stop.is_set():
                    break
                self.stats.errors += 1
                self.stats.last_error = str(err)
                log.warning("informer_error", informer=self.name, error=str(err), backoff_seconds=backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self._max_backoff)

    def _list(self) -> None:
        """A consistent list in pages of `page_size` (as client-go's reflector pages), then the store swap."""
        kwargs: dict[str, Any] = {}
        if self._lw.label_selector:
            kwargs["label_selector"] = self._lw.label_selector
        if self._page_size:
            kwargs["limit"] = self._page_size
        items: list[tuple[str, str, T]] = []
        token = ""
        while True:
            if token:
                kwargs["_continue"] = token
            data = self._kube.request_json(self._lw.method, *self._lw.args, context=self._lw.context, **kwargs)
            for item in data.get("items") or []:
                namespace, name = _key(item)
                try:
                    items.append((namespace, name, self._transform(item)))
                except (ValueError, TypeError, KeyError) as err:
                    log.warning(
                        "informer_object_unreadable", informer=self.name, object=f"{namespace}/{name}", error=str(err)
                    )
            meta = data.get("metadata") or {}
            token = str(meta.get("continue") or "")
            if not token:
                break
        with self._lock:
            self._store, self._index = {}, {}
            for namespace, name, obj in items:
                self._put(namespace, name, obj)
        # Every page of one list carries the snapshot's resourceVersion; an expired continue token is a 410,
        # which makes the loop list again from the start.
        self.resource_version = str(meta.get("resourceVersion") or "")
        self.stats.lists += 1
        self._synced.set()

    def _watch(self) -> None:
        kwargs: dict[str, Any] = {
            "watch": True,
            "resource_version": self.resource_version,
            "allow_watch_bookmarks": True,
            "timeout_seconds": self._watch_timeout,
        }
        if self._lw.label_selector:
            kwargs["label_selector"] = self._lw.label_selector
        context = RequestContext(
            verb="watch",
            resource=self._lw.context.resource,
            group=self._lw.context.group,
            namespace=self._lw.context.namespace,
        )
        response = self._kube.open_stream(
            self._lw.method,
            *self._lw.args,
            context=context,
            read_timeout_seconds=self._watch_timeout + 15,
            **kwargs,
        )
        with self._lock:
            self._response = response
        self.stats.watches += 1
        try:
            for line in _lines(response):
                if self._stop.is_set():
                    return
                self._apply(json.loads(line), context)
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError) as err:
            # AttributeError: http.client reading a response that stop() closed under it.
            if self._stop.is_set():
                return
            raise Unavailable(f"{context.describe()}: watch broken: {err}", context=context) from err
        finally:
            with self._lock:
                self._response = None
            response.release_conn()

    def _apply(self, event: Mapping[str, Any], context: RequestContext) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            code = int(obj.get("code") or 0)
            message = f"{context.describe()}: {obj.get('message', 'watch error')} ({code})"
            if code == 410:
                raise Expired(message, context=context, status=410)
            raise Unavailable(message, context=context, status=code)
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if kind == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return
        namespace, name = _key(obj)
        if kind in ("ADDED", "MODIFIED"):
            try:
                item = self._transform(obj)
            except (ValueError, TypeError, KeyError) as err:
                # One unreadable object must not stop the cache; it stays out of the store.
                log.warning(
                    "informer_object_unreadable", informer=self.name, object=f"{namespace}/{name}", error=str(err)
                )
                with self._lock:
                    self._remove(namespace, name)
                return
            with self._lock:
                self._put(namespace, name, item)
        elif kind == "DELETED":
            with self._lock:
                self._remove(namespace, name)
        if rv:
            self.resource_version = rv
        self.stats.events += 1


def _shutdown(response: urllib3.BaseHTTPResponse) -> None:
    """Close a response another thread may be blocked reading (urllib3 >= 2.3 has shutdown())."""
    shutdown = getattr(response, "shutdown", None)
    try:
        if shutdown is not None:
            shutdown()
        response.close()
    except (OSError, urllib3.exceptions.HTTPError) as err:
        log.debug("informer_close_failed", error=str(err))
