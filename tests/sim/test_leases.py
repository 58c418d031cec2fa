"""coordination.k8s.io/v1 Leases: the optimistic-concurrency loop a leader election runs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from tests.sim.conftest import NS, status_of


def _lease(holder: str) -> k8s.V1Lease:
    return k8s.V1Lease(
        metadata=k8s.V1ObjectMeta(name="autoscaler-leader"),
        spec=k8s.V1LeaseSpec(
            holder_identity=holder,
            lease_duration_seconds=15,
            acquire_time=datetime(2026, 1, 1, tzinfo=UTC),
            renew_time=datetime(2026, 1, 1, tzinfo=UTC),
            lease_transitions=0,
        ),
    )


def test_create_read_replace(api: k8s.ApiClient) -> None:
    leases = k8s.CoordinationV1Api(api)
    created = leases.create_namespaced_lease(NS, _lease("a"))
    read = leases.read_namespaced_lease("autoscaler-leader", NS)
    assert read.spec.holder_identity == "a"
    assert read.metadata.resource_version == created.metadata.resource_version
    read.spec.holder_identity = "b"
    read.spec.lease_transitions = 1
    replaced = leases.replace_namespaced_lease("autoscaler-leader", NS, read)
    assert replaced.spec.holder_identity == "b"
    assert replaced.spec.renew_time == datetime(2026, 1, 1, tzinfo=UTC)


def test_second_create_is_already_exists(api: k8s.ApiClient) -> None:
    leases = k8s.CoordinationV1Api(api)
    leases.create_namespaced_lease(NS, _lease("a"))
    with pytest.raises(ApiException) as caught:
        leases.create_namespaced_lease(NS, _lease("b"))
    assert (caught.value.status, status_of(caught.value)["reason"]) == (409, "AlreadyExists")


def test_replace_from_a_stale_read_is_a_conflict(api: k8s.ApiClient) -> None:
    """Two contenders read the same version; only the first write wins."""
    leases = k8s.CoordinationV1Api(api)
    leases.create_namespaced_lease(NS, _lease("nobody"))
    first = leases.read_namespaced_lease("autoscaler-leader", NS)
    second = leases.read_namespaced_lease("autoscaler-leader", NS)
    first.spec.holder_identity = "a"
    leases.replace_namespaced_lease("autoscaler-leader", NS, first)
    second.spec.holder_identity = "b"
    with pytest.raises(ApiException) as caught:
        leases.replace_namespaced_lease("autoscaler-leader", NS, second)
    assert (caught.value.status, status_of(caught.value)["reason"]) == (409, "Conflict")
    assert status_of(caught.value)["details"] == {
        "name": "autoscaler-leader",
        "group": "coordination.k8s.io",
        "kind": "leases",
    }
    assert leases.read_namespaced_lease("autoscaler-leader", NS).spec.holder_identity == "a"
