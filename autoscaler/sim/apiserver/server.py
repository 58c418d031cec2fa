"""`EmulatedApiServer`: the emulator assembled and running on 127.0.0.1, for the tests and the command.

    with EmulatedApiServer(crds=[my_crd], clock=FakeClock()) as srv:
        client = kubernetes.client.ApiClient(Configuration(host=srv.url))
        srv.create({"apiVersion": "apps/v1", "kind": "Deployment", ...})
        srv.faults.add(r"/scale$", method="PATCH", status=409)
        srv.advance(5)                      # FakeClock only: move time, then tick the pod lifecycle
        srv.audit.records(verb="patch")

With the real clock (the default) a background thread ticks the pod lifecycle; with an injected clock the
test ticks (`tick()` / `advance()`), so nothing moves behind its back.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import uuid
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

import yaml

from autoscaler.sim.apiserver import errors
from autoscaler.sim.apiserver.audit import AuditLog
from autoscaler.sim.apiserver.clock import Clock, FakeClock, RealClock, timestamp
from autoscaler.sim.apiserver.faults import FaultInjector
from autoscaler.sim.apiserver.handler import App, HttpServer
from autoscaler.sim.apiserver.lifecycle import PodLifecycle
from autoscaler.sim.apiserver.operations import Operations
from autoscaler.sim.apiserver.resources import Registry, ResourceType, from_crd
from autoscaler.sim.apiserver.store import Store

JSON = dict[str, Any]
CRD_KIND = "CustomResourceDefinition"


def default_crds() -> list[JSON]:
    """The project's own CRDs: the package file autoscaler/kube/crd.yaml."""
    path = resources.files("autoscaler").joinpath("kube", "crd.yaml")
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == CRD_KIND]


def load_manifests(text: str) -> list[JSON]:
    """The documents of a multi-document YAML file (empty documents and `List`s flattened)."""
    out: list[JSON] = []
    for doc in yaml.safe_load_all(text):
        if isinstance(doc, dict) and doc.get("kind", "").endswith("List") and "items" in doc:
            out.extend(doc["items"])
        elif isinstance(doc, dict):
            out.append(doc)
    return out


class EmulatedApiServer:
    """A Kubernetes API emulator on an HTTP port (see the module docstring and docs/emulator.md)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        crds: Iterable[Mapping[str, Any]] | None = None,
        seed: Iterable[Mapping[str, Any]] = (),
        clock: Clock | None = None,
        start_delay_seconds: float = 0.0,
        ready_delay_seconds: float = 0.0,
        termination_grace_seconds: float = 0.0,
        tick_interval_seconds: float | None = None,
        history_size: int = 10_000,
        bookmark_interval_seconds: float = 1.0,
        emit_events: bool = True,
        namespaces: Iterable[str] = ("default", "kube-system"),
    ) -> None:
        self.clock: Clock = clock or RealClock()
        # A background ticker only runs on the real clock unless asked for: a fake clock is moved by the test.
        if tick_interval_seconds is None and isinstance(self.clock, RealClock):
            tick_interval_seconds = 0.1
        self._tick_interval = tick_interval_seconds
        self.registry = Registry()
        self.store = Store(history_size=history_size)
        self.operations = Operations(self.store, self.registry, self.clock)
        self.faults = FaultInjector()
        self.audit = AuditLog()
        self.lifecycle = PodLifecycle(
            self.store,
            self.registry,
            self.clock,
            start_delay_seconds=start_delay_seconds,
            ready_delay_seconds=ready_delay_seconds,
            termination_grace_seconds=termination_grace_seconds,
            emit_events=emit_events,
        )
        self._app = App(self.operations, self.faults, self.audit, self.lifecycle, self.clock, bookmark_interval_seconds)
        self._host, self._port = host, port
        self._httpd: HttpServer | None = None
        self._threads: list[threading.Thread] = []
        for name in namespaces:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                         "spec": {"finalizers": ["kubernetes"]}})  # fmt: skip
            self.patch_status("v1", "Namespace", name, {"phase": "Active"}, namespace="")
        for crd in default_crds() if crds is None else crds:
            self.create(dict(crd))
        self.seed(seed)

    # -- running ----------------------------------------------------------------------------------------

    def start(self) -> EmulatedApiServer:
        self._httpd = HttpServer((self._host, self._port), self._app)
        serve = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="apiserver-emulator", daemon=True
        )
        serve.start()
        self._threads.append(serve)
        if self._tick_interval:
            ticker = threading.Thread(target=self._tick_forever, name="apiserver-emulator-ticker", daemon=True)
            ticker.start()
            self._threads.append(ticker)
        return self

    def _tick_forever(self) -> None:
        assert self._tick_interval is not None
        while not self._app.stopping.wait(self._tick_interval):
            self.lifecycle.tick()

    def stop(self) -> None:
        """Stop serving: end watches, close connections, join the server threads."""
        self._app.stopping.set()
        self.store.close()
        if self._httpd is not None:
            self._httpd.shutdown()
            with self._httpd.connections_lock:
                connections = list(self._httpd.connections)
            for connection in connections:
                with contextlib.suppress(OSError):  # already closed
                    connection.shutdown(socket.SHUT_RDWR)
            self._httpd.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()

    def __enter__(self) -> EmulatedApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the emulator is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    # -- time -------------------------------------------------------------------------------------------

    def tick(self) -> None:
        """Bring every pod and workload status up to the clock's now."""
        self.lifecycle.tick()

    def advance(self, seconds: float) -> None:
        """Move a FakeClock forward and tick."""
        if not isinstance(self.clock, FakeClock):
            raise TypeError("advance() needs a FakeClock; pass clock=FakeClock() to the constructor")
        self.clock.advance(seconds)
        self.tick()

    # -- objects from Python ----------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> ResourceType:
        rtype = self.registry.by_kind(api_version, kind)
        if rtype is None:
            raise KeyError(f"no resource serves {api_version} {kind}")
        return rtype

    def _namespace(self, rtype: ResourceType, namespace: str | None) -> str:
        return (namespace or "default") if rtype.namespaced else ""

    def create(self, manifest: Mapping[str, Any]) -> JSON:
        """Create an object as a POST would (defaults, validation, status reset)."""
        rtype = self.resource(manifest.get("apiVersion", ""), manifest.get("kind", ""))
        namespace = self._namespace(rtype, (manifest.get("metadata") or {}).get("namespace"))
        return self.operations.create(rtype, namespace, dict(manifest))

    def apply(self, manifest: Mapping[str, Any]) -> JSON:
        """Create the object, or replace it (spec and metadata) when it exists; its status is kept."""
        try:
            return self.create(manifest)
        except errors.ApiError as err:
            if err.reason != "AlreadyExists":
                raise
        rtype = self.resource(manifest["apiVersion"], manifest["kind"])
        meta = manifest.get("metadata") or {}
        namespace = self._namespace(rtype, meta.get("namespace"))
        current = self.operations.get(rtype, namespace, meta["name"])
        body = dict(manifest, metadata=dict(meta, resourceVersion=current["metadata"]["resourceVersion"]))
        return self.operations.update(rtype, namespace, meta["name"], body)

    def seed(self, manifests: Iterable[Mapping[str, Any]]) -> None:
        """Create manifests, CRDs first so that their custom resources can follow."""
        manifests = list(manifests)
        for manifest in sorted(manifests, key=lambda m: m.get("kind") != CRD_KIND):
            self.apply(manifest)

    def put(self, obj: Mapping[str, Any]) -> JSON:
        """Store an object exactly as given, status included (for test setup; no defaults or checks)."""
        rtype = self.resource(obj.get("apiVersion", ""), obj.get("kind", ""))
        body = dict(obj)
        meta = dict(body.get("metadata") or {})
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", timestamp(self.clock.now()))
        if rtype.namespaced:
            meta.setdefault("namespace", "default")
        body["metadata"] = meta
        return self.store.put(rtype, body)

    def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = "default") -> JSON:
        rtype = self.resource(api_version, kind)
        return self.operations.get(rtype, self._namespace(rtype, namespace), name)

    def list(
        self, api_version: str, kind: str, *, namespace: str | None = None, label_selector: str = ""
    ) -> list[JSON]:
        rtype = self.resource(api_version, kind)
        return list(self.operations.list(rtype, namespace, label_selector=label_selector)["items"])

    def delete(self, api_version: str, kind: str, name: str, *, namespace: str | None = "default") -> None:
        rtype = self.resource(api_version, kind)
        self.operations.delete(rtype, self._namespace(rtype, namespace), name)

    def patch_status(
        self, api_version: str, kind: str, name: str, status: Mapping[str, Any], *, namespace: str | None = "default"
    ) -> JSON:
        """Merge `status` into an object's status, as a /status merge-patch would."""
        rtype = self.resource(api_version, kind)
        return self.operations.patch(
            rtype, self._namespace(rtype, namespace), name, {"status": dict(status)},
            "application/merge-patch+json", "status" if rtype.status else "",
        )  # fmt: skip

    def load_crd(self, crd: Mapping[str, Any]) -> None:
        """Serve a CRD's resource types (the same as creating the CRD object)."""
        self.create(crd)

    def compact(self) -> None:
        """Forget the change history: watches and exact lists from older resourceVersions get 410 Expired."""
        self.store.compact()


__all__ = ["EmulatedApiServer", "default_crds", "from_crd", "load_manifests"]
