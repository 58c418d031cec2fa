"""docs/rbac.md lists exactly the permissions the daemon's calls use: nothing missing, nothing extra."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from autoscaler.core.deletion_cost import CostPatch
from autoscaler.core.events import EventReason
from autoscaler.core.types import ObjectReference
from autoscaler.kube.cache import PodCache, WorkloadCache
from autoscaler.kube.client import KubeClient
from autoscaler.kube.events import EventRecorder, InvolvedObject
from autoscaler.kube.leader import LeaderElectionConfig, LeaderElector
from autoscaler.kube.pods import PodAnnotator, PodLister
from autoscaler.kube.scale import ScaleClient
from autoscaler.kube.shadow import ShadowCache
from autoscaler.kube.state import ConfigMapStateStore
from autoscaler.kube.status import AutoscalerCache, AutoscalerStatus, StatusWriter
from tests.kube.conftest import NS, Setup, documented_permissions, used_permissions
from tests.kube.test_cache import eventually
from tests.manifests import SCALED_OBJECT_CRD


def test_every_documented_permission_is_used_and_no_other(kube: KubeClient, setup: Setup, server: Any) -> None:
    for plural in ("deployments", "statefulsets", "replicasets"):
        setup.workload(plural, f"w-{plural}", replicas=1)
    setup.rollout_crd()
    setup.post(
        f"/apis/argoproj.io/v1alpha1/namespaces/{NS}/rollouts",
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "ro"}, "spec": {"replicas": 1}},
    )
    setup.autoscaler("web")
    setup.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", SCALED_OBJECT_CRD)

    # Caches: list + watch of workloads, pods and the custom resource.
    caches = [WorkloadCache(kube), PodCache(kube), AutoscalerCache(kube)]
    for cache in caches:
        cache.start()
    try:
        assert all(cache.wait_for_sync(5) for cache in caches)
        # Scale reads and guarded writes of every kind.
        scales = ScaleClient(kube)
        for kind, plural in (
            ("Deployment", "deployments"),
            ("StatefulSet", "statefulsets"),
            ("ReplicaSet", "replicasets"),
        ):
            scales.write_scale(NS, ObjectReference(kind, f"w-{plural}", "apps/v1"), lambda s: s.spec_replicas + 1)
        scales.write_scale(NS, ObjectReference("Rollout", "ro", "argoproj.io/v1alpha1"), lambda s: 2)
        PodLister(kube).list_pods(NS, "app=w-deployments")
        # Pod-deletion costs (only with scaleDown.podDeletionCost): a merge patch per pod.
        (pod, *_) = PodLister(kube).list_pods(NS, "app=w-deployments")
        assert PodAnnotator(kube).set_deletion_costs(NS, [CostPatch(pod.name, 3, None)]).failed == ()
        # Events: one created, one aggregated.
        recorder = EventRecorder(kube)
        for _ in range(2):
            recorder.normal(
                InvolvedObject.autoscaler(NS, "web"), EventReason.SUCCESSFUL_RESCALE, "New size: 2; reason: x"
            )
        # Status: read, then update.
        StatusWriter(kube).write_status(NS, "web", AutoscalerStatus(current_replicas=1, desired_replicas=2))
        # Leases: get (404), create, get, update.
        elector = LeaderElector(kube, LeaderElectionConfig(namespace=NS, name="rbac", identity="me"))
        assert elector.try_acquire_or_renew()
        assert elector.try_acquire_or_renew()
        # File specs' state: get (404), create, then update, then delete.
        states = ConfigMapStateStore(kube, namespace=NS)
        assert states.load(NS, "file-spec") is None
        states.save(NS, "file-spec", {"desiredReplicas": 2})
        states.save(NS, "file-spec", {"desiredReplicas": 3})
        states.delete(NS, "file-spec")  # its spec file is gone
        # Shadow mode: the HPAs and ScaledObjects, list + watch, started on first use.
        shadows = ShadowCache(kube, first_sync_seconds=5)
        shadows.read(NS, now=datetime.now(UTC), scaled_object="worker")
        shadows.read(NS, now=datetime.now(UTC), hpa="web")
    finally:
        for cache in caches:
            cache.stop()
        shadows.stop()
    # Watches are recorded when they end.
    eventually(
        lambda: (
            {("", "pods", "watch"), ("autoscaler.dev", "prometheusautoscalers", "watch")} <= used_permissions(server)
        )
    )
    eventually(lambda: ("apps", "replicasets", "watch") in used_permissions(server))
    eventually(lambda: ("keda.sh", "scaledobjects", "watch") in used_permissions(server))
    eventually(lambda: ("autoscaling", "horizontalpodautoscalers", "watch") in used_permissions(server))

    used = used_permissions(server)
    documented = documented_permissions()
    assert used - documented == set(), "used but not documented"
    assert documented - used == set(), "documented but never used"
