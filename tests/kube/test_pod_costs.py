"""Pod-deletion costs through the official client against the emulator: read into the core's Pod, written by
`PodAnnotator` with retries and bounded concurrency, and failures reported per pod, never raised."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.deletion_cost import ANNOTATION, CostPatch
from autoscaler.kube.client import KubeClient
from autoscaler.kube.pods import PodAnnotator, PodLister
from tests.kube.conftest import NS, FakeSleep, Setup


def _names(kube: KubeClient) -> list[str]:
    return sorted(p.name for p in PodLister(kube).list_pods(NS, "app=web"))


def _costs(setup: Setup) -> dict[str, str | None]:
    items = setup.get(f"/api/v1/namespaces/{NS}/pods?labelSelector=app%3Dweb")["items"]
    return {p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(ANNOTATION) for p in items}


@pytest.mark.parametrize(
    ("annotation", "read"),
    [
        pytest.param("12", 12, id="a cost"),
        pytest.param("-2147483648", -(2**31), id="the lowest int32"),
        pytest.param(None, None, id="no annotation"),
    ],
)
def test_the_cost_is_read_into_the_pod(
    kube: KubeClient, setup: Setup, annotation: str | None, read: int | None
) -> None:
    setup.pod("web-a", labels={"app": "web"})
    if annotation is not None:
        setup.patch(f"/api/v1/namespaces/{NS}/pods/web-a", {"metadata": {"annotations": {ANNOTATION: annotation}}})
    (pod,) = PodLister(kube).list_pods(NS, "app=web")
    assert pod.deletion_cost == read


def test_costs_are_patched_with_bounded_concurrency(kube: KubeClient, setup: Setup, server: Any) -> None:
    setup.workload("deployments", "web", replicas=5)
    names = _names(kube)
    outcome = PodAnnotator(kube, concurrency=2).set_deletion_costs(
        NS, [CostPatch(name, cost, None) for name, cost in zip(names, [5, 0, -1, 7, 2147483647], strict=True)]
    )
    assert outcome.patched == tuple(names) and outcome.failed == ()
    assert _costs(setup) == dict(zip(names, ["5", "0", "-1", "7", "2147483647"], strict=True))
    patches = [r for r in server.audit.records(verb="patch", resource="pods")]
    assert len(patches) == 5
    assert {r.body_json()["metadata"]["annotations"][ANNOTATION] for r in patches} == {
        "5",
        "0",
        "-1",
        "7",
        "2147483647",
    }


def test_a_transient_failure_is_retried(kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep) -> None:
    setup.workload("deployments", "web", replicas=1)
    (name,) = _names(kube)
    server.faults.add(f"/pods/{name}$", method="PATCH", status=503, times=2)
    outcome = PodAnnotator(kube, sleep=sleep).set_deletion_costs(NS, [CostPatch(name, 4, None)])
    assert outcome.patched == (name,) and len(sleep.calls) == 2
    assert _costs(setup) == {name: "4"}


def test_failures_are_reported_per_pod_and_the_others_still_written(
    kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep
) -> None:
    setup.workload("deployments", "web", replicas=3)
    gone, refused, fine = _names(kube)
    server.faults.add(f"/pods/{refused}$", method="PATCH", status=500, times=None)
    outcome = PodAnnotator(kube, sleep=sleep).set_deletion_costs(
        NS, [CostPatch(gone + "-deleted", 1, None), CostPatch(refused, 2, None), CostPatch(fine, 3, None)]
    )
    assert outcome.patched == (fine,)
    assert [pod for pod, _ in outcome.failed] == [gone + "-deleted", refused]
    assert outcome.failed[0][1].endswith("not found (404 NotFound)")
    assert outcome.failed[1][1].endswith("(500 InternalError)")
    assert len(sleep.calls) == 3  # the 500s were retried within the budget (4 attempts), the 404 was not
    assert _costs(setup)[fine] == "3" and _costs(setup)[refused] is None
