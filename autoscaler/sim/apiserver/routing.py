"""URL paths to what they name: a discovery document, or a resource (group, version, namespace, plural,
name, subresource) and the Kubernetes verb of the request.

`route()` answers None for paths outside the Kubernetes API (the caller serves health and emulator paths,
or 404). It raises `ApiError` for a served prefix with an unknown resource, as the real server's 404.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoscaler.sim.apiserver import errors
from autoscaler.sim.apiserver.resources import Registry, ResourceType


@dataclass(frozen=True, slots=True)
class Discovery:
    """A discovery path: kind is one of version, api, apis, group, resources; with group/version."""

    kind: str
    group: str = ""
    version: str = ""


@dataclass(frozen=True, slots=True)
class ResourcePath:
    rtype: ResourceType
    namespace: str | None  # None: all namespaces (or a cluster-scoped type)
    name: str = ""
    subresource: str = ""

    def verb(self, method: str, *, watch: bool) -> str:
        if method == "GET":
            return "get" if self.name else ("watch" if watch else "list")
        if method == "DELETE":
            return "delete" if self.name else "deletecollection"
        return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def route(path: str, registry: Registry) -> Discovery | ResourcePath | None:
    parts = [p for p in path.split("/") if p]
    if parts == ["version"]:
        return Discovery("version")
    if not parts or parts[0] not in ("api", "apis"):
        return None
    if parts[0] == "api":
        if len(parts) == 1:
            return Discovery("api")
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) == 1:
            return Discovery("apis")
        if len(parts) == 2:
            return Discovery("group", parts[1])
        group, version, rest = parts[1], parts[2], parts[3:]
    if not rest:
        return Discovery("resources", group, version)
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3 and registry.lookup(group, version, rest[2]) is not None:
        namespace, rest = rest[1], rest[2:]
    rtype = registry.lookup(group, version, rest[0])
    if rtype is None or len(rest) > 3 or (namespace is not None and not rtype.namespaced):
        raise errors.page_not_found()
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if subresource and not (
        (subresource == "status" and rtype.status) or (subresource == "scale" and rtype.scale is not None)
    ):
        raise errors.page_not_found()
    if not rtype.namespaced:
        namespace = ""
    return ResourcePath(rtype, namespace, name, subresource)
