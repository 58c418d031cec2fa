"""Discovery documents: /version, /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>, /openapi.

They are built from the `Registry`, so a CRD registered at any time shows up at once. Subresources are listed
as the real server lists them (`deployments/scale` with group autoscaling, kind Scale; `<plural>/status`).
The OpenAPI answers are minimal documents: enough for kubectl (which only needs them for apply, explain and
validation, and falls back when a schema is missing), not a schema of the served types.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from autoscaler.sim.apiserver.resources import READ_WRITE, SUBRESOURCE_VERBS, Registry, ResourceType

JSON = dict[str, Any]

KUBERNETES_VERSION = ("1", "32", "v1.32.0")


def version() -> JSON:
    major, minor, git = KUBERNETES_VERSION
    return {
        "major": major,
        "minor": minor,
        "gitVersion": git,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2024-12-11T00:00:00Z",
        "goVersion": "go1.23.3",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def _storage_hash(rtype: ResourceType) -> str:
    digest = hashlib.sha256(f"{rtype.group}/{rtype.version}/{rtype.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _resources(rtype: ResourceType) -> list[JSON]:
    main: JSON = {
        "name": rtype.plural,
        "singularName": rtype.singular,
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": list(READ_WRITE),
        "storageVersionHash": _storage_hash(rtype),
    }
    if rtype.short_names:
        main["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        main["categories"] = list(rtype.categories)
    out = [main]
    if rtype.scale is not None:
        out.append({
            "name": f"{rtype.plural}/scale", "singularName": "", "namespaced": rtype.namespaced,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": list(SUBRESOURCE_VERBS),
        })  # fmt: skip
    if rtype.status:
        out.append({
            "name": f"{rtype.plural}/status", "singularName": "", "namespaced": rtype.namespaced,
            "kind": rtype.kind, "verbs": list(SUBRESOURCE_VERBS),
        })  # fmt: skip
    return out


def resource_list(registry: Registry, group: str, version_name: str) -> JSON | None:
    """The APIResourceList of one group version, or None when it is not served."""
    types = [t for t in registry.all() if (t.group, t.version) == (group, version_name)]
    if not types:
        return None
    resources = [r for t in sorted(types, key=lambda t: t.plural) for r in _resources(t)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version_name}" if group else version_name,
        "resources": resources,
    }


def core_versions(server_address: str) -> JSON:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(name: str, versions: list[str]) -> JSON:
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": listed, "preferredVersion": listed[0]}


def group_list(registry: Registry) -> JSON:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(name, versions) for name, versions in registry.groups() if name],
    }


def group(registry: Registry, name: str) -> JSON | None:
    for group_name, versions in registry.groups():
        if group_name == name and name:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}
    return None


def openapi_v2() -> JSON:
    git = KUBERNETES_VERSION[2]
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": git}, "paths": {}, "definitions": {}}


def openapi_v3(registry: Registry) -> JSON:
    """The /openapi/v3 index: one entry per group version (each answered by `openapi_v3_group`)."""
    paths: JSON = {}
    for name, versions in registry.groups():
        for version_name in versions:
            path = f"apis/{name}/{version_name}" if name else f"api/{version_name}"
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}"}
    return {"paths": paths}


def openapi_v3_group(registry: Registry, path: str) -> JSON | None:
    """One group version's OpenAPI v3 document: no schemas, but a PATCH operation per kind that declares the
    `fieldValidation` parameter, which is how kubectl 1.32 decides that the server validates fields itself
    (without it, kubectl falls back to client-side validation and wants the protobuf /openapi/v2)."""
    parts = [p for p in path.split("/") if p][2:]
    if parts[:1] == ["api"] and len(parts) == 2:
        group, version_name = "", parts[1]
    elif parts[:1] == ["apis"] and len(parts) == 3:
        group, version_name = parts[1], parts[2]
    else:
        return None
    types = [t for t in registry.all() if (t.group, t.version) == (group, version_name)]
    if not types:
        return None
    prefix = f"/apis/{group}/{version_name}" if group else f"/api/{version_name}"
    paths: JSON = {}
    for rtype in types:
        scope = "/namespaces/{namespace}" if rtype.namespaced else ""
        gvk = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
        parameters = [
            {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
            for name in ("dryRun", "fieldManager", "fieldValidation", "force")
        ]
        paths[f"{prefix}{scope}/{rtype.plural}/{{name}}"] = {
            "patch": {
                "operationId": f"patch{rtype.kind}",
                "parameters": parameters,
                "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk,
            }
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION[2]},
        "paths": paths,
        "components": {"schemas": {}},
    }
