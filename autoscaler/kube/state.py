"""Where a file spec's status lives: one ConfigMap per spec, so a restart or a failover finds its state again.

A spec read from a file has no object of ours in the cluster to carry its status. `ConfigMapStateStore` keeps
one ConfigMap per spec in a configured namespace, named from the spec's namespace and name (hashed when that
would be too long), labelled so `kubectl get cm -l autoscaler.dev/state=true` lists them, holding the status
document (the same one a PrometheusAutoscaler's status holds) as JSON under `data.status`. Writes carry the
resourceVersion last seen: created when absent, replaced when present, re-read once per conflict. One spec
per ConfigMap keeps every object far below the API server's 1 MiB limit.
This module must not compute any of the values it stores.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import structlog

from autoscaler.kube.client import PROJECT, KubeClient
from autoscaler.kube.errors import Conflict, InvalidRequest, NotFound, RequestContext
from autoscaler.kube.retry import RetryBudget, call_with_retries

log = structlog.get_logger(__name__)


class UnreadableState(InvalidRequest):
    """The stored ConfigMap exists but its `data.status` is not a JSON object: the spec has to start afresh."""


PREFIX = "autoscaler-state."
DATA_KEY = "status"
STATE_LABEL = "autoscaler.dev/state"
NAMESPACE_LABEL = "autoscaler.dev/spec-namespace"
NAME_LABEL = "autoscaler.dev/spec-name"
SPEC_ANNOTATION = "autoscaler.dev/spec"
MAX_NAME = 253  # a ConfigMap's name is a DNS subdomain
MAX_LABEL_VALUE = 63


def _digest(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def state_name(namespace: str, name: str) -> str:
    """The ConfigMap's name: "autoscaler-state.<namespace>.<name>", or with a hash in place of the name when
    that would pass 253 characters (a namespace has no dot, so two specs never share a name)."""
    full = f"{PREFIX}{namespace}.{name}"
    if len(full) <= MAX_NAME:
        return full
    return f"{PREFIX}{namespace}.{_digest(f'{namespace}/{name}', 40)}"


def _label_value(value: str) -> str:
    if len(value) <= MAX_LABEL_VALUE:
        return value
    return f"{value[: MAX_LABEL_VALUE - 17].rstrip('.-_')}-{_digest(value, 16)}"


class ConfigMapStateStore:
    """Status documents of file specs, one ConfigMap each in `namespace`. Thread-safe."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        namespace: str,
        budget: RetryBudget | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_conflicts: int = 3,
    ) -> None:
        if not namespace:
            raise ValueError("ConfigMapStateStore needs a namespace")
        self.namespace = namespace
        self._kube = kube
        self._budget = budget or RetryBudget()
        self._sleep = sleep
        self._max_conflicts = max_conflicts
        self._lock = threading.Lock()
        self._versions: dict[str, str] = {}  # ConfigMap name -> resourceVersion last seen ("" = absent)

    def _context(self, verb: str, name: str = "") -> RequestContext:
        return RequestContext(verb=verb, resource="configmaps", namespace=self.namespace, name=name)

    def _get(self, cm: str) -> dict[str, Any] | None:
        try:
            return call_with_retries(
                lambda: self._kube.request_json(
                    self._kube.core.read_namespaced_config_map, cm, self.namespace, context=self._context("get", cm)
                ),
                budget=self._budget,
                sleep=self._sleep,
            )
        except NotFound:
            return None

    def load(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The stored status document of spec `namespace/name`, or None when there is none.

        Raises `UnreadableState` when the ConfigMap holds something that is not a JSON object (the caller starts
        afresh; the next save replaces it), and another `KubeError` when it could not be read (retry later).
        """
        cm = state_name(namespace, name)
        obj = self._get(cm)
        with self._lock:
            self._versions[cm] = str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")
        if obj is None:
            return None
        text = (obj.get("data") or {}).get(DATA_KEY)
        if not text:
            return None
        try:
            document = json.loads(text)
        except ValueError as err:
            raise UnreadableState(
                f"ConfigMap {self.namespace}/{cm}: data.{DATA_KEY} is not JSON: {err}", context=self._context("get", cm)
            ) from err
        if not isinstance(document, dict):
            raise UnreadableState(
                f"ConfigMap {self.namespace}/{cm}: data.{DATA_KEY} is not a JSON object",
                context=self._context("get", cm),
            )
        return document

    def _body(self, cm: str, namespace: str, name: str, document: Mapping[str, Any], version: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "name": cm,
            "namespace": self.namespace,
            "labels": {
                STATE_LABEL: "true",
                NAMESPACE_LABEL: _label_value(namespace),
                NAME_LABEL: _label_value(name),
                "app.kubernetes.io/managed-by": PROJECT,
            },
            "annotations": {SPEC_ANNOTATION: f"{namespace}/{name}"},
        }
        if version:
            metadata["resourceVersion"] = version
        text = json.dumps(document, sort_keys=True, separators=(",", ":"))
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {DATA_KEY: text}}

    def save(self, namespace: str, name: str, document: Mapping[str, Any]) -> None:
        """Store the status document of spec `namespace/name`: create or replace, guarded by resourceVersion.

        On 409 (someone else wrote it, or it was created meanwhile) the ConfigMap is read again for its
        resourceVersion and the document written again: the caller holds the newer state (it is the leader).
        """
        cm = state_name(namespace, name)
        with self._lock:
            version = self._versions.get(cm)
        if version is None:
            version = str(((self._get(cm) or {}).get("metadata") or {}).get("resourceVersion") or "")
        conflicts = 0
        while True:
            body = self._body(cm, namespace, name, document, version)
            try:
                data = call_with_retries(
                    partial(self._send, cm, body, replace=bool(version)), budget=self._budget, sleep=self._sleep
                )
            except (Conflict, NotFound):
                # 409: changed or created meanwhile; 404: deleted meanwhile (replace of a missing object).
                conflicts += 1
                log.info("state_write_conflict", configmap=f"{self.namespace}/{cm}", conflicts=conflicts)
                if conflicts > self._max_conflicts:
                    raise
                version = str(((self._get(cm) or {}).get("metadata") or {}).get("resourceVersion") or "")
                continue
            with self._lock:
                self._versions[cm] = str((data.get("metadata") or {}).get("resourceVersion") or "")
            return

    def _send(self, cm: str, body: dict[str, Any], *, replace: bool) -> dict[str, Any]:
        if replace:
            return self._kube.request_json(
                self._kube.core.replace_namespaced_config_map,
                cm,
                self.namespace,
                body,
                context=self._context("update", cm),
            )
        return self._kube.request_json(
            self._kube.core.create_namespaced_config_map, self.namespace, body, context=self._context("create", cm)
        )

    def delete(self, namespace: str, name: str) -> None:
        """Delete the stored status of spec `namespace/name` (its spec is gone); one already absent is fine."""
        cm = state_name(namespace, name)
        with contextlib.suppress(NotFound):  # already absent
            call_with_retries(
                lambda: self._kube.request_json(
                    self._kube.core.delete_namespaced_config_map,
                    cm,
                    self.namespace,
                    context=self._context("delete", cm),
                ),
                budget=self._budget,
                sleep=self._sleep,
            )
        with self._lock:
            self._versions[cm] = ""  # absent: the next save creates it

    def forget(self) -> None:
        """Drop the remembered resourceVersions (they are read again when next needed)."""
        with self._lock:
            self._versions.clear()
