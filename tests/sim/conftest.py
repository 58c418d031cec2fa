"""Fixtures for the emulator's tests: a started emulator on a fake clock, clients for it, test manifests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from autoscaler.sim.apiserver import EmulatedApiServer, FakeClock
from tests.manifests import ROLLOUT_CRD

NS = "default"

# The project's CRD as far as the emulator cares (names, /status, printer columns); the tests do not depend
# on the package file, which another part of the project owns.
PAS_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "prometheusautoscalers.autoscaler.dev"},
    "spec": {
        "group": "autoscaler.dev",
        "scope": "Namespaced",
        "names": {
            "kind": "PrometheusAutoscaler",
            "listKind": "PrometheusAutoscalerList",
            "plural": "prometheusautoscalers",
            "singular": "prometheusautoscaler",
            "shortNames": ["pas"],
        },
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                "additionalPrinterColumns": [
                    {"name": "Reference", "type": "string", "jsonPath": ".status.reference"},
                    {"name": "MinPods", "type": "integer", "jsonPath": ".spec.minReplicas"},
                    {"name": "MaxPods", "type": "integer", "jsonPath": ".spec.maxReplicas"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".status.currentReplicas"},
                    {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }
        ],
    },
}


def workload(kind: str, name: str, *, replicas: int = 2, labels: dict[str, str] | None = None, **meta: Any) -> Any:
    labels = labels or {"app": name}
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "example/app:1",
                        "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    }
                ]
            },
        },
    }
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": NS, **meta}, "spec": spec}


def autoscaler(name: str, *, target: str = "web") -> Any:
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 10,
        },
    }


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(clock: FakeClock) -> Iterator[EmulatedApiServer]:
    with EmulatedApiServer(crds=[PAS_CRD, ROLLOUT_CRD], clock=clock) as srv:
        yield srv


@pytest.fixture
def api(server: EmulatedApiServer) -> Iterator[k8s.ApiClient]:
    """The official client, with urllib3's silent retries off so that every answer is seen as sent."""
    config = k8s.Configuration(host=server.url)
    config.retries = 0
    with k8s.ApiClient(config) as api_client:
        yield api_client


class Raw:
    """Plain HTTP against the emulator, for asserting on exact bodies and status codes."""

    def __init__(self, url: str) -> None:
        self.url = url

    def request(
        self, method: str, path: str, body: Any = None, *, content_type: str = "application/json", **headers: str
    ) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        for key, value in headers.items():
            req.add_header(key.replace("_", "-"), value)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, _decode(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, _decode(err.read())


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode()


@pytest.fixture
def raw(server: EmulatedApiServer) -> Raw:
    return Raw(server.url)


def status_of(err: Exception) -> Any:
    """The Status body of an ApiException."""
    return json.loads(getattr(err, "body", "") or "{}")


def reported(httpd: Any, error: Exception) -> str:
    """What the server's `handle_error` printed for a request that failed with `error` (sim/http.py's rule)."""
    import contextlib
    import io

    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            raise error
        except Exception:
            httpd.handle_error(None, ("127.0.0.1", 1))
    return stderr.getvalue()
