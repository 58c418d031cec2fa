"""Conversion between a resource's served form and its stored form.

core/v1 and events.k8s.io/v1 Events are one stored object in the real server: an Event created through
either API is listed by both (kubectl describe reads core/v1 Events). Other kinds are stored as served, with
`apiVersion` set to the version asked for (custom resources use the CRD's `None` conversion).
"""

from __future__ import annotations

from typing import Any

from autoscaler.sim.apiserver.resources import ResourceType
from autoscaler.sim.apiserver.store import clone

JSON = dict[str, Any]

# events.k8s.io/v1 field -> core/v1 field (k8s.io/kubernetes pkg/apis/events/v1 conversion).
_EVENT_FIELDS = {
    "regarding": "involvedObject",
    "note": "message",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
    "reportingController": "reportingComponent",
}
_EVENT_SHARED = ("eventTime", "reportingInstance", "action", "reason", "related", "series", "type")


def _is_events_v1(rtype: ResourceType) -> bool:
    return rtype.group == "events.k8s.io"


def to_storage(rtype: ResourceType, obj: JSON) -> JSON:
    """The stored form of an object received through `rtype`."""
    if not _is_events_v1(rtype):
        return obj
    out: JSON = {"apiVersion": "v1", "kind": "Event", "metadata": obj.get("metadata") or {}}
    for v1_name, core_name in _EVENT_FIELDS.items():
        if v1_name in obj:
            out[core_name] = obj[v1_name]
    for name in _EVENT_SHARED:
        if name in obj:
            out[name] = obj[name]
    series = obj.get("series")
    if isinstance(series, dict):
        out["series"] = {"count": series.get("count"), "lastObservedTime": series.get("lastObservedTime")}
    return out


def from_storage(rtype: ResourceType, obj: JSON) -> JSON:
    """The object as served by `rtype` (a copy when it differs from the stored form)."""
    if not _is_events_v1(rtype):
        if obj.get("apiVersion") != rtype.api_version:
            obj = dict(obj)
            obj["apiVersion"] = rtype.api_version
        return obj
    out: JSON = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": clone(obj.get("metadata") or {})}
    for v1_name, core_name in _EVENT_FIELDS.items():
        if core_name in obj:
            out[v1_name] = clone(obj[core_name])
    for name in _EVENT_SHARED:
        if name in obj:
            out[name] = clone(obj[name])
    if "eventTime" not in out or out["eventTime"] is None:
        # The real conversion fills eventTime from firstTimestamp for events written through core/v1.
        first = obj.get("firstTimestamp") or (obj.get("metadata") or {}).get("creationTimestamp")
        if isinstance(first, str):
            out["eventTime"] = first.replace("Z", ".000000Z")
    return out
