"""The resource types the emulator serves: the built-in subset and those defined by CustomResourceDefinitions.

A `ResourceType` holds what discovery, routing and the write strategies need to know about a kind: its
group/version, plural and kind, scope, short names, subresources, the merge-patch types it accepts, the field
selectors it supports and (for custom resources) its printer columns and scale paths. `Registry` is the
thread-safe set of served types; a CRD created through the API registers its type here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autoscaler.sim.apiserver.selectors import FieldGetter, path_getter

JSON = dict[str, Any]

READ_WRITE = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """A CRD additionalPrinterColumn: `json_path` is evaluated by `tables`."""

    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True, slots=True)
class ScalePaths:
    """Where a custom resource keeps what its /scale subresource shows (CRD subresources.scale)."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str = ""


@dataclass(frozen=True, slots=True)
class ResourceType:
    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status: bool = False
    scale: ScalePaths | None = None
    custom: bool = False
    # Kinds whose spec changes bump metadata.generation.
    generation: bool = False
    printer_columns: tuple[PrinterColumn, ...] = ()
    field_getters: Mapping[str, FieldGetter] = field(default_factory=dict)
    # Where the objects live when another type owns the storage (events.k8s.io events are core events).
    storage: tuple[str, str] | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        return self.storage or (self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def patch_types(self) -> tuple[str, ...]:
        from autoscaler.sim.apiserver.patch import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH

        if self.custom:
            return (JSON_PATCH, MERGE_PATCH)
        return (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)


def _meta_getters(namespaced: bool) -> dict[str, FieldGetter]:
    getters: dict[str, FieldGetter] = {"metadata.name": path_getter("metadata", "name")}
    if namespaced:
        getters["metadata.namespace"] = path_getter("metadata", "namespace")
    return getters


def _getters(namespaced: bool, **paths: str) -> dict[str, FieldGetter]:
    getters = _meta_getters(namespaced)
    for name, path in paths.items():
        getters[name.replace("__", ".")] = path_getter(*path.split("."))
    return getters


def _pod_ip(obj: Mapping[str, Any]) -> str:
    return str((obj.get("status") or {}).get("podIP") or "")


_POD_GETTERS = _getters(
    True,
    spec__nodeName="spec.nodeName",
    spec__restartPolicy="spec.restartPolicy",
    spec__schedulerName="spec.schedulerName",
    spec__serviceAccountName="spec.serviceAccountName",
    status__phase="status.phase",
    status__nominatedNodeName="status.nominatedNodeName",
)
_POD_GETTERS["status.podIP"] = _pod_ip

_CORE_EVENT_GETTERS = _getters(
    True,
    involvedObject__kind="involvedObject.kind",
    involvedObject__namespace="involvedObject.namespace",
    involvedObject__name="involvedObject.name",
    involvedObject__uid="involvedObject.uid",
    involvedObject__apiVersion="involvedObject.apiVersion",
    involvedObject__resourceVersion="involvedObject.resourceVersion",
    involvedObject__fieldPath="involvedObject.fieldPath",
    reason="reason",
    reportingComponent="reportingComponent",
    source="source.component",
    type="type",
)

_EVENTS_V1_GETTERS = _getters(
    True,
    regarding__kind="regarding.kind",
    regarding__namespace="regarding.namespace",
    regarding__name="regarding.name",
    regarding__uid="regarding.uid",
    regarding__apiVersion="regarding.apiVersion",
    regarding__resourceVersion="regarding.resourceVersion",
    regarding__fieldPath="regarding.fieldPath",
    reason="reason",
    reportingController="reportingController",
    type="type",
)

_SCALE_DEFAULT = ScalePaths(label_selector="")

BUILTIN: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "namespaces", "namespace", "Namespace", namespaced=False, short_names=("ns",),
                 status=True, field_getters=_getters(False, status__phase="status.phase")),
    ResourceType("", "v1", "pods", "pod", "Pod", short_names=("po",), categories=("all",), status=True,
                 field_getters=_POD_GETTERS),
    ResourceType("", "v1", "configmaps", "configmap", "ConfigMap", short_names=("cm",),
                 field_getters=_meta_getters(True)),
    ResourceType("", "v1", "events", "event", "Event", short_names=("ev",),
                 field_getters=_CORE_EVENT_GETTERS),
    ResourceType("apps", "v1", "deployments", "deployment", "Deployment", short_names=("deploy",),
                 categories=("all",), status=True, scale=_SCALE_DEFAULT, generation=True,
                 field_getters=_meta_getters(True)),
    ResourceType("apps", "v1", "statefulsets", "statefulset", "StatefulSet", short_names=("sts",),
                 categories=("all",), status=True, scale=_SCALE_DEFAULT, generation=True,
                 field_getters=_meta_getters(True)),
    ResourceType("apps", "v1", "replicasets", "replicaset", "ReplicaSet", short_names=("rs",),
                 categories=("all",), status=True, scale=_SCALE_DEFAULT, generation=True,
                 field_getters=_getters(True, status__replicas="status.replicas")),
    ResourceType("autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler",
                 "HorizontalPodAutoscaler", short_names=("hpa",), categories=("all",), status=True, generation=True,
                 field_getters=_meta_getters(True)),
    ResourceType("events.k8s.io", "v1", "events", "event", "Event", short_names=("ev",),
                 field_getters=_EVENTS_V1_GETTERS, storage=("", "events")),
    ResourceType("coordination.k8s.io", "v1", "leases", "lease", "Lease",
                 field_getters=_meta_getters(True)),
    ResourceType("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
                 "CustomResourceDefinition", namespaced=False, short_names=("crd", "crds"), status=True,
                 generation=True, field_getters=_meta_getters(False)),
)  # fmt: skip

# Group versions in the order the real server lists them in discovery (core first, then by priority).
GROUP_ORDER = ("", "apps", "events.k8s.io", "autoscaling", "coordination.k8s.io", "apiextensions.k8s.io")


def from_crd(crd: Mapping[str, Any]) -> list[ResourceType]:
    """The served versions of a CustomResourceDefinition (apiextensions.k8s.io/v1) as resource types."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural, kind = spec.get("group", ""), names.get("plural", ""), names.get("kind", "")
    if not (group and plural and kind):
        raise ValueError("a CustomResourceDefinition needs spec.group, spec.names.plural and spec.names.kind")
    namespaced = spec.get("scope", "Namespaced") == "Namespaced"
    out = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        columns = tuple(
            PrinterColumn(
                name=c["name"],
                type=c.get("type", "string"),
                json_path=c.get("jsonPath", ""),
                description=c.get("description", ""),
                format=c.get("format", ""),
                priority=int(c.get("priority", 0)),
            )
            for c in version.get("additionalPrinterColumns") or []
        ) or (PrinterColumn("Age", "date", ".metadata.creationTimestamp"),)
        out.append(
            ResourceType(
                group,
                version["name"],
                plural,
                names.get("singular") or kind.lower(),
                kind,
                namespaced=namespaced,
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                status="status" in subresources,
                scale=None
                if scale is None
                else ScalePaths(
                    spec_replicas=scale.get("specReplicasPath", ".spec.replicas"),
                    status_replicas=scale.get("statusReplicasPath", ".status.replicas"),
                    label_selector=scale.get("labelSelectorPath", ""),
                ),
                custom=True,
                generation=True,
                printer_columns=columns,
                field_getters=_meta_getters(namespaced),
            )
        )
    return out


class Registry:
    """The served resource types, looked up by group/version/plural or by apiVersion/kind."""

    def __init__(self, types: Iterable[ResourceType] = BUILTIN) -> None:
        self._lock = threading.Lock()
        self._types: list[ResourceType] = list(types)

    def add(self, new: Iterable[ResourceType]) -> None:
        with self._lock:
            for rtype in new:
                self._types = [
                    t
                    for t in self._types
                    if (t.group, t.version, t.plural) != (rtype.group, rtype.version, rtype.plural)
                ]
                self._types.append(rtype)

    def remove_group_resource(self, group: str, plural: str) -> None:
        with self._lock:
            self._types = [t for t in self._types if (t.group, t.plural) != (group, plural)]

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._types)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return next((t for t in self.all() if (t.group, t.version, t.plural) == (group, version, plural)), None)

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return next((t for t in self.all() if (t.api_version, t.kind) == (api_version, kind)), None)

    def by_name(self, name: str) -> ResourceType | None:
        """A type by plural, singular or short name (`deploy`, `pas`), or `plural.group`."""
        for rtype in self.all():
            names = {rtype.plural, rtype.singular, *rtype.short_names, f"{rtype.plural}.{rtype.group}"}
            if name in names:
                return rtype
        return None

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions) pairs, the core group first, built-in groups in the real server's order."""
        found: dict[str, list[str]] = {}
        for rtype in self.all():
            versions = found.setdefault(rtype.group, [])
            if rtype.version not in versions:
                versions.append(rtype.version)
        ordered = [g for g in GROUP_ORDER if g in found] + sorted(g for g in found if g not in GROUP_ORDER)
        return [(g, found[g]) for g in ordered]
