"""The PrometheusAutoscaler custom resource: watching it across namespaces, and writing its status.

`AutoscalerCache` lists and watches the custom resource in a configured set of namespaces (or all) and keeps
the objects as plain dicts for `autoscaler.spec` to parse. `status_to_json` renders the /status subresource
(currentReplicas, desiredReplicas, lastScaleTime, currentMetrics, conditions, observedGeneration,
behaviorState, and the `reference` / `targets` strings the printer columns show); `StatusWriter.write_document`
stores such a document as it is (the daemon's path: it decides when), `StatusWriter.write_status` renders one
and stores it only when it changed; both are guarded by resourceVersion and re-read the object on 409. A
condition keeps its lastTransitionTime while its status stays the same, as the HPA's setCondition does.
This module must not compute any of the values it writes.
"""

from __future__ import annotations

import json
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import structlog

from autoscaler.core.behavior import (
    DESIRED_WITHIN_RANGE,
    READY_FOR_NEW_SCALE,
    SCALE_DOWN_STABILIZED,
    SCALE_UP_STABILIZED,
    TOO_FEW_REPLICAS,
    TOO_MANY_REPLICAS,
)
from autoscaler.core.state import behavior_state_to_json
from autoscaler.core.types import BehaviorState, Condition
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import Conflict, RequestContext
from autoscaler.kube.informer import Informer, ListWatch
from autoscaler.kube.retry import RetryBudget, call_with_retries

log = structlog.get_logger(__name__)

GROUP = "autoscaler.dev"
VERSION = "v1alpha1"
PLURAL = "prometheusautoscalers"
KIND = "PrometheusAutoscaler"
API_VERSION = f"{GROUP}/{VERSION}"


def format_time(when: datetime) -> str:
    """metav1.Time: RFC 3339 in UTC, whole seconds."""
    return _format_utc(when.astimezone(UTC))


@lru_cache(maxsize=4096)  # the same few instants in thousands of statuses (a tick's time, a transition's)
def _format_utc(when: datetime) -> str:
    # Keyed by the instant in UTC: equal keys are one instant (local times equal across a DST fold are not).
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


# A stored status, packed: zlib (a 4 KiB window) with a preset dictionary of the words every status document
# uses (its keys, the metric types, the HPA's condition types, reasons and messages), most common last, where
# zlib reaches them cheapest. A ~1 KiB status keeps in ~150-250 bytes; the cache and each target's memory keep
# one such copy (docs/performance.md). Packing is deterministic in one process: equal texts pack to equal bytes.
_EPOCH = "2026-01-01T00:00:00Z"
_STATUS_WORDS = json.dumps(
    {
        "shadow": {"theirs": 1, "ours": 1, "agree": True},
        "lastScaleTime": _EPOCH,
        "currentMetrics": [
            {"type": "External", "external": {"metric": {"name": "", "selector": {"matchLabels": {}}}}},
            {"type": "Object", "object": {"describedObject": {"apiVersion": "apps/v1", "kind": "Deployment"}}},
            {"type": "ContainerResource", "containerResource": {"name": "memory", "container": ""}},
            {"type": "Pods", "pods": {"metric": {"name": ""}, "current": {"averageValue": ""}}},
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "", "averageUtilization": 1}}},
        ],
        "conditions": [
            {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": _EPOCH}
            for kind, status, (reason, message) in (
                ("AbleToScale", "False", ("FailedGetScale", "the HPA controller was unable to get the target's")),
                ("ScalingActive", "False", ("FailedGetResourceMetric", "the HPA was unable to compute the replica")),
                ("ScalingLimited", "True", TOO_MANY_REPLICAS),
                ("ScalingLimited", "True", TOO_FEW_REPLICAS),
                ("AbleToScale", "True", SCALE_UP_STABILIZED),
                ("AbleToScale", "True", SCALE_DOWN_STABILIZED),
                (
                    "AbleToScale",
                    "True",
                    ("SucceededRescale", "the HPA controller was able to update the target scale to"),
                ),
                ("AbleToScale", "True", READY_FOR_NEW_SCALE),
                (
                    "ScalingActive",
                    "True",
                    (
                        "ValidMetricFound",
                        "the HPA was able to successfully calculate a replica "
                        "count from cpu resource utilization (percentage of request)",
                    ),
                ),
                ("ScalingLimited", "False", DESIRED_WITHIN_RANGE),
            )
        ],
        "observedGeneration": 1,
        "behaviorState": {
            "recommendations": [{"replicas": 1, "timestamp": "2026-01-01T00:00:00.000000Z"}],
            "scaleUpEvents": [{"replicas": 1, "timestamp": "2026-01-01T00:00:00.000000Z"}],
            "scaleDownEvents": [],
        },
        "reference": "Deployment/",
        "targets": "cpu: 1%/1%, 1/1 (avg)",
    },
    separators=(",", ":"),
).encode()
_PACK_WBITS = -12  # raw deflate, a 4 KiB window: the words and a status fit it, and set-up costs ~1/10 of 32 KiB's


# A packer primed with the dictionary, copied for each status: a third cheaper than priming one each time.
_PRIMED = zlib.compressobj(1, zlib.DEFLATED, _PACK_WBITS, 4, zdict=_STATUS_WORDS)


def pack_status(text: str) -> bytes:
    """A status document's compact JSON text, packed as the cache and the daemon's memory keep it."""
    packer = _PRIMED.copy()
    return packer.compress(text.encode()) + packer.flush()


def unpack_status(data: bytes) -> str:
    """The text `pack_status` packed."""
    unpacker = zlib.decompressobj(_PACK_WBITS, zdict=_STATUS_WORDS)
    return (unpacker.decompress(data) + unpacker.flush()).decode()


@dataclass(frozen=True, slots=True)
class AutoscalerStatus:
    """What the daemon will report on a PrometheusAutoscaler. `current_metrics` are MetricStatus dicts (camelCase)."""

    current_replicas: int
    desired_replicas: int
    last_scale_time: datetime | None = None
    current_metrics: tuple[Mapping[str, Any], ...] = ()
    conditions: tuple[Condition, ...] = ()
    observed_generation: int | None = None
    behavior_state: BehaviorState | None = None
    reference: str = ""
    targets: str = ""
    shadow: Mapping[str, Any] | None = None  # shadow mode's comparison (spec.render.shadow_status)


def _conditions(
    conditions: tuple[Condition, ...], previous: Sequence[Mapping[str, Any]], now: datetime
) -> list[dict[str, Any]]:
    before = {str(c.get("type")): c for c in previous}
    out: list[dict[str, Any]] = []
    for cond in conditions:
        old = before.get(cond.type)
        if cond.last_transition_time is not None:
            transition = format_time(cond.last_transition_time)
        elif old is not None and old.get("status") == cond.status and old.get("lastTransitionTime"):
            transition = str(old["lastTransitionTime"])
        else:
            transition = format_time(now)
        out.append(
            {
                "type": cond.type,
                "status": cond.status,
                "reason": cond.reason,
                "message": cond.message,
                "lastTransitionTime": transition,
            }
        )
    return out


def status_to_json(status: AutoscalerStatus, *, previous: Mapping[str, Any] | None, now: datetime) -> dict[str, Any]:
    """The status object to store, given the one stored now (for condition transition times)."""
    previous = previous or {}
    out: dict[str, Any] = {
        "currentReplicas": status.current_replicas,
        "desiredReplicas": status.desired_replicas,
        "currentMetrics": [dict(m) for m in status.current_metrics],
        "conditions": _conditions(status.conditions, previous.get("conditions") or [], now),
    }
    if status.last_scale_time is not None:
        out["lastScaleTime"] = format_time(status.last_scale_time)
    elif previous.get("lastScaleTime"):
        out["lastScaleTime"] = previous["lastScaleTime"]
    if status.observed_generation is not None:
        out["observedGeneration"] = status.observed_generation
    if status.behavior_state is not None:
        out["behaviorState"] = behavior_state_to_json(status.behavior_state)
    if status.reference:
        out["reference"] = status.reference
    if status.targets:
        out["targets"] = status.targets
    if status.shadow is not None:
        out["shadow"] = dict(status.shadow)
    return out


class StatusWriter:
    """Writes PrometheusAutoscaler status (a document as given, or rendered and only when it changed), with
    resourceVersion and a re-read on 409."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        budget: RetryBudget | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_conflicts: int = 3,
    ) -> None:
        self._kube = kube
        self._clock = clock
        self._budget = budget or RetryBudget()
        self._sleep = sleep
        self._max_conflicts = max_conflicts

    def read(self, namespace: str, name: str) -> dict[str, Any]:
        """The custom resource as stored (spec, status, metadata with resourceVersion and generation)."""
        context = RequestContext(verb="get", resource=PLURAL, group=GROUP, namespace=namespace, name=name)
        return call_with_retries(
            lambda: self._kube.request_json(
                self._kube.custom.get_namespaced_custom_object,
                GROUP,
                VERSION,
                namespace,
                PLURAL,
                name,
                context=context,
            ),
            budget=self._budget,
            sleep=self._sleep,
        )

    def _replace_status(self, namespace: str, name: str, body: dict[str, Any]) -> None:
        context = RequestContext(
            verb="update", resource=PLURAL, group=GROUP, subresource="status", namespace=namespace, name=name
        )

        def once() -> dict[str, Any]:
            return self._kube.request_json(
                self._kube.custom.replace_namespaced_custom_object_status,
                GROUP,
                VERSION,
                namespace,
                PLURAL,
                name,
                body,
                context=context,
            )

        call_with_retries(once, budget=self._budget, sleep=self._sleep)

    def write_status(
        self,
        namespace: str,
        name: str,
        status: AutoscalerStatus,
        *,
        current: Mapping[str, Any] | None = None,
    ) -> bool:
        """Write `status` unless the stored one is equal; True when a write happened.

        `current` is the object as last seen (from `AutoscalerCache`), saving a GET; on 409 the object is
        read again and compared again. A cached copy can lag the caller's own last write, so equality with it
        proves nothing: a caller that knows the stored status differs (the daemon compares with what it wrote
        last) writes its document with `write_document`, whatever `current` holds.
        """
        clock = self._clock

        def wanted_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
            stored = obj.get("status") or {}
            wanted = status_to_json(status, previous=stored, now=clock())
            return None if wanted == stored else wanted

        return self._store(namespace, name, current, wanted_of)

    def write_document(
        self,
        namespace: str,
        name: str,
        document: dict[str, Any],
        *,
        current: Mapping[str, Any] | None = None,
        may_write: Callable[[], bool] = lambda: True,
    ) -> bool:
        """Store the status document `document` as it is (the daemon's path: it made the document with
        `status_to_json` against the status it stored last, and decided that it must be written); `current` as
        for `write_status`, and on 409 the object is read again and the same document written. `may_write` is
        asked before each attempt (the leader's fence: a replica that lost the lease while re-reading after a
        409 writes nothing); False when it said no."""
        return self._store(namespace, name, current, lambda obj: document if may_write() else None)

    def _store(
        self,
        namespace: str,
        name: str,
        current: Mapping[str, Any] | None,
        wanted_of: Callable[[Mapping[str, Any]], dict[str, Any] | None],
    ) -> bool:
        """Replace the object's status with `wanted_of(object)` (None: nothing to write), re-reading the
        object on 409 up to `max_conflicts` times; True when a write happened."""
        obj: Mapping[str, Any] = current if current is not None else self.read(namespace, name)
        conflicts = 0
        while True:
            wanted = wanted_of(obj)
            if wanted is None:
                return False
            meta = obj.get("metadata") or {}
            body = {
                "apiVersion": API_VERSION,
                "kind": KIND,
                "metadata": {"name": name, "namespace": namespace, "resourceVersion": meta.get("resourceVersion")},
                "spec": obj.get("spec") or {},
                "status": wanted,
            }
            try:
                self._replace_status(namespace, name, body)
                return True
            except Conflict:
                conflicts += 1
                log.info("status_write_conflict", namespace=namespace, name=name, conflicts=conflicts)
                if conflicts > self._max_conflicts:
                    raise
                obj = self.read(namespace, name)


class CachedObject(Mapping[str, Any]):
    """What AutoscalerCache keeps of an object: all of it but `metadata.managedFields` (the API server's field
    ownership records, often larger than the spec, that no reader of the cache needs), with the `spec` kept as
    compact JSON text and the `status` as that text packed (`pack_status`), each decoded at each read of it (a
    fresh dict each time).

    The status (conditions, current metrics, the behaviour state) is the largest part of the object and is
    read only when a target is first seen and when its status is written; as decoded JSON it cost ~18 KiB per
    object, ~180 MiB at 10,000 objects, as text ~1.1 KiB, packed ~0.2 KiB (docs/performance.md). The spec is
    read when its resourceVersion changes; `text` gives either as text, `packed_status` the status as kept, to
    compare or keep without decoding it.
    """

    __slots__ = ("_fields", "_spec", "_status")

    def __init__(self, obj: Mapping[str, Any]) -> None:
        # apiVersion, kind and the namespace are the same few strings in thousands of objects: one each.
        fields = {key: _interned(key, value) for key, value in obj.items() if key not in _AS_TEXT}
        meta = fields.get("metadata")
        if isinstance(meta, Mapping):
            fields["metadata"] = {k: _interned(k, v) for k, v in meta.items() if k != "managedFields"}
        self._fields = fields
        self._spec = _text(obj, "spec")
        status = _text(obj, "status")
        self._status = None if status is None else pack_status(status)

    def text(self, key: str) -> str | None:
        """The `spec` (as kept) or `status` (unpacked anew) as compact JSON text, None when the object has none."""
        if key not in _AS_TEXT:
            raise KeyError(f"{key}: only {', '.join(_AS_TEXT)} are kept as text")
        if key == "spec":
            return self._spec
        return None if self._status is None else unpack_status(self._status)

    def packed_status(self) -> bytes | None:
        """The `status` as kept (`pack_status`), None when the object has none."""
        return self._status

    def share_texts(self, older: CachedObject) -> None:
        """Take an older version's `spec` text and packed `status` where they are equal to this one's, so that
        what still holds the older ones (a parsed spec, a target's memory) holds no second copy."""
        if self._spec is not older._spec and self._spec == older._spec:
            self._spec = older._spec
        if self._status is not older._status and self._status == older._status:
            self._status = older._status

    def __getitem__(self, key: str) -> Any:
        if key in _AS_TEXT:
            text = self.text(key)
            if text is None:
                raise KeyError(key)
            return json.loads(text)
        return self._fields[key]

    def __contains__(self, key: object) -> bool:
        return (
            key in self._fields
            or (key == "spec" and self._spec is not None)
            or (key == "status" and self._status is not None)
        )

    def __iter__(self) -> Iterator[str]:
        yield from self._fields
        if self._spec is not None:
            yield "spec"
        if self._status is not None:
            yield "status"

    def __len__(self) -> int:
        return len(self._fields) + (self._spec is not None) + (self._status is not None)

    def __repr__(self) -> str:
        return f"CachedObject({dict(self)!r})"


_AS_TEXT = ("spec", "status")
_INTERNED = frozenset({"apiVersion", "kind", "namespace", "name"})


def _interned(key: str, value: Any) -> Any:
    return sys.intern(value) if key in _INTERNED and type(value) is str else value


def _text(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key, _ABSENT)
    return None if value is _ABSENT else json.dumps(value, separators=(",", ":"))


_ABSENT = object()


def cached_object(obj: Mapping[str, Any]) -> CachedObject:
    """The cache's copy of an object (`CachedObject`)."""
    return CachedObject(obj)


class AutoscalerCache:
    """PrometheusAutoscaler objects (`CachedObject`s: without managedFields, the status packed) from
    list+watch, in the given namespaces or all."""

    def __init__(
        self, kube: KubeClient, *, namespaces: Sequence[str] | None = None, watch_timeout_seconds: int = 300
    ) -> None:
        self.informers: list[Informer[CachedObject]] = []
        if not namespaces:
            lw = ListWatch(
                kube.custom.list_cluster_custom_object,
                (GROUP, VERSION, PLURAL),
                RequestContext(verb="list", resource=PLURAL, group=GROUP),
            )
            self.informers.append(
                Informer(kube, lw, transform=cached_object, name=PLURAL, watch_timeout_seconds=watch_timeout_seconds)
            )
        else:
            for ns in namespaces:
                lw = ListWatch(
                    kube.custom.list_namespaced_custom_object,
                    (GROUP, VERSION, ns, PLURAL),
                    RequestContext(verb="list", resource=PLURAL, group=GROUP, namespace=ns),
                )
                self.informers.append(
                    Informer(
                        kube,
                        lw,
                        transform=cached_object,
                        name=f"{PLURAL}/{ns}",
                        watch_timeout_seconds=watch_timeout_seconds,
                    )
                )

    def get(self, namespace: str, name: str) -> CachedObject | None:
        for informer in self.informers:
            found = informer.get(namespace, name)
            if found is not None:
                return found
        return None

    def items(self) -> list[CachedObject]:
        return [obj for informer in self.informers for obj in informer.items()]

    def start(self) -> None:
        for informer in self.informers:
            informer.start()

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.informers)

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return all(i.wait_for_sync(timeout) for i in self.informers)
