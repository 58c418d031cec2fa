"""The cases of upstream replica_calculator_test.go (Kubernetes 1.36), run through `replay_data`.

Each case is one row of an upstream table test (or one upstream test function), with the upstream
function's name in its id. The fixture is built as the upstream fakes build it (see `builders`), the
decision is replayed, and the assertions are the upstream ones on the per-metric proposal, before
stabilization and limits: the replica count, the reported usage, or the error text it must contain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from autoscaler.replay import replay_data
from tests.conformance.builders import (
    DEFAULT_TESTING_TOLERANCE,
    MAX_INT32,
    MAX_INT64,
    NUM_CONTAINERS_PER_POD,
    calculator_snapshot,
    cool_cpu_creation_time,
    cpu_requests,
    external_average_value_metric,
    external_metric_value_list,
    external_value_metric,
    fake_pods,
    hot_cpu_creation_time,
    object_average_value_metric,
    object_metric_value,
    object_value_metric,
    pod_metric_levels,
    pod_metrics_list,
    pods_metric,
    pods_metric_value_list,
    resource_average_value_metric,
    resource_utilization_metric,
)

T, F = "True", "False"
RUNNING, PENDING, FAILED = "Running", "Pending", "Failed"
HOT, COOL = hot_cpu_creation_time(), cool_cpu_creation_time()
N = NUM_CONTAINERS_PER_POD
TOL = DEFAULT_TESTING_TOLERANCE


@dataclass(frozen=True)
class Expected:
    """What the upstream test asserts: a replica count and reported usage, or an error substring."""

    replicas: int | None = None
    current: dict[str, int] = field(default_factory=dict)
    error: str | None = None


def resource_case(
    test: str,
    name: str,
    *,
    current: int,
    requests: list[str],
    levels: list[list[int]],
    target: int,
    replicas: int | None = None,
    utilization: int | None = None,
    raw: int | None = None,
    error: str | None = None,
    container: str = "",
    readiness: list[str] | None = None,
    start_times: list[Any] | None = None,
    phases: list[str] | None = None,
    deleted: list[bool] | None = None,
    pod_names: tuple[str, ...] = (),
    tolerances: tuple[float, float] | None = None,
    marks: Any = (),
) -> Any:
    """GetResourceReplicas: a (Container)Resource cpu metric with a Utilization target."""
    snapshot = calculator_snapshot(
        metric=resource_utilization_metric(target, container=container),
        reading=pod_metrics_list(levels, pod_names=pod_names),
        pods=fake_pods(
            current, readiness=readiness, start_times=start_times, phases=phases, deleted=deleted, requests=requests
        ),
        current_replicas=current,
        tolerances=tolerances,
    )
    if error is not None:
        expected = Expected(error=error)
    else:
        expected = Expected(replicas, {"averageUtilization": utilization, "averageValueMilli": raw})
    return pytest.param(snapshot, expected, id=f"{test}: {name}", marks=marks)


def metric_case(
    test: str,
    name: str,
    *,
    current: int,
    metric: dict[str, Any],
    reading: dict[str, Any],
    replicas: int,
    usage: tuple[str, int],
    readiness: list[str] | None = None,
    start_times: list[Any] | None = None,
    phases: list[str] | None = None,
    tolerances: tuple[float, float] | None = None,
    status: int | None = None,
    marks: Any = (),
) -> Any:
    """GetMetricReplicas / GetObject(PerPod)MetricReplicas / GetExternal(PerPod)MetricReplicas.

    `status` is the scale's status.replicas when it differs from the spec count `current`."""
    snapshot = calculator_snapshot(
        metric=metric,
        reading=reading,
        pods=fake_pods(current, readiness=readiness, start_times=start_times, phases=phases),
        current_replicas=current,
        status_replicas=status,
        tolerances=tolerances,
    )
    key, value = usage
    return pytest.param(snapshot, Expected(replicas, {key: value}), id=f"{test}: {name}", marks=marks)


def _check(snapshot: dict[str, Any], expected: Expected) -> None:
    metric = replay_data(snapshot)["metrics"][0]
    if expected.error is not None:
        assert metric["error"] is not None, f"expected an error containing {expected.error!r}"
        assert expected.error in metric["error"]
        return
    assert metric["error"] is None
    current = metric["current"] or {}
    assert (metric["proposedReplicas"], {k: current.get(k) for k in expected.current}) == (
        expected.replicas,
        expected.current,
    )


# ---------------------------------------------------------------------------------------------------
# GetResourceReplicas
# ---------------------------------------------------------------------------------------------------

RS = "TestReplicaCalcResourceScale"
RESOURCE_SCALE = [
    resource_case(RS, "scale up", current=3, requests=cpu_requests(3, "1.0"),
                  levels=pod_metric_levels(300, 500, 700), target=30,
                  replicas=5, utilization=50, raw=N * 500),
    resource_case(RS, "scale up: container metric", current=3, container="container2",
                  requests=cpu_requests(3, "1.0"), levels=[[1000, 300], [1000, 500], [1000, 700]], target=30,
                  replicas=5, utilization=50, raw=500),
    resource_case(RS, "scale up: unready pod scales less", current=3, readiness=[F, T, T],
                  requests=cpu_requests(3, "1.0"), levels=pod_metric_levels(300, 500, 700), target=30,
                  replicas=4, utilization=60, raw=N * 600),
    resource_case(RS, "scale up: hot-CPU container scales less", current=3, start_times=[HOT, COOL, COOL],
                  container="container2", requests=cpu_requests(3, "1.0"),
                  levels=[[0, 300], [0, 500], [0, 700]], target=30,
                  replicas=4, utilization=60, raw=600),
    resource_case(RS, "scale up: hot-CPU pod scales less", current=3, start_times=[HOT, COOL, COOL],
                  requests=cpu_requests(3, "1.0"), levels=pod_metric_levels(300, 500, 700), target=30,
                  replicas=4, utilization=60, raw=N * 600),
    resource_case(RS, "no scale: unready pods ignored", current=3, readiness=[T, F, F],
                  requests=cpu_requests(3, "1.0"), levels=pod_metric_levels(400, 500, 700), target=30,
                  replicas=3, utilization=40, raw=N * 400),
    resource_case(RS, "no scale: hot-CPU pods ignored", current=3, readiness=[T, F, F],
                  start_times=[COOL, HOT, HOT], requests=cpu_requests(3, "1.0"),
                  levels=pod_metric_levels(400, 500, 700), target=30,
                  replicas=3, utilization=40, raw=N * 400),
    resource_case(RS, "scale up: failed pods ignored", current=2, readiness=[T, T, F, F],
                  phases=[RUNNING, RUNNING, FAILED, FAILED], requests=cpu_requests(4, "1.0"),
                  levels=pod_metric_levels(500, 700), target=30,
                  replicas=4, utilization=60, raw=N * 600),
    resource_case(RS, "scale up: failed pods ignored with missing container metric", current=2,
                  readiness=[T, T, F, F], phases=[RUNNING, RUNNING, FAILED, FAILED], container="container2",
                  requests=cpu_requests(4, "1.0"), levels=[[1000, 500], [9000, 700], [1000], [9000]], target=30,
                  replicas=4, utilization=60, raw=600),
    resource_case(RS, "scale up: container metrics with failed pods ignored", current=2, readiness=[T, T, F, F],
                  phases=[RUNNING, RUNNING, FAILED, FAILED], container="container2",
                  requests=cpu_requests(4, "1.0"), levels=[[1000, 500], [9000, 700]], target=30,
                  replicas=4, utilization=60, raw=600),
    resource_case(RS, "scale up: pods being deleted are ignored", current=2, readiness=[T, T, F, F],
                  phases=[RUNNING] * 4, deleted=[False, False, True, True], requests=cpu_requests(4, "1.0"),
                  levels=pod_metric_levels(500, 700), target=30,
                  replicas=4, utilization=60, raw=N * 600),
    resource_case(RS, "scale up: container metrics with pods being deleted ignored", current=2,
                  readiness=[T, T, F, F], phases=[RUNNING] * 4, deleted=[False, False, True, True],
                  container="container1", requests=cpu_requests(4, "1.0"),
                  levels=pod_metric_levels(500, 700), target=30,
                  replicas=4, utilization=60, raw=600),
    resource_case(RS, "scale down", current=5, requests=cpu_requests(5, "1.0"),
                  levels=pod_metric_levels(100, 300, 500, 250, 250), target=50,
                  replicas=3, utilization=28, raw=N * 280),
    resource_case(RS, "scale down: container metric", current=5, container="container2",
                  requests=cpu_requests(5, "1.0"),
                  levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], target=50,
                  replicas=3, utilization=28, raw=280),
    resource_case(RS, "scale down: exclude unready pods", current=5, readiness=[T, T, T, F, F],
                  requests=cpu_requests(5, "1.0"), levels=pod_metric_levels(100, 300, 500, 250, 250), target=50,
                  replicas=2, utilization=30, raw=N * 300),
    resource_case(RS, "scale down: container metric excludes unready pods", current=5, readiness=[T, T, T, F, F],
                  container="container2", requests=cpu_requests(5, "1.0"),
                  levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], target=50,
                  replicas=2, utilization=30, raw=300),
    resource_case(RS, "scale down: exclude unscheduled pods", current=5, readiness=[T, F, F, F, F],
                  phases=[RUNNING, PENDING, PENDING, PENDING, PENDING], requests=cpu_requests(5, "1.0"),
                  levels=pod_metric_levels(100), target=50,
                  replicas=1, utilization=10, raw=N * 100),
    resource_case(RS, "scale down: container metric excludes unscheduled pods", current=5,
                  readiness=[T, F, F, F, F], phases=[RUNNING, PENDING, PENDING, PENDING, PENDING],
                  container="container2", requests=cpu_requests(5, "1.0"),
                  levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], target=50,
                  replicas=1, utilization=10, raw=100),
    resource_case(RS, "scale down: ignore hot-CPU pods", current=5, start_times=[COOL, COOL, COOL, HOT, HOT],
                  requests=cpu_requests(5, "1.0"), levels=pod_metric_levels(100, 300, 500, 250, 250), target=50,
                  replicas=2, utilization=30, raw=N * 300),
    resource_case(RS, "scale down: container metric ignores hot-CPU pods", current=5,
                  start_times=[COOL, COOL, COOL, HOT, HOT], container="container2", requests=cpu_requests(5, "1.0"),
                  levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 1000], [1000, 1000]], target=50,
                  replicas=2, utilization=30, raw=300),
    resource_case(RS, "scale down: failed pods ignored", current=5, readiness=[T, T, T, T, T, F, F],
                  phases=[RUNNING] * 5 + [FAILED] * 2, requests=cpu_requests(7, "1.0"),
                  levels=pod_metric_levels(100, 300, 500, 250, 250), target=50,
                  replicas=3, utilization=28, raw=N * 280),
    resource_case(RS, "scale down: container metric with failed pods ignored", current=5,
                  readiness=[T, T, T, T, T, F, F], phases=[RUNNING] * 5 + [FAILED] * 2, container="container2",
                  requests=cpu_requests(7, "1.0"),
                  levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], target=50,
                  replicas=3, utilization=28, raw=280),
    resource_case(RS, "scale down: pods being deleted are ignored", current=5, readiness=[T, T, T, T, T, F, F],
                  phases=[RUNNING] * 7, deleted=[False] * 5 + [True] * 2, requests=cpu_requests(7, "1.0"),
                  levels=pod_metric_levels(100, 300, 500, 250, 250), target=50,
                  replicas=3, utilization=28, raw=N * 280),
    resource_case(RS, "scale down: still-running pods being deleted are ignored (kubernetes#83561)", current=5,
                  readiness=[T, T, T, T, T, F, F], phases=[RUNNING] * 7, deleted=[False] * 5 + [True] * 2,
                  container="container2", requests=cpu_requests(7, "1.0"),
                  levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], target=50,
                  replicas=3, utilization=28, raw=280),
]  # fmt: skip

MIXED_REQUESTS = ["0.9", "1.0", "1.1"]
RT = "TestReplicaCalcResourceTolerance"
RESOURCE_TOLERANCE = [
    resource_case(RT, "within default tolerance", current=3, requests=MIXED_REQUESTS,
                  levels=pod_metric_levels(1010, 1030, 1020), target=100,
                  replicas=3, utilization=102, raw=N * 1020),
    resource_case(RT, "outside 0% tolerance", tolerances=(0.0, 0.0), current=3, requests=MIXED_REQUESTS,
                  levels=pod_metric_levels(909, 1010, 1111), target=100,
                  replicas=4, utilization=101, raw=N * 1010),
    resource_case(RT, "within 200% scale-up tolerance", tolerances=(TOL, 2.0), current=3, requests=MIXED_REQUESTS,
                  levels=pod_metric_levels(1890, 1910, 1900), target=100,
                  replicas=3, utilization=190, raw=N * 1900),
    resource_case(RT, "outside 8% scale-up tolerance (superfluous scale-down tolerance)", tolerances=(2.0, 0.08),
                  current=3, requests=MIXED_REQUESTS, levels=pod_metric_levels(1100, 1080, 1090), target=100,
                  replicas=4, utilization=109, raw=N * 1090),
    resource_case(RT, "within 36% scale-down tolerance", tolerances=(0.36, TOL), current=3, requests=MIXED_REQUESTS,
                  levels=pod_metric_levels(660, 640, 650), target=100,
                  replicas=3, utilization=65, raw=N * 650),
    resource_case(RT, "outside 34% scale-down tolerance", tolerances=(0.34, TOL), current=3, requests=MIXED_REQUESTS,
                  levels=pod_metric_levels(660, 640, 650), target=100,
                  replicas=2, utilization=65, raw=N * 650),
]  # fmt: skip

RM = "TestReplicaCalcResourceMissingMetrics"
RESOURCE_MISSING_METRICS = [
    resource_case(RM, "superfluous metrics counted", current=4, requests=cpu_requests(4, "1.0"),
                  levels=pod_metric_levels(4000, 9500, 3000, 7000, 3200, 2000), target=100,
                  replicas=24, utilization=587, raw=N * 5875),
    resource_case(RM, "some pods missing metrics scales down", current=4, requests=cpu_requests(4, "1.0"),
                  levels=pod_metric_levels(400, 95), target=100,
                  replicas=3, utilization=24, raw=495),
    resource_case(RM, "no change: metric equal to target", current=2, requests=cpu_requests(2, "1.0"),
                  levels=pod_metric_levels(1000), target=100,
                  replicas=2, utilization=100, raw=N * 1000),
    resource_case(RM, "no change: metric above target", current=2, requests=cpu_requests(2, "1.0"),
                  levels=pod_metric_levels(1900), target=100,
                  replicas=2, utilization=190, raw=N * 1900),
    resource_case(RM, "no change: metric below target", current=2, requests=cpu_requests(2, "1.0"),
                  levels=pod_metric_levels(600), target=100,
                  replicas=2, utilization=60, raw=N * 600),
    resource_case(RM, "no change: unready pod metric missing", current=3, readiness=[F, T, T],
                  requests=cpu_requests(3, "1.0"), levels=pod_metric_levels(100, 450), target=50,
                  replicas=3, utilization=45, raw=N * 450),
    resource_case(RM, "no change: hot-CPU pod metric missing", current=3, start_times=[HOT, COOL, COOL],
                  requests=cpu_requests(3, "1.0"), levels=pod_metric_levels(100, 450), target=50,
                  replicas=3, utilization=45, raw=N * 450),
    resource_case(RM, "scale up: unready pod metric missing", current=3, readiness=[F, T, T],
                  requests=cpu_requests(3, "1.0"), levels=pod_metric_levels(100, 2000), target=50,
                  replicas=4, utilization=200, raw=N * 2000),
    resource_case(RM, "scale up: hot-CPU pod metric missing", current=3, readiness=[F, T, T],
                  start_times=[HOT, COOL, COOL], requests=cpu_requests(3, "1.0"),
                  levels=pod_metric_levels(100, 2000), target=50,
                  replicas=4, utilization=200, raw=N * 2000),
    resource_case(RM, "scale down: unready pod metric missing", current=4, readiness=[F, T, T, T],
                  requests=cpu_requests(4, "1.0"), levels=pod_metric_levels(100, 100, 100), target=50,
                  replicas=3, utilization=10, raw=N * 100),
    resource_case(RM, "scale down: target over 100", current=4, readiness=[F, T, T, T],
                  requests=["1.0", "1.0", "2.0", "2.0"], levels=pod_metric_levels(200, 100, 100), target=300,
                  replicas=2, utilization=6, raw=N * 100),
    resource_case(RM, "rolling update with maxSurge: extra pod missing metric", current=2,
                  phases=[RUNNING] * 3, requests=cpu_requests(3, "1.0"), levels=pod_metric_levels(100, 100),
                  target=50, replicas=2, utilization=10, raw=N * 100),
    resource_case(RM, "disjoint pod and metric names", current=1, requests=cpu_requests(1, "1.0"),
                  levels=pod_metric_levels(100), pod_names=("an-older-pod-name",), target=100,
                  error="no metrics returned matched known pods"),
    resource_case(RM, "no metrics returned from metrics API", current=4, requests=cpu_requests(3, "1.0"),
                  levels=pod_metric_levels(), target=100,
                  error="unable to get metrics for resource cpu: no metrics returned from resource metrics API"),
    resource_case(RM, "missing CPU request on container", current=1, requests=[],
                  levels=pod_metric_levels(200), target=100,
                  error="missing request for"),
]  # fmt: skip


def _computed_tolerance_cases() -> list[Any]:
    """TestReplicaCalcComputedToleranceAlgImplementation: targets derived from the tolerance, just past it and just
    inside it, with requests jittered around 2x the usage."""
    test = "TestReplicaCalcComputedToleranceAlgImplementation"
    start_pods = 10
    total_used = start_pods * 150  # 150 mCPU per pod
    total_requested = 2 * total_used  # each pod asks for twice what it uses
    requested_to_used = float(total_requested // total_used)
    per_pod_requested = total_requested // start_pods
    jitter = [100, -100, 10, -10, 2, -2, 1, -1, 0, 0]
    requests = [f"{per_pod_requested + j}m" for j in jitter]
    levels = pod_metric_levels(*[total_used // 10] * start_pods)
    utilization = total_used * 100 // total_requested
    raw = N * total_used // 10

    target = abs(1 / (requested_to_used * (1 - TOL))) + 0.01
    used_ratio = total_used / (total_requested * target)
    breach = resource_case(
        test,
        "a target just past the tolerance scales down",
        current=start_pods,
        requests=requests,
        levels=levels,
        target=int(target * 100),
        replicas=math.ceil(used_ratio * start_pods),
        utilization=utilization,
        raw=raw,
    )
    target = abs(1 / (requested_to_used * (1 - TOL))) + 0.004
    hold = resource_case(
        test,
        "a target just inside the tolerance holds",
        current=start_pods,
        requests=requests,
        levels=levels,
        target=int(target * 100),
        replicas=start_pods,
        utilization=utilization,
        raw=raw,
    )
    return [breach, hold]


@pytest.mark.parametrize(
    ("snapshot", "expected"),
    RESOURCE_SCALE + RESOURCE_TOLERANCE + RESOURCE_MISSING_METRICS + _computed_tolerance_cases(),
)
def test_resource_replicas(snapshot: dict[str, Any], expected: Expected) -> None:
    _check(snapshot, expected)


# ---------------------------------------------------------------------------------------------------
# GetMetricReplicas (Pods metrics)
# ---------------------------------------------------------------------------------------------------

PM = "TestReplicaCalcPodMetric"
POD_METRIC = [
    metric_case(PM, "scale up", current=3, metric=pods_metric("qps", 15000),
                reading=pods_metric_value_list("qps", [20000, 10000, 30000]),
                replicas=4, usage=("averageValueMilli", 20000)),
    metric_case(PM, "scale up: unready hot-CPU pod scales less", current=3, readiness=[T, T, F],
                start_times=[COOL, COOL, HOT], metric=pods_metric("qps", 15000),
                reading=pods_metric_value_list("qps", [50000, 10000, 30000]),
                replicas=6, usage=("averageValueMilli", 30000)),
    metric_case(PM, "scale up: unready hot-CPU pods avoid scale-down", current=3, readiness=[F, T, F],
                start_times=[HOT, COOL, HOT], metric=pods_metric("qps", 15000),
                reading=pods_metric_value_list("qps", [50000, 15000, 30000]),
                replicas=7, usage=("averageValueMilli", 31666)),
    metric_case(PM, "scale down", current=5, metric=pods_metric("qps", 20000),
                reading=pods_metric_value_list("qps", [12000] * 5),
                replicas=3, usage=("averageValueMilli", 12000)),
    metric_case(PM, "within default tolerance", current=3, metric=pods_metric("qps", 20000),
                reading=pods_metric_value_list("qps", [20000, 21000, 21000]),
                replicas=3, usage=("averageValueMilli", 20666)),
    metric_case(PM, "outside configurable 1% tolerance", tolerances=(TOL, 0.01), current=3,
                metric=pods_metric("qps", 20000), reading=pods_metric_value_list("qps", [20000, 21000, 21000]),
                replicas=4, usage=("averageValueMilli", 20666)),
    metric_case(PM, "no change: missing metrics", current=5, metric=pods_metric("qps", 20000),
                reading=pods_metric_value_list("qps", [20000, 19000, 21000]),
                replicas=5, usage=("averageValueMilli", 20000)),
    metric_case(PM, "rolling update with maxSurge: extra pod missing metric", current=2, phases=[RUNNING] * 3,
                metric=pods_metric("qps", 17000), reading=pods_metric_value_list("qps", [10000, 10000]),
                replicas=2, usage=("averageValueMilli", 10000)),
]  # fmt: skip

# ---------------------------------------------------------------------------------------------------
# GetObjectMetricReplicas and GetObjectPerPodMetricReplicas
# ---------------------------------------------------------------------------------------------------

OM = "TestReplicaCalcObjectMetric"
OBJECT_METRIC = [
    metric_case(OM, "scale up", current=3, metric=object_value_metric("qps", 15000),
                reading=object_metric_value("qps", 20000),
                replicas=4, usage=("valueMilli", 20000)),
    metric_case(OM, "scale up: very large metric saturates replicas to MaxInt32", current=3,
                metric=object_value_metric("qps", 1), reading=object_metric_value("qps", MAX_INT64),
                replicas=MAX_INT32, usage=("valueMilli", MAX_INT64)),
    metric_case(OM, "scale up: ignores unready pods", current=3, readiness=[F, T, F],
                metric=object_value_metric("qps", 10000), reading=object_metric_value("qps", 50000),
                replicas=5, usage=("valueMilli", 50000)),
    metric_case(OM, "scale down", current=5, metric=object_value_metric("qps", 20000),
                reading=object_metric_value("qps", 12000),
                replicas=3, usage=("valueMilli", 12000)),
    metric_case(OM, "within default tolerance", current=3, metric=object_value_metric("qps", 20000),
                reading=object_metric_value("qps", 20666),
                replicas=3, usage=("valueMilli", 20666)),
    metric_case(OM, "outside configurable 1% tolerance", tolerances=(TOL, 0.01), current=3,
                metric=object_value_metric("qps", 20000), reading=object_metric_value("qps", 20666),
                replicas=4, usage=("valueMilli", 20666)),
]  # fmt: skip

OP = "TestReplicaCalcObjectPerPodMetric"
OBJECT_PER_POD_METRIC = [
    metric_case(OP, "scale up", current=3, metric=object_average_value_metric("qps", 5000),
                reading=object_metric_value("qps", 20000),
                replicas=4, usage=("averageValueMilli", 6667)),
    metric_case(OP, "scale down", current=5, metric=object_average_value_metric("qps", 2000),
                reading=object_metric_value("qps", 6000),
                replicas=3, usage=("averageValueMilli", 1200)),
    metric_case(OP, "within default tolerance", current=4, metric=object_average_value_metric("qps", 5000),
                reading=object_metric_value("qps", 20166),
                replicas=4, usage=("averageValueMilli", 5042)),
    metric_case(OP, "outside configurable 1% tolerance", tolerances=(TOL, 0.01), current=4,
                metric=object_average_value_metric("qps", 5000), reading=object_metric_value("qps", 20208),
                replicas=5, usage=("averageValueMilli", 5052)),
]  # fmt: skip

# ---------------------------------------------------------------------------------------------------
# GetExternalMetricReplicas and GetExternalPerPodMetricReplicas
# ---------------------------------------------------------------------------------------------------

EM = "TestReplicaCalcExternalMetric"
EXTERNAL_METRIC = [
    metric_case(EM, "scale down: ignores unready pods (would otherwise scale up)", current=3, readiness=[F, T, F],
                metric=external_value_metric("qps", 4400), reading=external_metric_value_list("qps", [8600]),
                replicas=2, usage=("valueMilli", 8600)),
    metric_case(EM, "scale down", current=5, metric=external_value_metric("qps", 14334),
                reading=external_metric_value_list("qps", [8600]),
                replicas=3, usage=("valueMilli", 8600)),
    metric_case(EM, "within default tolerance", current=3, metric=external_value_metric("qps", 8888),
                reading=external_metric_value_list("qps", [8600]),
                replicas=3, usage=("valueMilli", 8600)),
    metric_case(EM, "outside configurable 1% tolerance", tolerances=(TOL, 0.01), current=3,
                metric=external_value_metric("qps", 8800), reading=external_metric_value_list("qps", [8900]),
                replicas=4, usage=("valueMilli", 8900)),
    metric_case(EM, "usage overflow caps at MaxInt64", current=3, metric=external_value_metric("qps", MAX_INT64),
                reading=external_metric_value_list("qps", [MAX_INT64 // 2 + 1, MAX_INT64 // 2 + 1]),
                replicas=3, usage=("valueMilli", MAX_INT64)),
]  # fmt: skip

EP = "TestReplicaCalcExternalPerPodMetric"
EXTERNAL_PER_POD_METRIC = [
    metric_case(EP, "replica count overflow saturates to MaxInt32", current=1,
                metric=external_average_value_metric("qps", 1),
                reading=external_metric_value_list("qps", [MAX_INT64]),
                replicas=MAX_INT32, usage=("averageValueMilli", MAX_INT64)),
    metric_case(EP, "usage overflow with huge target leaves replicas unchanged", current=1,
                metric=external_average_value_metric("qps", MAX_INT64),
                reading=external_metric_value_list("qps", [MAX_INT64]),
                replicas=1, usage=("averageValueMilli", MAX_INT64)),
    metric_case(EP, "scale up", current=3, metric=external_average_value_metric("qps", 2150),
                reading=external_metric_value_list("qps", [8600]),
                replicas=4, usage=("averageValueMilli", 2867)),
    metric_case(EP, "scale down", current=5, metric=external_average_value_metric("qps", 2867),
                reading=external_metric_value_list("qps", [8600]),
                replicas=3, usage=("averageValueMilli", 1720)),
    metric_case(EP, "within default tolerance", current=3, metric=external_average_value_metric("qps", 2900),
                reading=external_metric_value_list("qps", [8600]),
                replicas=3, usage=("averageValueMilli", 2867)),
    metric_case(EP, "outside configurable 1% tolerance", tolerances=(TOL, 0.01), current=3,
                metric=external_average_value_metric("qps", 2800), reading=external_metric_value_list("qps", [8600]),
                replicas=4, usage=("averageValueMilli", 2867)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("snapshot", "expected"),
    POD_METRIC + OBJECT_METRIC + OBJECT_PER_POD_METRIC + EXTERNAL_METRIC + EXTERNAL_PER_POD_METRIC,
)
def test_metric_replicas(snapshot: dict[str, Any], expected: Expected) -> None:
    _check(snapshot, expected)


# ---------------------------------------------------------------------------------------------------
# Derived cases: branches of replica_calculator.go that replica_calculator_test.go (1.36) has no row for
# ---------------------------------------------------------------------------------------------------

RAW = "derived, no upstream case: GetRawResourceReplicas"
PER_POD = "kubernetes#140958 (after 1.36.0): the per-replica usage of AverageValue targets"
FROM_ZERO = "derived, no upstream case: getUsageRatioReplicaCount from zero"
DERIVED = [
    # calcPlainMetricReplicas over cpu usage: the same fixture as TestReplicaCalcResourceScale "scale up".
    metric_case(RAW, "scale up on the pods' average usage", current=3,
                metric=resource_average_value_metric(600), reading=pod_metrics_list(pod_metric_levels(300, 500, 700)),
                replicas=5, usage=("averageValueMilli", 1000)),
    metric_case(RAW, "an unready pod counts as 0 on a scale-up (CPU readiness rules apply)", current=3,
                readiness=[F, T, T], metric=resource_average_value_metric(600),
                reading=pod_metrics_list(pod_metric_levels(300, 500, 700)),
                replicas=4, usage=("averageValueMilli", 1200)),
    metric_case(RAW, "missing pods count as using the target on a scale-down", current=4,
                metric=resource_average_value_metric(1000), reading=pod_metrics_list(pod_metric_levels(200, 200)),
                replicas=3, usage=("averageValueMilli", 400)),
    # With currentReplicas 0 (minReplicas 0), the ratio is rounded up directly: no pods, no tolerance.
    metric_case(FROM_ZERO, "object metric above target", current=0,
                metric=object_value_metric("qps", 15000), reading=object_metric_value("qps", 20000),
                replicas=2, usage=("valueMilli", 20000)),
    metric_case(FROM_ZERO, "external metric above target", current=0,
                metric=external_value_metric("qps", 4400), reading=external_metric_value_list("qps", [8600]),
                replicas=2, usage=("valueMilli", 8600)),
    metric_case(FROM_ZERO, "external metric at zero stays at zero", current=0,
                metric=external_value_metric("qps", 4400), reading=external_metric_value_list("qps", [0]),
                replicas=0, usage=("valueMilli", 0)),
    metric_case(FROM_ZERO, "within tolerance of the target still scales from zero", current=0,
                metric=object_value_metric("qps", 20000), reading=object_metric_value("qps", 20666),
                replicas=2, usage=("valueMilli", 20666)),
    # The usage per replica reported in status: 0 rather than a division when status.replicas is 0 (the pods
    # are not created yet), and within the int64 range, never the wrapped -9223372036854775808m.
    metric_case(PER_POD, "object AverageValue with status.replicas 0 reports 0 per replica", current=3, status=0,
                metric=object_average_value_metric("qps", 10000), reading=object_metric_value("qps", 40000),
                replicas=4, usage=("averageValueMilli", 0)),
    metric_case(PER_POD, "external AverageValue with status.replicas 0 reports 0 per replica", current=3, status=0,
                metric=external_average_value_metric("qps", 2222), reading=external_metric_value_list("qps", [8600]),
                replicas=4, usage=("averageValueMilli", 0)),
    metric_case(PER_POD, "an object value at the int64 maximum is capped, not wrapped", current=1,
                metric=object_average_value_metric("qps", 2**62), reading=object_metric_value("qps", MAX_INT64),
                replicas=2, usage=("averageValueMilli", MAX_INT64)),
    metric_case(PER_POD, "an external sum past the int64 maximum is capped", current=3,
                metric=external_average_value_metric("qps", 10000),
                reading=external_metric_value_list("qps", [MAX_INT64 - 5, 10]),
                replicas=MAX_INT32, usage=("averageValueMilli", MAX_INT64)),
    metric_case(PER_POD, "an ordinary per-replica average is the ceiling of the division", current=3,
                metric=external_average_value_metric("qps", 2222), reading=external_metric_value_list("qps", [8600]),
                replicas=4, usage=("averageValueMilli", 2867)),
]  # fmt: skip


@pytest.mark.parametrize(("snapshot", "expected"), DERIVED)
def test_derived_replicas(snapshot: dict[str, Any], expected: Expected) -> None:
    """Branches without an upstream row, with expectations worked out by hand from the Go code."""
    _check(snapshot, expected)
