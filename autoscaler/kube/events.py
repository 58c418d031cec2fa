"""Kubernetes Events with the HPA's reasons and messages, aggregated as client-go's EventRecorder does.

Events go on the PrometheusAutoscaler object (on the target itself for specs read from files) as core/v1
Events with `source.component: prometheus-autoscaler`. The same (object, type, reason, message) seen again is
not a new Event: the recorder remembers the Event it created (an LRU of 4,096 keys, client-go's size) and
patches its `count` + 1 and `lastTimestamp`, so a target failing every 15 s for an hour leaves one Event
with count 240 rather than 240 Events. client-go's further spam filter (a token bucket per object) and its
"similar events" message merging are left out: the daemon emits at most a handful of events per target per
tick. Recording is best effort, as in client-go: a failure is logged here and never fails the tick.
This module must not decide when to emit; the reconciler does. The reasons and messages are the core's
(autoscaler/core/events.py): one vocabulary for what the core decides and what this layer writes.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

import structlog

from autoscaler.core.events import EventReason, EventType
from autoscaler.core.types import ObjectReference
from autoscaler.kube.client import PROJECT, KubeClient
from autoscaler.kube.errors import KubeError, NotFound, RequestContext

log = structlog.get_logger(__name__)

MERGE_PATCH = "application/merge-patch+json"


@dataclass(frozen=True, slots=True)
class InvolvedObject:
    """The object an Event is about (core/v1 ObjectReference)."""

    api_version: str
    kind: str
    name: str
    namespace: str
    uid: str = ""

    @classmethod
    def autoscaler(cls, namespace: str, name: str, uid: str = "") -> InvolvedObject:
        """The PrometheusAutoscaler object: where Events go for specs from the custom resource."""
        return cls("autoscaler.dev/v1alpha1", "PrometheusAutoscaler", name, namespace, uid)

    @classmethod
    def target(cls, namespace: str, ref: ObjectReference, uid: str = "") -> InvolvedObject:
        """The scale target itself: where Events go for specs read from files (there is no object of ours)."""
        return cls(ref.api_version or "apps/v1", ref.kind, ref.name, namespace, uid)


class EventOutcome(StrEnum):
    CREATED = "created"
    AGGREGATED = "aggregated"
    FAILED = "failed"


@dataclass(slots=True)
class _Seen:
    name: str
    count: int


def _timestamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EventRecorder:
    """Creates and aggregates Events. Thread-safe; `clock` gives the wall time written into the Event."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        component: str = PROJECT,
        instance: str = "",
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        cache_size: int = 4096,
    ) -> None:
        self._kube = kube
        self._component = component
        self._instance = instance
        self._clock = clock
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._seen: OrderedDict[tuple[str, ...], _Seen] = OrderedDict()
        self._sequence = itertools.count()

    def normal(self, obj: InvolvedObject, reason: EventReason, message: str) -> EventOutcome:
        return self.record(obj, type=EventType.NORMAL, reason=reason, message=message)

    def warning(self, obj: InvolvedObject, reason: EventReason, message: str) -> EventOutcome:
        return self.record(obj, type=EventType.WARNING, reason=reason, message=message)

    def record(self, obj: InvolvedObject, *, type: EventType, reason: EventReason, message: str) -> EventOutcome:
        """Create the Event, or add one to the count of the same Event created before."""
        key = (obj.api_version, obj.kind, obj.namespace, obj.name, obj.uid, str(type), reason, message)
        now = self._clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None:
                self._seen.move_to_end(key)
        try:
            if seen is not None:
                try:
                    self._patch(obj.namespace, seen, now)
                    return EventOutcome.AGGREGATED
                except NotFound:
                    pass  # The Event expired (the API server keeps them an hour): start a new one.
            name = self._create(obj, type=type, reason=reason, message=message, now=now)
        except KubeError as err:
            log.warning("event_record_failed", reason=reason, object=f"{obj.kind}/{obj.name}", error=str(err))
            return EventOutcome.FAILED
        with self._lock:
            self._seen[key] = _Seen(name=name, count=1)
            self._seen.move_to_end(key)
            while len(self._seen) > self._cache_size:
                self._seen.popitem(last=False)
        return EventOutcome.CREATED

    def _create(self, obj: InvolvedObject, *, type: EventType, reason: EventReason, message: str, now: datetime) -> str:
        # client-go names Events "<object name>.<unix nanoseconds in hex>"; the sequence number keeps two
        # Events recorded in the same nanosecond (or under a test's frozen clock) apart.
        name = f"{obj.name}.{int(now.timestamp() * 1e9) + next(self._sequence):x}"
        stamp = _timestamp(now)
        involved = {"apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name, "namespace": obj.namespace}
        if obj.uid:
            involved["uid"] = obj.uid
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": obj.namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": str(type),
            "source": {"component": self._component},
            "reportingComponent": self._component,
            "reportingInstance": self._instance,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        context = RequestContext(verb="create", resource="events", namespace=obj.namespace, name=name)
        data = self._kube.request_json(self._kube.core.create_namespaced_event, obj.namespace, body, context=context)
        return str((data.get("metadata") or {}).get("name") or name)

    def _patch(self, namespace: str, seen: _Seen, now: datetime) -> None:
        with self._lock:
            count = seen.count + 1
        body = {"count": count, "lastTimestamp": _timestamp(now)}
        context = RequestContext(verb="patch", resource="events", namespace=namespace, name=seen.name)
        self._kube.request_json(
            self._kube.core.patch_namespaced_event,
            seen.name,
            namespace,
            body,
            context=context,
            _content_type=MERGE_PATCH,
        )
        with self._lock:
            seen.count = count
