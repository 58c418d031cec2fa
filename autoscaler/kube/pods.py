"""A target's pods, as the core's `Pod` values: phase, readiness, start time, deletion and requests.

`pod_from_json` reads a core/v1 Pod as JSON. Lists are fetched with `_preload_content=False` and parsed with
`json.loads` rather than into the client's pydantic models: on 1,000 pods the models cost about 4x more
(figures in docs/kube.md), and the daemon needs a dozen fields. Requests become integer milli-units exactly as
Kubernetes' `Quantity.MilliValue()` computes them (rounding up: "1.5m" -> 2, "1Gi" -> 1073741824000).
`PodAnnotator` sets pods' `controller.kubernetes.io/pod-deletion-cost` (the costs are the core's,
core/deletion_cost.py), a merge patch per pod with bounded concurrency and retries.
This module must not decide which pods count: that is the core's pod grouping.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, TypeVar

from autoscaler.core.deletion_cost import ANNOTATION as DELETION_COST_ANNOTATION
from autoscaler.core.deletion_cost import CostPatch, parse_cost
from autoscaler.core.formats import milli_value, parse_time
from autoscaler.core.types import Container, Pod, PodPhase
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import KubeError, RequestContext
from autoscaler.kube.retry import RetryBudget, call_with_retries

# Pods of one workload share their labels, their containers' names and requests, and (to the second) their
# start and readiness times: each distinct value is kept once (the core never changes a Pod's mappings), so
# 100,000 cached pods hold a few thousand label dicts, not 100,000. The tables are cleared when they reach
# `_SHARED_LIMIT` entries (pods with unique labels: a StatefulSet's, a Job's; pods started over hours), so they
# hold at most ~15 MB of labels of pods that are gone.
_SHARED_LIMIT = 20_000
K = TypeVar("K")
V = TypeVar("V")
_shared_labels: dict[str, Mapping[str, str]] = {}
_shared_containers: dict[tuple[object, ...], tuple[Container, ...]] = {}
_shared_times: dict[str, datetime] = {}
_NO_REQUESTS: Mapping[str, int] = MappingProxyType({})
_NO_LABELS: Mapping[str, str] = MappingProxyType({})


def _shared(table: dict[K, V], key: K, value: V) -> V:
    """The value `table` already holds for `key`, else `value`, now held (the table is emptied when full)."""
    held = table.get(key)
    if held is None:
        if len(table) >= _SHARED_LIMIT:
            table.clear()
        held = table[key] = value
    return held


def _labels(value: Any) -> Mapping[str, str]:
    if not value:
        return _NO_LABELS
    # Values are not interned: some are unique per pod (a StatefulSet's pod-name, a Job's controller-uid),
    # and an interned string may outlive its pod.
    labels = {sys.intern(str(k)): str(v) for k, v in value.items()}
    return _shared(_shared_labels, "\0".join(f"{k}\0{v}" for k, v in labels.items()), labels)


def _containers(items: Any, *, init: bool) -> tuple[Container, ...]:
    if not items:
        return ()
    containers = tuple(_container(c, init=init) for c in items)
    key = (init, *((c.name, c.restart_policy_always, *sorted(c.requests.items())) for c in containers))
    return _shared(_shared_containers, key, containers)


def _time(value: Any) -> datetime | None:
    # Pods started together (a rollout, a scale-up) share their times to the second: each distinct one once.
    if not value:
        return None
    held = _shared_times.get(value)
    return held if held is not None else _shared(_shared_times, value, parse_time(value))


def _requests(resources: Mapping[str, Any] | None) -> Mapping[str, int]:
    requests = (resources or {}).get("requests") or {}
    if not requests:
        return _NO_REQUESTS
    return {sys.intern(str(name)): milli_value(qty) for name, qty in requests.items()}


def _container(data: Mapping[str, Any], *, init: bool) -> Container:
    return Container(
        name=sys.intern(str(data.get("name", ""))),
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
            ready = sys.intern(str(cond.get("status", "Unknown")))
            ready_transition = _time(cond.get("lastTransitionTime"))
            break
    return Pod(
        name=str(meta.get("name", "")),
        namespace=sys.intern(str(meta.get("namespace", ""))),
        phase=_phase(status.get("phase")),
        labels=_labels(meta.get("labels")),
        ready=ready,
        ready_transition=ready_transition,
        start_time=_time(status.get("startTime")),
        deleted=meta.get("deletionTimestamp") is not None,
        containers=_containers(spec.get("containers"), init=False),
        init_containers=_containers(spec.get("initContainers"), init=True),
        pod_requests=_requests(spec.get("resources")),
        deletion_cost=parse_cost((meta.get("annotations") or {}).get(DELETION_COST_ANNOTATION)),
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


@dataclass(frozen=True, slots=True)
class CostPatchOutcome:
    """Which pods got their new cost, and which did not (pod name, error)."""

    patched: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]


class PodAnnotator:
    """Sets `controller.kubernetes.io/pod-deletion-cost` on pods: one merge patch each, `concurrency` at a time,
    each retried within `budget` (5xx, timeouts, 429). A pod that fails is reported, never raised. Thread-safe."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        concurrency: int = 16,
        budget: RetryBudget | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self._kube = kube
        self._concurrency = concurrency
        self._budget = budget or RetryBudget()
        self._sleep = sleep

    def _patch(self, namespace: str, patch: CostPatch) -> str | None:
        """The error of patching one pod, or None."""
        context = RequestContext(verb="patch", resource="pods", namespace=namespace, name=patch.pod)
        body = {"metadata": {"annotations": {DELETION_COST_ANNOTATION: str(patch.cost)}}}

        def once() -> dict[str, Any]:
            return self._kube.request_json(
                self._kube.core.patch_namespaced_pod, patch.pod, namespace, body, context=context
            )

        try:
            call_with_retries(once, budget=self._budget, sleep=self._sleep)
        except KubeError as err:
            return str(err)
        return None

    def set_deletion_costs(self, namespace: str, patches: Sequence[CostPatch]) -> CostPatchOutcome:
        """Patch each pod of `patches` with its cost; the outcome names the pods that failed and why."""
        if not patches:
            return CostPatchOutcome((), ())
        with ThreadPoolExecutor(max_workers=min(self._concurrency, len(patches))) as pool:
            errors = list(pool.map(lambda p: self._patch(namespace, p), patches))
        return CostPatchOutcome(
            patched=tuple(p.pod for p, e in zip(patches, errors, strict=True) if e is None),
            failed=tuple((p.pod, e) for p, e in zip(patches, errors, strict=True) if e is not None),
        )
