"""What the autoscaler a spec in shadow mode would replace wants: HorizontalPodAutoscalers and KEDA ScaledObjects.

Read from watch-fed caches (one list+watch of autoscaling/v2 horizontalpodautoscalers, and of keda.sh/v1alpha1
scaledobjects, per namespace watched or for all), never one GET per target per tick. Each cache starts on its
first use, so a daemon without shadow specs neither lists them nor needs the permission (docs/rbac.md); the
first use waits a moment for the first list, and a target asked about before it lands reads "not synced yet".
A ScaledObject's HPA is `status.hpaName`, else `spec.advanced.horizontalPodAutoscalerConfig.name`, else
`keda-hpa-<name>` (KEDA's naming). This module must not decide anything.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from autoscaler.core.shadow import ShadowReading
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import RequestContext
from autoscaler.kube.informer import Informer, ListWatch

HPA_GROUP, HPA_VERSION, HPA_PLURAL, HPA_KIND = (
    "autoscaling",
    "v2",
    "horizontalpodautoscalers",
    "HorizontalPodAutoscaler",
)
KEDA_GROUP, KEDA_VERSION, KEDA_PLURAL, KEDA_KIND = "keda.sh", "v1alpha1", "scaledobjects", "ScaledObject"
KEDA_HPA_PREFIX = "keda-hpa-"
FIRST_SYNC_SECONDS = 2.0  # how long the first use of a cache waits for its first list


@dataclass(frozen=True, slots=True)
class HpaView:
    """The part of a HorizontalPodAutoscaler shadow mode reads: its status.desiredReplicas (None when unset)."""

    desired_replicas: int | None


def hpa_view(obj: Mapping[str, Any]) -> HpaView:
    desired = (obj.get("status") or {}).get("desiredReplicas")
    return HpaView(desired if isinstance(desired, int) and not isinstance(desired, bool) else None)


def keda_hpa_name(obj: Mapping[str, Any]) -> str:
    """The name of the HPA KEDA made for a ScaledObject: status.hpaName, the configured name, or keda-hpa-<name>."""
    status_name = (obj.get("status") or {}).get("hpaName")
    if isinstance(status_name, str) and status_name:
        return status_name
    advanced = (obj.get("spec") or {}).get("advanced") or {}
    configured = (
        (advanced.get("horizontalPodAutoscalerConfig") or {}).get("name") if isinstance(advanced, dict) else None
    )
    if isinstance(configured, str) and configured:
        return configured
    return KEDA_HPA_PREFIX + str((obj.get("metadata") or {}).get("name") or "")


class ShadowCache:
    """HPAs and ScaledObjects of one namespace or all, each cache started on first use."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        namespace: str | None = None,
        watch_timeout_seconds: int = 300,
        first_sync_seconds: float = FIRST_SYNC_SECONDS,
    ) -> None:
        self._kube = kube
        self._namespace = namespace
        self._watch_timeout = watch_timeout_seconds
        self._first_sync = first_sync_seconds
        self._lock = threading.Lock()
        self._hpas: Informer[HpaView] | None = None
        self._scaled_objects: Informer[str] | None = None

    def _informer(self, group: str, version: str, plural: str, transform: Any) -> Informer[Any]:
        if self._namespace:
            lw = ListWatch(
                self._kube.custom.list_namespaced_custom_object,
                (group, version, self._namespace, plural),
                RequestContext(verb="list", resource=plural, group=group, namespace=self._namespace),
            )
        else:
            lw = ListWatch(
                self._kube.custom.list_cluster_custom_object,
                (group, version, plural),
                RequestContext(verb="list", resource=plural, group=group),
            )
        informer: Informer[Any] = Informer(
            self._kube, lw, transform=transform, name=plural, watch_timeout_seconds=self._watch_timeout
        )
        informer.start()
        informer.wait_for_sync(self._first_sync)
        return informer

    def _hpa_cache(self) -> Informer[HpaView]:
        with self._lock:
            if self._hpas is None:
                self._hpas = self._informer(HPA_GROUP, HPA_VERSION, HPA_PLURAL, hpa_view)
            return self._hpas

    def _scaled_object_cache(self) -> Informer[str]:
        with self._lock:
            if self._scaled_objects is None:
                self._scaled_objects = self._informer(KEDA_GROUP, KEDA_VERSION, KEDA_PLURAL, keda_hpa_name)
            return self._scaled_objects

    def read(self, namespace: str, *, now: datetime, hpa: str = "", scaled_object: str = "") -> ShadowReading:
        """The count the named HPA (or the HPA of the named ScaledObject) wants, or why it cannot be told."""
        source = f"{HPA_KIND} {hpa}"
        if scaled_object:
            objects = self._scaled_object_cache()
            if not objects.has_synced():
                return ShadowReading(f"{KEDA_KIND} {scaled_object}", now, error=_not_synced(objects))
            found = objects.get(namespace, scaled_object)
            if found is None:
                return ShadowReading(
                    f"{KEDA_KIND} {scaled_object}", now, error=f"{KEDA_KIND} {scaled_object} not found"
                )
            hpa, source = found, f"{KEDA_KIND} {scaled_object} ({HPA_KIND} {found})"
        hpas = self._hpa_cache()
        if not hpas.has_synced():
            return ShadowReading(source, now, error=_not_synced(hpas))
        view = hpas.get(namespace, hpa)
        if view is None:
            return ShadowReading(source, now, error=f"{HPA_KIND} {hpa} not found")
        if view.desired_replicas is None:
            return ShadowReading(source, now, error=f"{HPA_KIND} {hpa} has no status.desiredReplicas yet")
        return ShadowReading(source, now, desired_replicas=view.desired_replicas)

    def stop(self) -> None:
        with self._lock:
            for informer in (self._hpas, self._scaled_objects):
                if informer is not None:
                    informer.stop()
            self._hpas = self._scaled_objects = None


def _not_synced(informer: Informer[Any]) -> str:
    error = informer.stats.last_error
    return f"the {informer.name} cache is not synced yet" + (f": {error}" if error else "")


__all__ = ["ShadowCache", "hpa_view", "keda_hpa_name"]
