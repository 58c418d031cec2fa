"""A target's pods, as the core's `Pod` values: phase, readiness, start time, deletion and requests.

`pod_from_json` reads a core/v1 Pod as JSON. Lists are fetched with `_preload_content=False` and parsed with
`json.loads` rather than into the client's pydantic models: on 1,000 pods the models cost about 4x more
(figures in docs/kube.md), and the daemon needs a dozen fields. Requests become integer milli-units exactly as
Kubernetes' `Quantity.MilliValue()` computes them (rounding up: "1.5m" -> 2, "1Gi" -> 1073741824000).
This module must not decide which pods count: that is the core's pod grouping.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from autoscaler.core.formats import milli_value, parse_time
from autoscaler.core.types import Container, Pod, PodPhase
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import RequestContext


def _time(value: Any) -> datetime | None:
    return parse_time(value) if value else None


def _requests(resources: Mapping[str, Any] | None) -> dict[str, int]:
    requests = (resources or {}).get("requests") or {}
    return {str(name): milli_value(qty) for name, qty in requests.items()}


def _container(data: Mapping[str, Any], *, init: bool) -> Container:
    return Container(
        name=str(data.get("name", "")),
        requests=_requests(data.get("resources")),
        restart_policy_always=init and data.get("restartPolicy") == "Always",
    )


def _phase(value: Any) -> PodPhase:
    try:
        return PodPhase(str(value or "Pending"))
    except ValueError:
        return PodPhase.UNKNOWN


def pod_from_json(data: Mapping[str, Any]) -> Pod:
    """The core's `Pod` from a core/v1 Pod object as JSON."""
    meta = data.get("metadata") or {}
    spec = data.get("spec") or {}
    status = data.get("status") or {}
    ready: str | None = None
    ready_transition: datetime | None = None
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready":
            ready = str(cond.get("status", "Unknown"))
            ready_transition = _time(cond.get("lastTransitionTime"))
            break
    return Pod(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        phase=_phase(status.get("phase")),
        labels=dict(meta.get("labels") or {}),
        ready=ready,
        ready_transition=ready_transition,
        start_time=_time(status.get("startTime")),
        deleted=meta.get("deletionTimestamp") is not None,
        containers=tuple(_container(c, init=False) for c in spec.get("containers") or []),
        init_containers=tuple(_container(c, init=True) for c in spec.get("initContainers") or []),
        pod_requests=_requests(spec.get("resources")),
    )


class PodLister:
    """Pods by label selector straight from the API (one list per call). The daemon will use `cache.PodCache`."""

    def __init__(self, kube: KubeClient) -> None:
        self._kube = kube

    def list_pods(self, namespace: str, selector: str) -> tuple[Pod, ...]:
        """The pods in `namespace` matching `selector` (a label selector string, e.g. a Scale's)."""
        context = RequestContext(verb="list", resource="pods", namespace=namespace)
        data = self._kube.request_json(
            self._kube.core.list_namespaced_pod, namespace, label_selector=selector, context=context
        )
        return tuple(pod_from_json(item) for item in data.get("items") or [])
