"""The workloads' pods, read from an API server over plain HTTP (the emulator, or `kubectl proxy`).

Per workload: GET its `/scale` subresource for the selector string, then list the namespace's pods with that
`labelSelector`, as the HPA finds a target's pods. Over HTTP rather than in-process so that the load model runs
the same beside an `EmulatedApiServer` in a test and as its own process in the demo.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from autoscaler.core.formats import QuantityError, milli_value
from autoscaler.sim.load.model import KINDS, Container, PodState, WorkloadRef


class PodSourceError(Exception):
    """The API server did not give the workload's pods; `.ref` names the workload."""

    def __init__(self, message: str, *, ref: WorkloadRef) -> None:
        super().__init__(f"{ref}: {message}")
        self.ref = ref


class ApiPods:
    """Lists a workload's pods from the API server at `url`."""

    def __init__(self, url: str, *, timeout_seconds: float = 5.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_seconds = timeout_seconds

    def _get(self, path: str, ref: WorkloadRef) -> Any:
        try:
            with urllib.request.urlopen(self.url + path, timeout=self.timeout_seconds) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            raise PodSourceError(f"GET {path} answered {err.code} {err.reason}", ref=ref) from err
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise PodSourceError(f"GET {path} failed: {err}", ref=ref) from err

    def selector(self, ref: WorkloadRef) -> str:
        ns, plural, name = (urllib.parse.quote(p, safe="") for p in (ref.namespace, KINDS[ref.kind], ref.name))
        scale = self._get(f"/apis/apps/v1/namespaces/{ns}/{plural}/{name}/scale", ref)
        selector = (scale.get("status") or {}).get("selector") or ""
        if not isinstance(selector, str) or not selector:
            raise PodSourceError("its /scale has no status.selector", ref=ref)
        return selector

    def pods(self, ref: WorkloadRef) -> list[PodState]:
        query = urllib.parse.urlencode({"labelSelector": self.selector(ref)})
        listing = self._get(f"/api/v1/namespaces/{urllib.parse.quote(ref.namespace, safe='')}/pods?{query}", ref)
        try:
            return [pod_state(item) for item in listing.get("items") or []]
        except (KeyError, TypeError, AttributeError, QuantityError) as err:
            raise PodSourceError(f"a pod the API server listed is malformed: {err!r}", ref=ref) from err


def _cores(resources: dict[str, Any], which: str) -> float | None:
    value = (resources.get(which) or {}).get("cpu")
    return None if value is None else milli_value(value) / 1000


def pod_state(pod: dict[str, Any]) -> PodState:
    """Running: phase Running; ready: the Ready condition True and not terminating."""
    meta, status = pod["metadata"], pod.get("status") or {}
    conditions = status.get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    containers = tuple(
        Container(
            c["name"],
            request_cores=_cores(c.get("resources") or {}, "requests"),
            limit_cores=_cores(c.get("resources") or {}, "limits"),
        )
        for c in (pod.get("spec") or {}).get("containers") or []
    )
    running = status.get("phase") == "Running" and bool(containers)
    return PodState(
        name=meta["name"],
        uid=meta.get("uid") or meta["name"],
        running=running,
        ready=running and ready and not meta.get("deletionTimestamp"),
        containers=containers,
    )
