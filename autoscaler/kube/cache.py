"""Watch-fed caches of pods and workloads, as the HPA's shared informers keep them.

The daemon will ask these stores ("the pods of namespace `shop` matching `app=web`", "the scale of Deployment
`web`") instead of listing per target per tick. Each is one or more `autoscaler.kube.informer.Informer`s
(list, watch, relist on 410). This module must not decide anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from autoscaler.core.labels import SelectorSyntaxError, format_label_selector, parse_selector
from autoscaler.core.pause import PAUSE_ANNOTATIONS
from autoscaler.core.types import Pod, Scale
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import RequestContext
from autoscaler.kube.informer import Informer, ListWatch
from autoscaler.kube.pods import pod_from_json

__all__ = ["CachedScale", "PodCache", "WorkloadCache", "workload_scale"]


class PodCache:
    """Pods of one namespace or all, queryable by namespace and label selector string."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        namespace: str | None = None,
        watch_timeout_seconds: int = 300,
        page_size: int = 500,
    ) -> None:
        if namespace:
            lw = ListWatch(
                kube.core.list_namespaced_pod,
                (namespace,),
                RequestContext(verb="list", resource="pods", namespace=namespace),
            )
        else:
            lw = ListWatch(kube.core.list_pod_for_all_namespaces, (), RequestContext(verb="list", resource="pods"))
        self.informer: Informer[Pod] = Informer(
            kube,
            lw,
            transform=pod_from_json,
            name="pods",
            watch_timeout_seconds=watch_timeout_seconds,
            page_size=page_size,
            labels_of=lambda pod: pod.labels,
        )

    def pods(self, namespace: str, selector: str) -> tuple[Pod, ...]:
        """The cached pods of `namespace` whose labels match `selector` (e.g. a Scale's status.selector)."""
        return tuple(self.informer.select(namespace, parse_selector(selector)))

    def start(self) -> None:
        self.informer.start()

    def stop(self) -> None:
        self.informer.stop()

    def has_synced(self) -> bool:
        return self.informer.has_synced()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self.informer.wait_for_sync(timeout)


@dataclass(frozen=True, slots=True)
class CachedScale:
    """A workload's scale as derived from the workload object, with the object's resourceVersion."""

    scale: Scale
    resource_version: str
    kind: str
    name: str
    namespace: str
    # The workload's pause annotations only (autoscaler/core/pause.py), so the cache holds little else.
    annotations: Mapping[str, str] = field(default_factory=dict)


def workload_scale(obj: Mapping[str, Any]) -> CachedScale:
    """The /scale view of an apps/v1 Deployment, StatefulSet or ReplicaSet (what their /scale returns).

    The selector string is the API server's (core.labels.format_label_selector); a workload whose selector
    the API server could not convert raises ValueError, so the informer leaves it out and logs it.
    """
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    try:
        selector = format_label_selector(spec.get("selector"))
    except SelectorSyntaxError as err:
        raise ValueError(f"{obj.get('kind')} {meta.get('namespace')}/{meta.get('name')}: spec.selector: {err}") from err
    return CachedScale(
        scale=Scale(
            spec_replicas=int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1),
            status_replicas=int(status.get("replicas") or 0),
            selector=selector,
        ),
        resource_version=str(meta.get("resourceVersion") or ""),
        kind=str(obj.get("kind") or ""),
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        annotations={
            key: str(value) for key, value in (meta.get("annotations") or {}).items() if key in PAUSE_ANNOTATIONS
        },
    )


APPS_KINDS = {"Deployment": "deployments", "StatefulSet": "statefulsets", "ReplicaSet": "replicasets"}


class WorkloadCache:
    """Scales of apps/v1 Deployments, StatefulSets and ReplicaSets from watches, one informer per kind.

    Custom kinds with /scale (Argo Rollouts...) keep their replica paths in their CRD, so their scale is read
    through `ScaleClient.read_scale` instead; writes always go through `ScaleClient.write_scale`.
    """

    def __init__(
        self,
        kube: KubeClient,
        *,
        namespace: str | None = None,
        kinds: tuple[str, ...] = tuple(APPS_KINDS),
        watch_timeout_seconds: int = 300,
    ) -> None:
        self.informers: dict[str, Informer[CachedScale]] = {}
        for kind in kinds:
            plural = APPS_KINDS[kind]
            if namespace:
                lw = ListWatch(
                    kube.custom.list_namespaced_custom_object,
                    ("apps", "v1", namespace, plural),
                    RequestContext(verb="list", resource=plural, group="apps", namespace=namespace),
                )
            else:
                lw = ListWatch(
                    kube.custom.list_cluster_custom_object,
                    ("apps", "v1", plural),
                    RequestContext(verb="list", resource=plural, group="apps"),
                )

            def transform(obj: Mapping[str, Any], kind: str = kind) -> CachedScale:
                # List items carry no kind; the informer knows which kind it watches.
                return workload_scale({**obj, "kind": kind})

            self.informers[kind] = Informer(
                kube, lw, transform=transform, name=plural, watch_timeout_seconds=watch_timeout_seconds
            )

    def scale(self, namespace: str, kind: str, name: str) -> CachedScale | None:
        informer = self.informers.get(kind)
        return informer.get(namespace, name) if informer is not None else None

    def start(self) -> None:
        for informer in self.informers.values():
            informer.start()

    def stop(self) -> None:
        for informer in self.informers.values():
            informer.stop()

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.informers.values())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return all(i.wait_for_sync(timeout) for i in self.informers.values())
