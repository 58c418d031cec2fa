"""Resolving a `scaleTargetRef` (apiVersion, kind) to a REST resource through API discovery, with a cache.

The HPA resolves its target through a RESTMapper fed by discovery; this is the same idea in small: one
`GET /apis/{group}/{version}` (or `/api/v1`) per group version, cached for `ttl_seconds`, refreshed early
(at most every `miss_refresh_seconds`) when a kind is missing, so a CRD installed after start is found.
The official dynamic client would do this too, but it discovers every group at start and writes a cache file
under $TMPDIR unless told otherwise; a per-group-version lookup is all the daemon needs.
This module must not read or write any object.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import NotFound, RequestContext, TargetNotFound

# A scaleTargetRef without apiVersion: kubectl autoscale and most manifests mean apps/v1.
DEFAULT_API_VERSION = "apps/v1"


@dataclass(frozen=True, slots=True)
class ApiResource:
    """One resource of a group version, as discovery lists it, with the subresources it offers."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    subresources: frozenset[str] = frozenset()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def split_api_version(api_version: str) -> tuple[str, str]:
    """("apps", "v1") from "apps/v1", ("", "v1") from "v1"; an empty apiVersion means DEFAULT_API_VERSION."""
    api_version = api_version or DEFAULT_API_VERSION
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version


def _parse_resource_list(group: str, version: str, data: dict[str, Any]) -> dict[str, ApiResource]:
    subresources: dict[str, set[str]] = {}
    mains: list[dict[str, Any]] = []
    for item in data.get("resources") or []:
        name = str(item.get("name", ""))
        if "/" in name:
            main, _, sub = name.partition("/")
            subresources.setdefault(main, set()).add(sub)
        else:
            mains.append(item)
    by_kind: dict[str, ApiResource] = {}
    for item in mains:
        name = str(item["name"])
        by_kind[str(item.get("kind", ""))] = ApiResource(
            group=group,
            version=version,
            plural=name,
            kind=str(item.get("kind", "")),
            namespaced=bool(item.get("namespaced", False)),
            subresources=frozenset(subresources.get(name, ())),
        )
    return by_kind


class Discovery:
    """Kind -> resource lookups, cached per group version. Thread-safe."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        ttl_seconds: float = 600.0,
        miss_refresh_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._kube = kube
        self._ttl = ttl_seconds
        self._miss_refresh = miss_refresh_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], tuple[float, dict[str, ApiResource]]] = {}

    def _fetch(self, group: str, version: str) -> dict[str, ApiResource]:
        context = RequestContext(verb="get", resource=f"discovery {group or 'core'}/{version}")
        try:
            if group:
                data = self._kube.request_json(self._kube.custom.get_api_resources, group, version, context=context)
            else:
                data = self._kube.request_json(self._kube.core.get_api_resources, context=context)
        except NotFound as err:
            raise TargetNotFound(
                f"the API server does not serve {group + '/' if group else ''}{version}", context=context
            ) from err
        return _parse_resource_list(group, version, data)

    def resolve(self, api_version: str, kind: str) -> ApiResource:
        """The resource serving `kind` in `api_version`, or `TargetNotFound`."""
        group, version = split_api_version(api_version)
        key = (group, version)
        now = self._clock()
        with self._lock:
            cached = self._cache.get(key)
        if cached is None or now - cached[0] > self._ttl:
            cached = (now, self._fetch(group, version))
            with self._lock:
                self._cache[key] = cached
        found = cached[1].get(kind)
        if found is None and now - cached[0] > self._miss_refresh:
            cached = (now, self._fetch(group, version))
            with self._lock:
                self._cache[key] = cached
            found = cached[1].get(kind)
        if found is None:
            raise TargetNotFound(
                f"no kind {kind!r} in {group + '/' if group else ''}{version}",
                context=RequestContext(verb="get", resource=f"discovery {group or 'core'}/{version}"),
            )
        return found

    def invalidate(self) -> None:
        with self._lock:
            self._cache.clear()
