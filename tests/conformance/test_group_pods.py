"""Upstream TestGroupPods, TestCalculateRequests and TestCalculatePodRequestsFromContainers_NonExistentContainer
(replica_calculator_test.go, Kubernetes 1.36) against `calculator.group_pods` and `calculate_requests`."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from autoscaler.core.calculator import PodMetric, calculate_requests, group_pods
from autoscaler.core.errors import MetricComputationError
from autoscaler.core.types import Container, Pod, Settings
from tests.conformance.builders import (
    DEFAULT_TESTING_CPU_INITIALIZATION_PERIOD_SECONDS,
    DEFAULT_TESTING_DELAY_OF_INITIAL_READINESS_STATUS_SECONDS,
    GO_ZERO_TIME,
    NOW,
    TEST_NAMESPACE,
)

SETTINGS = Settings(
    cpu_initialization_period_seconds=DEFAULT_TESTING_CPU_INITIALIZATION_PERIOD_SECONDS,
    initial_readiness_delay_seconds=DEFAULT_TESTING_DELAY_OF_INITIAL_READINESS_STATUS_SECONDS,
)


def ago(**kwargs: float) -> datetime:
    """time.Now().Add(-duration)."""
    return NOW - timedelta(**kwargs)


def metric(value: int = 1, timestamp: datetime = GO_ZERO_TIME, window_seconds: float = 0.0) -> PodMetric:
    """metricsclient.PodMetric; unset fields are Go zero values (zero time, zero window)."""
    return PodMetric(value, timestamp, window_seconds)


# ---------------------------------------------------------------------------------------------------
# TestGroupPods
# ---------------------------------------------------------------------------------------------------

# (name, pods, metrics, resource, (ready count, unready, missing, ignored)). Kubernetes 1.36's table gave most
# of these pods the phase Succeeded, which its groupPods treated like Running; since kubernetes/kubernetes#141302
# (issue #141298, after 1.36.0) a Succeeded pod is ignored like a Failed one, so these rows are Running pods
# (RUNNING marks them) and each also runs with its pods Succeeded, where every one of them must be ignored.
RUNNING = "Running"
GROUP_PODS: list[tuple[str, list[Pod], dict[str, PodMetric], str, tuple[int, set[str], set[str], set[str]]]] = [
    ("void", [], {}, "cpu", (0, set(), set(), set())),
    (
        "count in a ready pod - memory",
        [Pod("bentham", RUNNING)],
        {"bentham": metric(timestamp=NOW, window_seconds=60)},
        "memory",
        (1, set(), set(), set()),
    ),
    (
        "unready a pod without ready condition - CPU",
        [Pod("lucretius", RUNNING, start_time=NOW)],
        {"lucretius": metric()},
        "cpu",
        (0, {"lucretius"}, set(), set()),
    ),
    (
        "count in a ready pod with fresh metrics during initialization period - CPU",
        [Pod("bentham", RUNNING, start_time=ago(minutes=1), ready="True", ready_transition=ago(seconds=30))],
        {"bentham": metric(timestamp=NOW, window_seconds=30)},
        "cpu",
        (1, set(), set(), set()),
    ),
    (
        "unready a ready pod without fresh metrics during initialization period - CPU",
        [Pod("bentham", RUNNING, start_time=ago(minutes=1), ready="True", ready_transition=ago(seconds=30))],
        {"bentham": metric(timestamp=NOW, window_seconds=60)},
        "cpu",
        (0, {"bentham"}, set(), set()),
    ),
    (
        "unready an unready pod during initialization period - CPU",
        [
            Pod(
                "lucretius",
                RUNNING,
                start_time=ago(minutes=10),
                ready="False",
                ready_transition=ago(minutes=9, seconds=54),
            )
        ],
        {"lucretius": metric()},
        "cpu",
        (0, {"lucretius"}, set(), set()),
    ),
    (
        "count in a ready pod without fresh metrics after initialization period - CPU",
        [Pod("bentham", RUNNING, start_time=ago(minutes=3), ready="True", ready_transition=ago(minutes=3))],
        {"bentham": metric(timestamp=ago(minutes=2), window_seconds=60)},
        "cpu",
        (1, set(), set(), set()),
    ),
    (
        "count in an unready pod that was ready after initialization period - CPU",
        [Pod("lucretius", RUNNING, start_time=ago(minutes=10), ready="False", ready_transition=ago(minutes=9))],
        {"lucretius": metric()},
        "cpu",
        (1, set(), set(), set()),
    ),
    (
        "unready pod that has never been ready after initialization period - CPU",
        [
            Pod(
                "lucretius",
                RUNNING,
                start_time=ago(minutes=10),
                ready="False",
                ready_transition=ago(minutes=9, seconds=50),
            )
        ],
        {"lucretius": metric()},
        "cpu",
        (1, set(), set(), set()),
    ),
    (
        "a missing pod",
        [Pod("epicurus", RUNNING, start_time=ago(minutes=3))],
        {},
        "cpu",
        (0, set(), {"epicurus"}, set()),
    ),
    (
        "several pods",
        [
            Pod("lucretius", RUNNING, start_time=NOW),
            Pod("niccolo", RUNNING, start_time=ago(minutes=3), ready="True", ready_transition=ago(minutes=3)),
            Pod("epicurus", RUNNING, start_time=ago(minutes=3)),
        ],
        {"lucretius": metric(), "niccolo": metric()},
        "cpu",
        (1, {"lucretius"}, {"epicurus"}, set()),
    ),
    ("pending pods are unreadied", [Pod("unscheduled", "Pending")], {}, "cpu", (0, {"unscheduled"}, set(), set())),
    (
        "ignore pods with deletion timestamps",
        [Pod("deleted", "Pending", deleted=True)],
        {"deleted": metric()},
        "cpu",
        (0, set(), set(), {"deleted"}),
    ),
    (
        "ignore pods in a failed state",
        [Pod("failed", "Failed")],
        {"failed": metric()},
        "cpu",
        (0, set(), set(), {"failed"}),
    ),
    (
        "ignore pods in a succeeded state (kubernetes#141302)",
        [Pod("succeeded", "Succeeded"), Pod("running", RUNNING, ready="True", start_time=ago(minutes=10))],
        {"succeeded": metric(), "running": metric()},
        "memory",
        (1, set(), set(), {"succeeded"}),
    ),
]


def _group_pods_params() -> list[Any]:
    params = []
    for name, pods, metrics, resource, expected in GROUP_PODS:
        params.append(pytest.param(pods, metrics, resource, expected, id=f"TestGroupPods: {name}"))
        if any(p.phase == RUNNING for p in pods):
            finished = [replace(p, phase="Succeeded") for p in pods]
            ignored = (0, set(), set(), {p.name for p in pods})
            derived = f"TestGroupPods (kubernetes#141302, pods Succeeded are ignored): {name}"
            params.append(pytest.param(finished, metrics, resource, ignored, id=derived))
    return params


@pytest.mark.parametrize(("pods", "metrics", "resource", "expected"), _group_pods_params())
def test_group_pods(
    pods: list[Pod],
    metrics: dict[str, PodMetric],
    resource: str,
    expected: tuple[int, set[str], set[str], set[str]],
) -> None:
    assert group_pods(pods, metrics, resource, settings=SETTINGS, now=NOW) == expected


# ---------------------------------------------------------------------------------------------------
# TestCalculateRequests and TestCalculatePodRequestsFromContainers_NonExistentContainer
# ---------------------------------------------------------------------------------------------------

TEST_POD = "test-pod"


def pod(*containers: Container, init: tuple[Container, ...] = (), pod_requests: dict[str, int] | None = None) -> Pod:
    return Pod(
        TEST_POD,
        "Running",
        namespace=TEST_NAMESPACE,
        containers=containers,
        init_containers=init,
        pod_requests=pod_requests or {},
    )


def cpu(name: str, millis: int | None = None, *, sidecar: bool = False) -> Container:
    """A container requesting `millis` millicores, or nothing when None."""
    return Container(name, {} if millis is None else {"cpu": millis}, restart_policy_always=sidecar)


CR = "TestCalculateRequests"
CALCULATE_REQUESTS = [
    pytest.param([], "", {}, id=f"{CR}: void"),
    # The PodLevelResources gate is on by default in 1.36; a pod without pod-level requests reads the same
    # with the gate off, which is what this upstream row exercises.
    pytest.param([pod(cpu("container1", 100), cpu("container2", 50))], "", {TEST_POD: 150},
                 id=f"{CR}: sum container requests if pod-level feature is disabled"),
    pytest.param([pod(cpu("container1", 100), cpu("container2", 50))], "", {TEST_POD: 150},
                 id=f"{CR}: pod-level resources enabled but not set: fallback to sum container requests"),
    pytest.param([pod(cpu("container1", 100), cpu("container2", 50), pod_requests={"cpu": 800})], "",
                 {TEST_POD: 800}, id=f"{CR}: pod-level resources override container requests"),
    pytest.param([pod(cpu("container1"), cpu("container2", 50))], "",
                 "missing request for cpu in container container1 of Pod test-pod",
                 id=f"{CR}: fail if a container is missing requests and pod-level requests are not set"),
    pytest.param([pod(cpu("container1"), cpu("container2", 50), pod_requests={"cpu": 800})], "",
                 {TEST_POD: 800}, id=f"{CR}: pod-level resources override missing container requests"),
    pytest.param([pod(cpu("container1", 100), cpu("container2", 50))], "container1", {TEST_POD: 100},
                 id=f"{CR}: container: a named container counts alone"),
    pytest.param([pod(cpu("container1", 100), cpu("container2", 50), pod_requests={"cpu": 800})], "container1",
                 {TEST_POD: 100}, id=f"{CR}: container: a named container counts alone, pod-level requests ignored"),
    pytest.param([pod(cpu("container1", 100), init=(cpu("init-container1", 20),
                                                     cpu("restartable-container1", 50, sidecar=True)))],
                 "", {TEST_POD: 150}, id=f"{CR}: pod with restartable init containers"),
    # resourcehelpers.PodRequests starts from the containers' aggregate and overrides only the resources the
    # pod sets: pod-level requests for memory alone leave cpu to the containers.
    pytest.param([pod(cpu("container1", 100), cpu("container2", 50), pod_requests={"memory": 2**30 * 1000})], "",
                 {TEST_POD: 150},
                 id="derived, no upstream case: calculatePodLevelRequests: pod-level memory only, cpu from containers"),
    # That aggregate is AggregateContainerRequests: a (non-sidecar) init container larger than the running set
    # raises it (max, as for scheduling).
    pytest.param([pod(cpu("container1", 100), cpu("container2", 50), init=(cpu("init-container1", 300),),
                      pod_requests={"memory": 2**30 * 1000})], "",
                 {TEST_POD: 300},
                 id="derived, no upstream case: calculatePodLevelRequests: a larger init container sets the cpu"),
    pytest.param([pod(cpu("container1", 100))], "non-existent-container",
                 "container non-existent-container not found in Pod test-pod",
                 id="TestCalculatePodRequestsFromContainers_NonExistentContainer: the error names container and pod"),
]  # fmt: skip


@pytest.mark.parametrize(("pods", "container", "expected"), CALCULATE_REQUESTS)
def test_calculate_requests(pods: list[Pod], container: str, expected: dict[str, int] | str) -> None:
    """A dict is the expected requests; a string is the exact error message."""
    if isinstance(expected, str):
        with pytest.raises(MetricComputationError) as err:
            calculate_requests(pods, container, "cpu")
        assert err.value.message == expected
    else:
        assert calculate_requests(pods, container, "cpu") == expected
