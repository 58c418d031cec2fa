"""The scale subresource of any scalable kind: read it, and write it safely.

Deployments, StatefulSets, ReplicaSets and any custom resource with a /scale subresource (Argo Rollouts...)
are reached the same way: the `scaleTargetRef` is resolved through discovery and `/scale` is read and
replaced at `/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}/scale`.

Writes are guarded by the resourceVersion of the read they were decided on. On 409 the scale is read again and
the caller's `decide` function is asked again with the fresh scale, instead of re-sending a stale number: a
write that raced with a user's `kubectl scale` is decided on what the user wrote. Because every write carries
a resourceVersion, retrying a write whose answer was lost is safe too: if the first one landed, the retry gets
409 and the re-read shows it. 5xx, timeouts and 429 are retried within a `RetryBudget`; every failure ends as
a typed error from `autoscaler.kube.errors`. This module must not decide replica counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from autoscaler.core.types import ObjectReference, Scale
from autoscaler.kube.client import KubeClient
from autoscaler.kube.discovery import ApiResource, Discovery
from autoscaler.kube.errors import Conflict, InvalidRequest, RequestContext, TargetNotFound
from autoscaler.kube.retry import RetryBudget, call_with_retries

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class ScaleRead:
    """A scale as read, with the resourceVersion a write must carry."""

    scale: Scale
    resource_version: str
    resource: ApiResource


@dataclass(frozen=True, slots=True)
class ScaleWrite:
    """The outcome of `write_scale`: the scale after it, whether it wrote, and how many 409s it met."""

    scale: Scale
    written: bool
    previous_replicas: int
    conflicts: int = 0


def scale_from_json(data: dict[str, Any]) -> Scale:
    """The core's `Scale` from an autoscaling/v1 Scale object."""
    spec = data.get("spec") or {}
    status = data.get("status") or {}
    return Scale(
        spec_replicas=int(spec.get("replicas") or 0),
        status_replicas=int(status.get("replicas") or 0),
        selector=str(status.get("selector") or ""),
    )


class ScaleClient:
    """Reads and writes /scale of the targets, with bounded retries and conflict re-reads. Thread-safe."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        discovery: Discovery | None = None,
        budget: RetryBudget | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_conflicts: int = 3,
    ) -> None:
        self._kube = kube
        self._discovery = discovery or Discovery(kube)
        self._budget = budget or RetryBudget()
        self._sleep = sleep
        self._max_conflicts = max_conflicts

    def _resource(self, ref: ObjectReference) -> ApiResource:
        resource = call_with_retries(
            lambda: self._discovery.resolve(ref.api_version, ref.kind), budget=self._budget, sleep=self._sleep
        )
        if "scale" not in resource.subresources:
            raise TargetNotFound(
                f"{ref.kind} ({resource.api_version}) has no scale subresource",
                context=RequestContext(verb="get", resource=resource.plural, subresource="scale", name=ref.name),
            )
        if not resource.group:
            raise InvalidRequest(
                f"scale targets in the core API group ({ref.kind}) are not supported",
                context=RequestContext(verb="get", resource=resource.plural, subresource="scale", name=ref.name),
            )
        return resource

    @staticmethod
    def _context(verb: str, resource: ApiResource, namespace: str, name: str) -> RequestContext:
        return RequestContext(
            verb=verb,
            resource=resource.plural,
            group=resource.group,
            subresource="scale",
            namespace=namespace,
            name=name,
        )

    def _read(self, namespace: str, ref: ObjectReference, resource: ApiResource) -> ScaleRead:
        context = self._context("get", resource, namespace, ref.name)

        def once() -> dict[str, Any]:
            return self._kube.request_json(
                self._kube.custom.get_namespaced_custom_object_scale,
                resource.group,
                resource.version,
                namespace,
                resource.plural,
                ref.name,
                context=context,
                target=True,
            )

        data = call_with_retries(once, budget=self._budget, sleep=self._sleep)
        try:
            scale = scale_from_json(data)
        except (TypeError, ValueError) as err:
            raise InvalidRequest(f"{context.describe()}: unreadable Scale: {err}", context=context) from err
        rv = str((data.get("metadata") or {}).get("resourceVersion") or "")
        return ScaleRead(scale=scale, resource_version=rv, resource=resource)

    def read_scale(self, namespace: str, ref: ObjectReference) -> ScaleRead:
        """The target's scale (spec and status replicas, selector) and its resourceVersion."""
        return self._read(namespace, ref, self._resource(ref))

    def _replace(self, namespace: str, ref: ObjectReference, read: ScaleRead, replicas: int) -> dict[str, Any]:
        resource = read.resource
        context = self._context("update", resource, namespace, ref.name)
        body = {
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {"name": ref.name, "namespace": namespace, "resourceVersion": read.resource_version},
            "spec": {"replicas": replicas},
        }

        def once() -> dict[str, Any]:
            return self._kube.request_json(
                self._kube.custom.replace_namespaced_custom_object_scale,
                resource.group,
                resource.version,
                namespace,
                resource.plural,
                ref.name,
                body,
                context=context,
                target=True,
            )

        return call_with_retries(once, budget=self._budget, sleep=self._sleep)

    def write_scale(
        self,
        namespace: str,
        ref: ObjectReference,
        decide: Callable[[Scale], int | None],
        *,
        known: tuple[Scale, str] | None = None,
    ) -> ScaleWrite:
        """Ask `decide` for the replica count and write it, guarded by the resourceVersion it was decided on.

        `known` is the scale as last seen and its resourceVersion (from `WorkloadCache`, or an earlier
        `read_scale`): the first attempt is decided on it and costs one PUT; without it the scale is read
        first. `decide` returns the desired spec.replicas, or None to leave the scale alone. On 409 the scale
        is read again and `decide` is called again with the fresh scale (at most `max_conflicts` times, then
        `Conflict` is raised). Nothing is written when the decision equals the current spec.replicas.
        """
        resource = self._resource(ref)
        conflicts = 0
        read = ScaleRead(scale=known[0], resource_version=known[1], resource=resource) if known else None
        while True:
            if read is None:
                read = self._read(namespace, ref, resource)
            desired = decide(read.scale)
            if desired is None or desired == read.scale.spec_replicas:
                return ScaleWrite(
                    scale=read.scale,
                    written=False,
                    previous_replicas=read.scale.spec_replicas,
                    conflicts=conflicts,
                )
            try:
                data = self._replace(namespace, ref, read, desired)
            except Conflict:
                conflicts += 1
                log.info(
                    "scale_write_conflict",
                    namespace=namespace,
                    target=f"{ref.kind}/{ref.name}",
                    conflicts=conflicts,
                    resource_version=read.resource_version,
                )
                if conflicts > self._max_conflicts:
                    raise
                read = None
                continue
            written = scale_from_json(data)
            return ScaleWrite(
                scale=written,
                written=True,
                previous_replicas=read.scale.spec_replicas,
                conflicts=conflicts,
            )
