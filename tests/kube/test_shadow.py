"""Shadow mode's reader (kube/shadow.py) against the emulator: HPAs and KEDA ScaledObjects from watch-fed caches."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.core.pause import PAUSED, PAUSED_REPLICAS
from autoscaler.core.shadow import ShadowReading
from autoscaler.kube.cache import WorkloadCache
from autoscaler.kube.client import KubeClient
from autoscaler.kube.shadow import ShadowCache, keda_hpa_name
from tests.kube.conftest import NS, Setup, used_permissions
from tests.kube.test_cache import eventually
from tests.manifests import SCALED_OBJECT_CRD, hpa_manifest

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
HPAS = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
SCALED_OBJECTS = f"/apis/keda.sh/v1alpha1/namespaces/{NS}/scaledobjects"


def hpa(setup: Setup, name: str, desired: int | None, *, ns: str = NS) -> None:
    """An HPA whose status.desiredReplicas is `desired` (None: no status yet), as the HPA controller writes it."""
    created = setup.post(
        f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers", hpa_manifest(name, target=name, namespace=ns)
    )
    if desired is not None:
        set_desired(setup, created, desired, ns=ns)


def set_desired(setup: Setup, obj: dict[str, Any], desired: int, *, ns: str = NS) -> None:
    name = obj["metadata"]["name"]
    current = setup.get(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/{name}")
    current["status"] = {"currentReplicas": 2, "desiredReplicas": desired}
    setup.put(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/{name}/status", current)


def scaled_object(
    setup: Setup, name: str, *, spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None
) -> None:
    body = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec or {"scaleTargetRef": {"name": name}, "triggers": []},
    }
    created = setup.post(SCALED_OBJECTS, body)
    if status is not None:
        created["status"] = status
        setup.put(f"{SCALED_OBJECTS}/{name}/status", created)


@pytest.fixture
def shadows(kube: KubeClient) -> Any:
    cache = ShadowCache(kube, namespace=NS, first_sync_seconds=5)
    yield cache
    cache.stop()


def test_an_hpa_s_desired_replicas_and_its_changes(setup: Setup, shadows: ShadowCache, server: Any) -> None:
    hpa(setup, "web", 4)
    assert shadows.read(NS, now=NOW, hpa="web") == ShadowReading("HorizontalPodAutoscaler web", NOW, 4)
    set_desired(setup, setup.get(f"{HPAS}/web"), 7)
    eventually(lambda: shadows.read(NS, now=NOW, hpa="web").desired_replicas == 7)
    for _ in range(50):  # a tick's reads cost no request: the cache answers
        shadows.read(NS, now=NOW, hpa="web")
    verbs = {verb for group, resource, verb in used_permissions(server) if resource == "horizontalpodautoscalers"}
    assert verbs <= {"list", "watch"} and "list" in verbs


@pytest.mark.parametrize(
    ("desired", "name", "error"),
    [
        pytest.param(None, "web", "HorizontalPodAutoscaler web has no status.desiredReplicas yet", id="no status yet"),
        pytest.param(3, "other", "HorizontalPodAutoscaler other not found", id="no such HPA"),
    ],
)
def test_an_hpa_that_cannot_tell(
    setup: Setup, shadows: ShadowCache, desired: int | None, name: str, error: str
) -> None:
    hpa(setup, "web", desired)
    reading = shadows.read(NS, now=NOW, hpa=name)
    assert (reading.desired_replicas, reading.error) == (None, error)


def test_an_hpa_of_another_namespace_is_not_read(setup: Setup, shadows: ShadowCache) -> None:
    hpa(setup, "web", 5, ns="ops")
    assert shadows.read(NS, now=NOW, hpa="web").error == "HorizontalPodAutoscaler web not found"


@pytest.mark.parametrize(
    ("spec", "status", "hpa_name"),
    [
        pytest.param(None, None, "keda-hpa-worker", id="KEDA's default name"),
        pytest.param(
            {"scaleTargetRef": {"name": "worker"}, "advanced": {"horizontalPodAutoscalerConfig": {"name": "custom"}}},
            None,
            "custom",
            id="the name the ScaledObject configures",
        ),
        pytest.param(None, {"hpaName": "from-status"}, "from-status", id="the name in its status"),
    ],
)
def test_a_scaled_object_s_hpa(
    setup: Setup, shadows: ShadowCache, spec: dict[str, Any] | None, status: dict[str, Any] | None, hpa_name: str
) -> None:
    setup.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", SCALED_OBJECT_CRD)
    scaled_object(setup, "worker", spec=spec, status=status)
    hpa(setup, hpa_name, 6)
    reading = shadows.read(NS, now=NOW, scaled_object="worker")
    assert reading == ShadowReading(f"ScaledObject worker (HorizontalPodAutoscaler {hpa_name})", NOW, 6)
    assert shadows.read(NS, now=NOW, scaled_object="gone").error == "ScaledObject gone not found"


def test_without_keda_installed_the_reading_says_so(setup: Setup, kube: KubeClient) -> None:
    cache = ShadowCache(kube, namespace=NS, first_sync_seconds=0.5)
    try:
        reading = cache.read(NS, now=NOW, scaled_object="worker")
    finally:
        cache.stop()
    assert reading.desired_replicas is None
    assert reading.error.startswith("the scaledobjects cache is not synced yet")


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param({"metadata": {"name": "w"}}, "keda-hpa-w", id="default"),
        pytest.param({"metadata": {"name": "w"}, "spec": {"advanced": {}}}, "keda-hpa-w", id="advanced without a name"),
        pytest.param(
            {"metadata": {"name": "w"}, "spec": {"advanced": {"horizontalPodAutoscalerConfig": {"name": ""}}}},
            "keda-hpa-w",
            id="an empty configured name",
        ),
        pytest.param(
            {
                "metadata": {"name": "w"},
                "spec": {"advanced": {"horizontalPodAutoscalerConfig": {"name": "c"}}},
                "status": {"hpaName": "s"},
            },
            "s",
            id="the status first",
        ),
    ],
)
def test_keda_hpa_name(obj: dict[str, Any], expected: str) -> None:
    assert keda_hpa_name(obj) == expected


def test_the_workload_cache_keeps_only_the_pause_annotations(setup: Setup, kube: KubeClient) -> None:
    setup.workload("deployments", "web", replicas=2)
    setup.patch(
        f"/apis/apps/v1/namespaces/{NS}/deployments/web",
        {"metadata": {"annotations": {PAUSED: "true", PAUSED_REPLICAS: "3", "other": "x"}}},
    )
    cache = WorkloadCache(kube, namespace=NS, kinds=("Deployment",))
    cache.start()
    try:
        assert cache.wait_for_sync(5)
        eventually(lambda: bool((found := cache.scale(NS, "Deployment", "web")) and found.annotations))
        found = cache.scale(NS, "Deployment", "web")
        assert found is not None and dict(found.annotations) == {PAUSED: "true", PAUSED_REPLICAS: "3"}
    finally:
        cache.stop()
