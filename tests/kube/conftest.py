"""Fixtures for the Kubernetes layer's tests: the project's API emulator, a client, and a setup helper.

Test data is created over plain HTTP by `Setup` (User-Agent `kube-tests-setup`), so the audit log tells the
daemon's own requests (User-Agent `prometheus-autoscaler/...`) from the tests' scaffolding.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.kube.client import USER_AGENT, ClientSettings, KubeClient, connect
from autoscaler.sim.apiserver import EmulatedApiServer
from tests.manifests import ROLLOUT_CRD

SETUP_AGENT = "kube-tests-setup"
NS = "shop"


class Setup:
    """Plain HTTP requests against the emulator, for creating and changing test objects."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("User-Agent", SETUP_AGENT)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            raise AssertionError(f"{method} {path}: {err.code} {err.read()[:300]!r}") from err
        return json.loads(raw) if raw else None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, body)

    def put(self, path: str, body: Any) -> Any:
        return self.request("PUT", path, body)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    # --- objects the tests use -------------------------------------------------------------------------

    def workload(self, plural: str, name: str, *, replicas: int = 2, app: str = "", ns: str = NS) -> Any:
        kind = {"deployments": "Deployment", "statefulsets": "StatefulSet", "replicasets": "ReplicaSet"}[plural]
        labels = {"app": app or name}
        spec: dict[str, Any] = {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "example/app:1"}]},
            },
        }
        if plural == "statefulsets":
            spec["serviceName"] = name
        body = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec}
        return self.post(f"/apis/apps/v1/namespaces/{ns}/{plural}", body)

    def pod(self, name: str, *, labels: dict[str, str], ns: str = NS, **spec: Any) -> Any:
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": spec or {"containers": [{"name": "app", "image": "example/app:1"}]},
        }
        return self.post(f"/api/v1/namespaces/{ns}/pods", body)

    def rollout_crd(self) -> Any:
        """An Argo Rollouts-like CRD with a /scale subresource, to scale a custom kind."""
        return self.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", ROLLOUT_CRD)

    def autoscaler(self, name: str, *, target: str = "web", ns: str = NS) -> Any:
        body = {
            "apiVersion": "autoscaler.dev/v1alpha1",
            "kind": "PrometheusAutoscaler",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                "minReplicas": 1,
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                    }
                ],
            },
        }
        return self.post(f"/apis/autoscaler.dev/v1alpha1/namespaces/{ns}/prometheusautoscalers", body)


RBAC_DOC = Path(__file__).resolve().parents[2] / "docs" / "rbac.md"

Permission = tuple[str, str, str]  # (API group, resource[/subresource], verb)


def documented_permissions() -> set[Permission]:
    """Every (group, resource, verb) granted by the YAML roles in docs/rbac.md."""
    out: set[Permission] = set()
    for block in re.findall(r"```yaml\n(.*?)```", RBAC_DOC.read_text(), flags=re.S):
        for doc in yaml.safe_load_all(block):
            for rule in (doc or {}).get("rules") or []:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        for verb in rule["verbs"]:
                            out.add((group, resource, verb))
    return out


def used_permissions(server: Any) -> set[Permission]:
    """What the daemon's own requests (its User-Agent) needed, from the emulator's audit log."""
    out: set[Permission] = set()
    for r in server.audit.records():
        if not r.user_agent.startswith(USER_AGENT) or not r.resource:
            continue  # the tests' own scaffolding, or discovery (granted to everyone by system:discovery)
        resource = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
        out.add((r.group, resource, r.verb))
    return out


@pytest.fixture
def server() -> Iterator[Any]:
    namespaces = ("default", "kube-system", NS, "ops", "elsewhere")
    # No lifecycle Events: the event tests count the Events in the namespace.
    with EmulatedApiServer(namespaces=namespaces, emit_events=False) as srv:
        yield srv
    # Every test doubles as an RBAC check: the daemon used nothing that docs/rbac.md does not grant.
    undocumented = used_permissions(srv) - documented_permissions()
    assert not undocumented, f"permissions used but not in docs/rbac.md: {sorted(undocumented)}"


@pytest.fixture
def setup(server: Any) -> Setup:
    return Setup(server.url)


def client_for(url: str, *, user_agent: str = USER_AGENT, read_timeout_seconds: float = 5.0) -> KubeClient:
    return connect(
        ClientSettings(
            server=url, user_agent=user_agent, connect_timeout_seconds=2, read_timeout_seconds=read_timeout_seconds
        )
    )


@pytest.fixture
def kube(server: Any) -> Iterator[KubeClient]:
    client = client_for(server.url)
    yield client
    client.close()


class FakeSleep:
    """An injected `sleep` that records what it was asked to wait instead of waiting."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleep() -> FakeSleep:
    return FakeSleep()
