"""Events as the controllers record them: core/v1 Events named `<object>.<hex time>` like client-go's
recorder names them, one per occurrence (no aggregation), written straight to the store.
"""

from __future__ import annotations

import uuid
from typing import Any

from autoscaler.sim.apiserver.clock import Clock, timestamp
from autoscaler.sim.apiserver.resources import Registry
from autoscaler.sim.apiserver.store import Store

JSON = dict[str, Any]


class EventRecorder:
    """Writes Normal events about objects; does nothing when not `enabled`."""

    def __init__(self, store: Store, registry: Registry, clock: Clock, *, enabled: bool = True) -> None:
        self._store = store
        self._clock = clock
        self._enabled = enabled
        events = registry.lookup("", "v1", "events")
        assert events is not None
        self._events = events
        self._event_sequence = 0

    def _name(self, name: str) -> str:
        """<object>.<hex nanoseconds>, as client-go's recorder names events (chronological by name)."""
        nanos = int(self._clock.now().timestamp() * 1e9)
        self._event_sequence = max(self._event_sequence + 1, nanos)
        return f"{name}.{self._event_sequence:x}"

    def pod_event(self, workload: JSON, pod_name: str, *, deleted: bool) -> None:
        name, reason = workload["metadata"]["name"], "SuccessfulDelete" if deleted else "SuccessfulCreate"
        if workload.get("kind") == "StatefulSet":
            verb = "delete" if deleted else "create"
            self.event(
                workload, reason, f"{verb} Pod {pod_name} in StatefulSet {name} successful", "statefulset-controller"
            )
        else:
            message = f"{'Deleted' if deleted else 'Created'} pod: {pod_name}"
            self.event(workload, reason, message, "replicaset-controller")

    def event(self, obj: JSON, reason: str, message: str, component: str) -> None:
        if not self._enabled:
            return
        kind, meta = obj.get("kind", ""), obj["metadata"]
        now = timestamp(self._clock.now())
        event = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": self._name(meta["name"]), "namespace": meta["namespace"],
                         "uid": str(uuid.uuid4()), "creationTimestamp": now},
            "involvedObject": {"apiVersion": obj.get("apiVersion", "apps/v1"), "kind": kind, "name": meta["name"],
                               "namespace": meta["namespace"], "uid": meta["uid"],
                               "resourceVersion": meta.get("resourceVersion", "")},
            "reason": reason, "message": message, "type": "Normal", "count": 1,
            "source": {"component": component}, "firstTimestamp": now, "lastTimestamp": now,
            "eventTime": None, "reportingComponent": component, "reportingInstance": "",
        }  # fmt: skip
        self._store.create(self._events, event)
