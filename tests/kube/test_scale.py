"""The scale subresource of every kind the daemon scales, through the official client against the emulator."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.types import ObjectReference, Scale
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import TargetNotFound
from autoscaler.kube.scale import ScaleClient
from tests.kube.conftest import NS, Setup

APPS = [
    pytest.param("deployments", "Deployment", id="Deployment"),
    pytest.param("statefulsets", "StatefulSet", id="StatefulSet"),
    pytest.param("replicasets", "ReplicaSet", id="ReplicaSet"),
]


@pytest.mark.parametrize(("plural", "kind"), APPS)
def test_read_and_write_the_scale_of_each_apps_kind(
    kube: KubeClient, setup: Setup, server: Any, plural: str, kind: str
) -> None:
    setup.workload(plural, "web", replicas=2)
    ref = ObjectReference(kind=kind, name="web", api_version="apps/v1")
    client = ScaleClient(kube)

    read = client.read_scale(NS, ref)
    assert read.scale.spec_replicas == 2
    assert read.scale.selector == "app=web"
    assert read.resource_version

    seen: list[Scale] = []

    def decide(scale: Scale) -> int:
        seen.append(scale)
        return 5

    result = client.write_scale(NS, ref, decide)
    assert result.written
    assert result.previous_replicas == 2
    assert result.scale.spec_replicas == 5
    assert [s.spec_replicas for s in seen] == [2]
    assert setup.get(f"/apis/apps/v1/namespaces/{NS}/{plural}/web")["spec"]["replicas"] == 5


def test_a_custom_resource_with_scale_is_scaled_through_discovery(kube: KubeClient, setup: Setup) -> None:
    setup.rollout_crd()
    base = f"/apis/argoproj.io/v1alpha1/namespaces/{NS}/rollouts"
    setup.post(
        base,
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Rollout",
            "metadata": {"name": "canary", "namespace": NS},
            "spec": {"replicas": 3},
        },
    )
    obj = setup.get(f"{base}/canary")
    obj["status"] = {"replicas": 3, "selector": "app=canary"}
    setup.put(f"{base}/canary/status", obj)

    ref = ObjectReference(kind="Rollout", name="canary", api_version="argoproj.io/v1alpha1")
    client = ScaleClient(kube)
    read = client.read_scale(NS, ref)
    assert (read.scale.spec_replicas, read.scale.status_replicas, read.scale.selector) == (3, 3, "app=canary")

    result = client.write_scale(NS, ref, lambda scale: scale.spec_replicas + 1)
    assert result.written
    assert setup.get(f"{base}/canary")["spec"]["replicas"] == 4


def test_no_write_when_the_decision_equals_the_current_replicas(kube: KubeClient, setup: Setup, server: Any) -> None:
    setup.workload("deployments", "web", replicas=3)
    ref = ObjectReference(kind="Deployment", name="web", api_version="apps/v1")
    result = ScaleClient(kube).write_scale(NS, ref, lambda scale: scale.spec_replicas)
    assert not result.written
    assert result.scale.spec_replicas == 3
    result = ScaleClient(kube).write_scale(NS, ref, lambda scale: None)
    assert not result.written
    assert server.audit.records(verb="update", subresource="scale") == []


@pytest.mark.parametrize(
    ("api_version", "kind", "name"),
    [
        pytest.param("apps/v1", "Deployment", "missing", id="the object does not exist"),
        pytest.param("apps/v1", "Gizmo", "web", id="the kind does not exist"),
        pytest.param("gizmos.example.com/v1", "Gizmo", "web", id="the group does not exist"),
        pytest.param("autoscaler.dev/v1alpha1", "PrometheusAutoscaler", "web", id="the kind has no scale"),
    ],
)
def test_missing_targets_are_target_not_found(
    kube: KubeClient, setup: Setup, api_version: str, kind: str, name: str
) -> None:
    setup.workload("deployments", "web")
    with pytest.raises(TargetNotFound):
        ScaleClient(kube).read_scale(NS, ObjectReference(kind=kind, name=name, api_version=api_version))
