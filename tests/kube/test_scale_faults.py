"""Scale writes under faults: conflicts re-read and decide again, 429 waits Retry-After, 5xx within a budget."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.types import ObjectReference, Scale
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import Forbidden, InvalidRequest, Unavailable
from autoscaler.kube.retry import RetryBudget
from autoscaler.kube.scale import ScaleClient
from tests.kube.conftest import NS, FakeSleep, Setup, client_for

REF = ObjectReference(kind="Deployment", name="web", api_version="apps/v1")
SCALE_PATH = rf"/apis/apps/v1/namespaces/{NS}/deployments/web/scale$"
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NS}/deployments/web"


def test_a_write_between_read_and_write_ends_in_a_reread_and_a_fresh_decision(
    kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep
) -> None:
    """A user scales to 7 while the daemon decides 4 on the old 2: the daemon decides again on 7."""
    setup.workload("deployments", "web", replicas=2)
    seen: list[int] = []

    def decide(scale: Scale) -> int:
        seen.append(scale.spec_replicas)
        if len(seen) == 1:
            setup.patch(f"{DEPLOYMENT}/scale", {"spec": {"replicas": 7}})
            return 4
        return scale.spec_replicas + 1

    result = ScaleClient(kube, sleep=sleep).write_scale(NS, REF, decide)
    assert seen == [2, 7]
    assert result.written and result.conflicts == 1
    assert setup.get(DEPLOYMENT)["spec"]["replicas"] == 8
    codes = [r.code for r in server.audit.records(verb="update", subresource="scale")]
    assert codes == [409, 200]


def test_an_injected_conflict_is_reread(kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE_PATH, method="PUT", status=409, times=1)
    result = ScaleClient(kube, sleep=sleep).write_scale(NS, REF, lambda scale: 6)
    assert result.written and result.conflicts == 1
    assert setup.get(DEPLOYMENT)["spec"]["replicas"] == 6
    assert len(server.audit.records(verb="get", subresource="scale")) == 2


def test_429_waits_for_its_retry_after(kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE_PATH, method="PUT", status=429, retry_after_seconds=3, times=1)
    result = ScaleClient(kube, sleep=sleep).write_scale(NS, REF, lambda scale: 5)
    assert result.written
    assert sleep.calls == [3]
    assert setup.get(DEPLOYMENT)["spec"]["replicas"] == 5


def test_a_burst_of_500s_within_the_budget_succeeds(
    kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep
) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE_PATH, method="GET", status=500, times=1)
    server.faults.add(SCALE_PATH, method="PUT", status=503, times=2)
    budget = RetryBudget(attempts=4, max_wait_seconds=1.0)
    result = ScaleClient(kube, budget=budget, sleep=sleep).write_scale(NS, REF, lambda scale: 5)
    assert result.written
    assert len(sleep.calls) == 3
    assert all(0 < s <= 1.0 + budget.jitter_seconds for s in sleep.calls)
    assert setup.get(DEPLOYMENT)["spec"]["replicas"] == 5


def test_500s_beyond_the_budget_fail_typed_and_write_nothing(
    kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep
) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE_PATH, method="PUT", status=500, times=10)
    with pytest.raises(Unavailable) as info:
        ScaleClient(kube, budget=RetryBudget(attempts=3), sleep=sleep).write_scale(NS, REF, lambda scale: 5)
    assert info.value.status == 500
    assert (info.value.verb, info.value.name) == ("update", "web")
    assert len(sleep.calls) == 2
    updates = server.audit.records(verb="update", subresource="scale")
    assert len(updates) == 3
    assert all(r.injected for r in updates)
    assert setup.get(DEPLOYMENT)["spec"]["replicas"] == 2


def test_a_validation_error_is_not_retried(kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE_PATH, method="PUT", status=422, times=1)
    with pytest.raises(InvalidRequest):
        ScaleClient(kube, sleep=sleep).write_scale(NS, REF, lambda scale: 5)
    assert sleep.calls == []
    assert len(server.audit.records(verb="update", subresource="scale")) == 1


def test_a_dropped_connection_and_a_timeout_are_retried(setup: Setup, server: Any, sleep: FakeSleep) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE_PATH, method="GET", drop=True, times=1)
    server.faults.add(SCALE_PATH, method="PUT", delay_seconds=1.5, times=1)
    kube = client_for(server.url, read_timeout_seconds=0.5)
    result = ScaleClient(kube, sleep=sleep).write_scale(NS, REF, lambda scale: 5)
    assert result.written
    assert len(sleep.calls) >= 2
    assert setup.get(DEPLOYMENT)["spec"]["replicas"] == 5


def test_forbidden_names_the_permission_to_grant(kube: KubeClient, setup: Setup, server: Any, sleep: FakeSleep) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE_PATH, method="PUT", status=403, times=1)
    with pytest.raises(Forbidden, match=r"fix RBAC: allow update on deployments.apps/scale"):
        ScaleClient(kube, sleep=sleep).write_scale(NS, REF, lambda scale: 5)
    assert sleep.calls == []
