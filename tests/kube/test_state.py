"""ConfigMapStateStore against the emulator: save, load, and delete when a file spec is gone."""

from __future__ import annotations

from typing import Any

from autoscaler.kube.client import KubeClient
from autoscaler.kube.state import ConfigMapStateStore, state_name
from tests.kube.conftest import NS, Setup


def test_delete_removes_the_configmap_and_a_missing_one_is_fine(kube: KubeClient, setup: Setup, server: Any) -> None:
    states = ConfigMapStateStore(kube, namespace=NS)
    states.save(NS, "web", {"desiredReplicas": 2})
    states.save(NS, "api", {"desiredReplicas": 3})
    states.delete(NS, "web")
    names = {cm["metadata"]["name"] for cm in setup.get(f"/api/v1/namespaces/{NS}/configmaps")["items"]}
    assert state_name(NS, "web") not in names and state_name(NS, "api") in names
    assert states.load(NS, "web") is None
    states.delete(NS, "web")  # already gone: 404 is not an error
    states.save(NS, "web", {"desiredReplicas": 4})  # a spec that comes back starts a new ConfigMap
    assert states.load(NS, "web") == {"desiredReplicas": 4}
