"""Server-side printing: the meta.k8s.io/v1 `Table` that `kubectl get` asks for.

Built-in kinds get the columns the real server's printers produce (deployments: NAME READY UP-TO-DATE
AVAILABLE AGE; pods: NAME READY STATUS RESTARTS AGE; ...); custom resources get their CRD's
additionalPrinterColumns, evaluated with `jsonpath` (a `date` cell is rendered as an age, as the real CRD
table convertor does). Ages are computed here from the emulator's clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from autoscaler.core.labels import format_label_selector
from autoscaler.sim.apiserver import jsonpath
from autoscaler.sim.apiserver.clock import parse_timestamp
from autoscaler.sim.apiserver.resources import PrinterColumn, ResourceType

JSON = dict[str, Any]
Row = Callable[[JSON, datetime], list[Any]]


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _age(value: Any, now: datetime) -> str:
    if not isinstance(value, str) or not value:
        return "<unknown>"
    return human_duration((now - parse_timestamp(value)).total_seconds())


def _meta(obj: JSON) -> JSON:
    return obj.get("metadata") or {}


def _template_containers(obj: JSON) -> list[JSON]:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return list(spec.get("containers") or [])


def _names_images(obj: JSON) -> list[str]:
    containers = _template_containers(obj)
    return [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)]


def _col(name: str, type_: str = "string", *, fmt: str = "", priority: int = 0, description: str = "") -> JSON:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


_NAME = _col("Name", fmt="name", description="Name must be unique within a namespace.")
_AGE = _col("Age", description="CreationTimestamp is the server time when this object was created.")


def _deployment(obj: JSON, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _meta(obj).get("name"),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        _age(_meta(obj).get("creationTimestamp"), now),
        *_names_images(obj),
        format_label_selector(spec.get("selector")),
    ]


def _statefulset(obj: JSON, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _meta(obj).get("name"),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        _age(_meta(obj).get("creationTimestamp"), now),
        *_names_images(obj),
    ]


def _replicaset(obj: JSON, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _meta(obj).get("name"),
        spec.get("replicas", 0),
        status.get("replicas", 0),
        status.get("readyReplicas", 0),
        _age(_meta(obj).get("creationTimestamp"), now),
        *_names_images(obj),
        format_label_selector(spec.get("selector")),
    ]


def pod_status_reason(obj: JSON) -> str:
    """The STATUS column of `kubectl get pods` (phase, or the reason a container is waiting)."""
    status = obj.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
    if _meta(obj).get("deletionTimestamp"):
        reason = "Terminating"
    return str(reason)


def _pod(obj: JSON, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    statuses = status.get("containerStatuses") or []
    total = len(spec.get("containers") or [])
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in statuses)
    gates = spec.get("readinessGates") or []
    return [
        _meta(obj).get("name"),
        f"{ready}/{total}",
        pod_status_reason(obj),
        str(restarts),
        _age(_meta(obj).get("creationTimestamp"), now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


def _event(obj: JSON, now: datetime) -> list[Any]:
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    last = obj.get("lastTimestamp") or obj.get("deprecatedLastTimestamp") or obj.get("eventTime")
    first = obj.get("firstTimestamp") or obj.get("deprecatedFirstTimestamp") or obj.get("eventTime")
    source = obj.get("source") or obj.get("deprecatedSource") or {}
    return [
        _age(last, now),
        obj.get("type", ""),
        obj.get("reason", ""),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        involved.get("fieldPath", ""),
        source.get("component") or obj.get("reportingComponent") or obj.get("reportingController") or "",
        obj.get("message") or obj.get("note") or "",
        _age(first, now),
        obj.get("count") or obj.get("deprecatedCount") or 1,
        _meta(obj).get("name"),
    ]


_BUILTIN: dict[tuple[str, str], tuple[list[JSON], Row]] = {
    ("apps", "deployments"): (
        [_NAME, _col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer"), _AGE,
         _col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)],
        _deployment,
    ),
    ("apps", "statefulsets"): (
        [_NAME, _col("Ready"), _AGE, _col("Containers", priority=1), _col("Images", priority=1)],
        _statefulset,
    ),
    ("apps", "replicasets"): (
        [_NAME, _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"), _AGE,
         _col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)],
        _replicaset,
    ),
    ("", "pods"): (
        [_NAME, _col("Ready"), _col("Status"), _col("Restarts"), _AGE, _col("IP", priority=1),
         _col("Node", priority=1), _col("Nominated Node", priority=1), _col("Readiness Gates", priority=1)],
        _pod,
    ),
    ("", "configmaps"): (
        [_NAME, _col("Data", "integer"), _AGE],
        lambda o, now: [_meta(o).get("name"), len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                        _age(_meta(o).get("creationTimestamp"), now)],
    ),
    ("", "namespaces"): (
        [_NAME, _col("Status"), _AGE],
        lambda o, now: [_meta(o).get("name"), (o.get("status") or {}).get("phase", "Active"),
                        _age(_meta(o).get("creationTimestamp"), now)],
    ),
    ("", "events"): (
        [_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Subobject", priority=1),
         _col("Source", priority=1), _col("Message"), _col("First Seen", priority=1),
         _col("Count", "integer", priority=1), _col("Name", priority=1)],
        _event,
    ),
    ("coordination.k8s.io", "leases"): (
        [_NAME, _col("Holder"), _AGE],
        lambda o, now: [_meta(o).get("name"), (o.get("spec") or {}).get("holderIdentity") or "",
                        _age(_meta(o).get("creationTimestamp"), now)],
    ),
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        [_NAME, _col("Created At", "date")],
        lambda o, now: [_meta(o).get("name"), _meta(o).get("creationTimestamp")],
    ),
}  # fmt: skip


def _custom_cell(column: PrinterColumn, obj: JSON, now: datetime) -> Any:
    try:
        values = jsonpath.find(obj, column.json_path)
    except ValueError:
        return None
    if not values or values[0] is None:
        return None
    value = values[0]
    if column.type == "integer":
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if column.type == "number":
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if column.type == "boolean":
        return value if isinstance(value, bool) else None
    if column.type == "date":
        # The CRD table convertor renders dates as ages (metatable.ConvertToHumanReadableDateType).
        return _age(value, now) if isinstance(value, str) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _columns_and_row(rtype: ResourceType) -> tuple[list[JSON], Row]:
    builtin = _BUILTIN.get(rtype.key)
    if builtin is not None and not rtype.custom:
        return builtin
    if rtype.custom:
        columns = [_NAME] + [
            _col(c.name, c.type, fmt=c.format, priority=c.priority, description=c.description)
            for c in rtype.printer_columns
        ]

        def row(obj: JSON, now: datetime) -> list[Any]:
            return [_meta(obj).get("name")] + [_custom_cell(c, obj, now) for c in rtype.printer_columns]

        return columns, row
    return [_NAME, _AGE], lambda o, now: [_meta(o).get("name"), _age(_meta(o).get("creationTimestamp"), now)]


def _row_object(obj: JSON, include: str) -> JSON | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata") or {}}


def table(
    rtype: ResourceType,
    items: list[JSON],
    *,
    now: datetime,
    include_object: str = "Metadata",
    list_meta: JSON | None = None,
) -> JSON:
    """A meta.k8s.io/v1 Table of `items` (one item for a GET of a single object)."""
    columns, row = _columns_and_row(rtype)
    rows = []
    for obj in items:
        entry: JSON = {"cells": row(obj, now)}
        row_object = _row_object(obj, include_object)
        if row_object is not None:
            entry["object"] = row_object
        rows.append(entry)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta or {},
        "columnDefinitions": columns,
        "rows": rows,
    }
