"""Decision snapshots shaped like the fixtures of the HPA's own Go tests (pkg/controller/podautoscaler).

The upstream tests build pods and metrics-API answers with fake clients; these helpers build the same
objects as snapshot JSON, so a transcribed case runs through `autoscaler.replay.replay_data` exactly as a
real snapshot would. What the fakes do, and what is reproduced here:

- pods are named `test-pod-<i>`, labelled `name=test-pod`, have two containers `container1` and
  `container2` (each requesting the pod's request when one is given), a Ready condition without
  lastTransitionTime (Go's zero time), and a startTime that is Go's zero time unless the test sets one;
  pods being deleted carry a deletionTimestamp of "now";
- resource metrics report, per pod, one usage per container named `container<j+1>`, a window of one
  minute and the test's timestamp (Go's zero time unless the test sets one); a pod with fewer levels than
  containers gets a nameless, usage-less container in the missing slot (the Go zero value);
- custom and external metrics carry the test's timestamp and no window (so the one-minute default).

Keep this module additive: other conformance files import from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

# The clock the upstream tests read with time.Now(); any fixed instant will do.
NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
# Go's zero time.Time, which is what the fakes leave in every timestamp the test does not set.
GO_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)

POD_NAME_PREFIX = "test-pod"
TEST_NAMESPACE = "test-namespace"
NUM_CONTAINERS_PER_POD = 2
MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1

# The constants at the top of replica_calculator.go's test helpers (defaultTesting*).
DEFAULT_TESTING_TOLERANCE = 0.1
DEFAULT_TESTING_CPU_INITIALIZATION_PERIOD_SECONDS = 120.0
DEFAULT_TESTING_DELAY_OF_INITIAL_READINESS_STATUS_SECONDS = 10.0

UPSTREAM_SETTINGS: dict[str, Any] = {
    "tolerance": DEFAULT_TESTING_TOLERANCE,
    "cpuInitializationPeriodSeconds": DEFAULT_TESTING_CPU_INITIALIZATION_PERIOD_SECONDS,
    "initialReadinessDelaySeconds": DEFAULT_TESTING_DELAY_OF_INITIAL_READINESS_STATUS_SECONDS,
}

TEST_DEPLOYMENT_REF: dict[str, str] = {"kind": "Deployment", "name": "some-deployment", "apiVersion": "apps/v1"}
TEST_EXTERNAL_SELECTOR: dict[str, Any] = {"matchLabels": {"label": "value"}}


def rfc3339(value: datetime) -> str:
    """A timestamp as the API writes it (UTC, trailing Z, fractions only when present)."""
    value = value.astimezone(UTC)
    # strftime's %Y does not zero-pad year 1 (Go's zero time) on every platform.
    text = f"{value.year:04d}-{value:%m-%dT%H:%M:%S}"
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + "Z"


def hot_cpu_creation_time(now: datetime = NOW) -> datetime:
    """hotCPUCreationTime: a pod started just now, inside the CPU initialization period."""
    return now


def cool_cpu_creation_time(now: datetime = NOW) -> datetime:
    """coolCPUCreationTime: a pod started three minutes ago, past the two-minute initialization period."""
    return now - timedelta(minutes=3)


def milli(value: int) -> str:
    """resource.NewMilliQuantity(value, DecimalSI) as a quantity string."""
    return f"{value}m"


# ---------------------------------------------------------------------------------------------------
# Pods (buildFakePod / prepareTestClientSet)
# ---------------------------------------------------------------------------------------------------


def pod_name(index: int) -> str:
    return f"{POD_NAME_PREFIX}-{index}"


def fake_pods(
    current_replicas: int,
    *,
    readiness: Sequence[str] | None = None,
    start_times: Sequence[datetime] | None = None,
    phases: Sequence[str] | None = None,
    deleted: Sequence[bool] | None = None,
    requests: Sequence[str] | None = None,
    resource: str = "cpu",
    now: datetime = NOW,
) -> list[dict[str, Any]]:
    """The pods the upstream fake pod lister returns: max(currentReplicas, len(podPhase)) of them."""
    count = max(current_replicas, len(phases or ()))
    pods = []
    for i in range(count):
        ready = readiness[i] if readiness is not None and i < len(readiness) else "True"
        start = start_times[i] if start_times is not None else GO_ZERO_TIME
        phase = phases[i] if phases is not None else "Running"
        container_requests = {resource: requests[i]} if requests is not None and i < len(requests) else {}
        metadata: dict[str, Any] = {
            "name": pod_name(i),
            "namespace": TEST_NAMESPACE,
            "labels": {"name": POD_NAME_PREFIX},
        }
        if deleted is not None and deleted[i]:
            metadata["deletionTimestamp"] = rfc3339(now)
        pods.append(
            {
                "metadata": metadata,
                "spec": {
                    "containers": [
                        {"name": f"container{j + 1}", "resources": {"requests": dict(container_requests)}}
                        for j in range(NUM_CONTAINERS_PER_POD)
                    ]
                },
                "status": {
                    "phase": phase,
                    "startTime": rfc3339(start),
                    "conditions": [{"type": "Ready", "status": ready}],
                },
            }
        )
    return pods


def cpu_requests(count: int, value: str) -> list[str]:
    """cpuRequests: `count` identical requests."""
    return [value] * count


# ---------------------------------------------------------------------------------------------------
# Metrics-API answers (newFakeResourceMetricsClient, newFakeCustomMetricsClient, newFakeExternalMetricsClient)
# ---------------------------------------------------------------------------------------------------


def pod_metric_levels(*per_pod: int) -> list[list[int]]:
    """makePodMetricLevels: every container of pod i reports per_pod[i]."""
    return [[value] * NUM_CONTAINERS_PER_POD for value in per_pod]


def pod_metrics_list(
    levels: Sequence[Sequence[int]],
    *,
    pod_names: Sequence[str] = (),
    resource: str = "cpu",
    timestamp: datetime = GO_ZERO_TIME,
) -> dict[str, Any]:
    """A metrics.k8s.io PodMetricsList with one-minute windows; levels[i][j] is container j of pod i."""
    items = []
    for i, per_container in enumerate(levels):
        containers: list[dict[str, Any]] = [
            {"name": f"container{j + 1}", "usage": {resource: milli(value)}} for j, value in enumerate(per_container)
        ]
        # make([]ContainerMetrics, numContainersPerPod): unfilled slots stay zero values.
        containers += [{"name": "", "usage": {}}] * (NUM_CONTAINERS_PER_POD - len(containers))
        items.append(
            {
                "metadata": {
                    "name": pod_names[i] if i < len(pod_names) else pod_name(i),
                    "namespace": TEST_NAMESPACE,
                    "labels": {"name": POD_NAME_PREFIX},
                },
                "timestamp": rfc3339(timestamp),
                "window": "1m",
                "containers": containers,
            }
        )
    return {"kind": "PodMetricsList", "items": items}


def pods_metric_value_list(name: str, levels: Sequence[int], *, timestamp: datetime = GO_ZERO_TIME) -> dict[str, Any]:
    """A custom.metrics.k8s.io MetricValueList about test-pod-0..n (no windowSeconds: the 1 min default)."""
    return {
        "kind": "MetricValueList",
        "items": [
            {
                "describedObject": {"kind": "Pod", "name": pod_name(i), "namespace": TEST_NAMESPACE},
                "metric": {"name": name},
                "timestamp": rfc3339(timestamp),
                "value": milli(level),
            }
            for i, level in enumerate(levels)
        ],
    }


def object_metric_value(
    name: str, level: int, *, described: Mapping[str, str] = TEST_DEPLOYMENT_REF, timestamp: datetime = GO_ZERO_TIME
) -> dict[str, Any]:
    """The one custom.metrics.k8s.io MetricValue about the described object."""
    return {
        "describedObject": dict(described),
        "metric": {"name": name},
        "timestamp": rfc3339(timestamp),
        "value": milli(level),
    }


def external_metric_value_list(
    name: str, levels: Sequence[int], *, timestamp: datetime = GO_ZERO_TIME
) -> dict[str, Any]:
    """An external.metrics.k8s.io ExternalMetricValueList."""
    return {
        "kind": "ExternalMetricValueList",
        "items": [{"metricName": name, "timestamp": rfc3339(timestamp), "value": milli(level)} for level in levels],
    }


# ---------------------------------------------------------------------------------------------------
# Metric specs (autoscaling/v2 MetricSpec)
# ---------------------------------------------------------------------------------------------------


def resource_utilization_metric(target_utilization: int, *, resource: str = "cpu", container: str = "") -> dict:
    """A Resource (or, with a container, ContainerResource) metric with a Utilization target."""
    target = {"type": "Utilization", "averageUtilization": target_utilization}
    if container:
        return {
            "type": "ContainerResource",
            "containerResource": {"name": resource, "container": container, "target": target},
        }
    return {"type": "Resource", "resource": {"name": resource, "target": target}}


def resource_average_value_metric(target_milli: int, *, resource: str = "cpu", container: str = "") -> dict:
    """A Resource (or ContainerResource) metric with an AverageValue target: GetRawResourceReplicas."""
    target = {"type": "AverageValue", "averageValue": milli(target_milli)}
    if container:
        return {
            "type": "ContainerResource",
            "containerResource": {"name": resource, "container": container, "target": target},
        }
    return {"type": "Resource", "resource": {"name": resource, "target": target}}


def pods_metric(name: str, target_milli: int) -> dict:
    return {
        "type": "Pods",
        "pods": {"metric": {"name": name}, "target": {"type": "AverageValue", "averageValue": milli(target_milli)}},
    }


def object_value_metric(name: str, target_milli: int, *, described: Mapping[str, str] = TEST_DEPLOYMENT_REF) -> dict:
    return {
        "type": "Object",
        "object": {
            "describedObject": dict(described),
            "metric": {"name": name},
            "target": {"type": "Value", "value": milli(target_milli)},
        },
    }


def object_average_value_metric(
    name: str, target_milli: int, *, described: Mapping[str, str] = TEST_DEPLOYMENT_REF
) -> dict:
    return {
        "type": "Object",
        "object": {
            "describedObject": dict(described),
            "metric": {"name": name},
            "target": {"type": "AverageValue", "averageValue": milli(target_milli)},
        },
    }


def external_value_metric(
    name: str, target_milli: int, *, selector: Mapping[str, Any] = TEST_EXTERNAL_SELECTOR
) -> dict:
    return {
        "type": "External",
        "external": {
            "metric": {"name": name, "selector": dict(selector)},
            "target": {"type": "Value", "value": milli(target_milli)},
        },
    }


def external_average_value_metric(
    name: str, target_milli: int, *, selector: Mapping[str, Any] = TEST_EXTERNAL_SELECTOR
) -> dict:
    return {
        "type": "External",
        "external": {
            "metric": {"name": name, "selector": dict(selector)},
            "target": {"type": "AverageValue", "averageValue": milli(target_milli)},
        },
    }


# ---------------------------------------------------------------------------------------------------
# Whole snapshots
# ---------------------------------------------------------------------------------------------------


def tolerance_behavior(scale_down: float, scale_up: float) -> dict[str, Any]:
    """A behavior carrying per-direction tolerances (what `Tolerances{scaleDown, scaleUp}` stands for)."""
    return {"scaleDown": {"tolerance": repr(scale_down)}, "scaleUp": {"tolerance": repr(scale_up)}}


# The condition a scale to zero by the autoscaler leaves (horizontal.go, HPAScaleToZero).
SCALED_TO_ZERO_TRUE: dict[str, str] = {
    "type": "ScaledToZero",
    "status": "True",
    "reason": "ScaledToZero",
    "message": "the HPA controller scaled the workload to zero",
}


def calculator_snapshot(
    *,
    metric: dict[str, Any],
    reading: dict[str, Any],
    pods: list[dict[str, Any]],
    current_replicas: int,
    status_replicas: int | None = None,
    tolerances: tuple[float, float] | None = None,
    now: datetime = NOW,
    settings: Mapping[str, Any] = UPSTREAM_SETTINGS,
) -> dict[str, Any]:
    """One metric against the given pods, with bounds wide enough that the calculator always runs.

    `tolerances` is (scaleDown, scaleUp); None leaves the controller-wide 0.1 both ways.
    """
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "test-deployment"},
        "minReplicas": 1 if current_replicas > 0 else 0,
        "maxReplicas": MAX_INT32,
        "metrics": [metric],
    }
    if tolerances is not None:
        spec["behavior"] = tolerance_behavior(*tolerances)
    autoscaler: dict[str, Any] = {"metadata": {"name": "test-hpa", "namespace": TEST_NAMESPACE}, "spec": spec}
    settings = dict(settings)
    if current_replicas == 0:
        # A target at 0 replicas is only reconciled when the autoscaler scaled it there itself: the
        # HPAScaleToZero gate on, minReplicas 0 and the ScaledToZero condition True.
        settings["featureGates"] = {**settings.get("featureGates", {}), "HPAScaleToZero": True}
        autoscaler["status"] = {"conditions": [SCALED_TO_ZERO_TRUE]}
    return {
        "now": rfc3339(now),
        "settings": settings,
        "autoscaler": autoscaler,
        "scale": {
            "spec": {"replicas": current_replicas},
            "status": {
                "replicas": current_replicas if status_replicas is None else status_replicas,
                "selector": f"name={POD_NAME_PREFIX}",
            },
        },
        "pods": pods,
        "metrics": [reading],
    }


# ---------------------------------------------------------------------------------------------------
# horizontal_test.go: behavior rules, failures, behaviour state and its whole fixture
# ---------------------------------------------------------------------------------------------------

# setupController: NewHorizontalController(..., 5*time.Minute, defaultTestingTolerance,
# defaultTestingCPUInitializationPeriod, defaultTestingDelayOfInitialReadinessStatus).
HORIZONTAL_TEST_SETTINGS: dict[str, Any] = {
    **UPSTREAM_SETTINGS,
    "downscaleStabilizationWindowSeconds": 300,
}
HORIZONTAL_TEST_TARGET: dict[str, str] = {"kind": "ReplicationController", "name": "test-rc", "apiVersion": "v1"}


def generate_scaling_rules(
    pods: int = 0,
    pods_period: int = 0,
    percent: int = 0,
    percent_period: int = 0,
    stabilization_window: int = 0,
    *,
    select_policy: str = "Max",
) -> dict[str, Any]:
    """generateScalingRules: one direction's HPAScalingRules; a zero value leaves its policy out."""
    policies = []
    if pods:
        policies.append({"type": "Pods", "value": pods, "periodSeconds": pods_period})
    if percent:
        policies.append({"type": "Percent", "value": percent, "periodSeconds": percent_period})
    return {"stabilizationWindowSeconds": stabilization_window, "selectPolicy": select_policy, "policies": policies}


def metric_error(message: str = "something went wrong") -> dict[str, Any]:
    """A metric reading that failed (the fake client returned an error)."""
    return {"error": message}


def scale_failure(message: str = "something went wrong") -> dict[str, Any]:
    """A scale subresource that could not be read."""
    return {"error": message}


def seconds_ago(seconds: float, *, now: datetime = NOW) -> str:
    return rfc3339(now - timedelta(seconds=seconds))


def timestamped_recommendations(
    items: Sequence[tuple[int, float]] | None, *, now: datetime = NOW
) -> list[dict[str, Any]] | None:
    """[]timestampedRecommendation as (replicas, seconds before now); None is a nil slice ("never reconciled")."""
    if items is None:
        return None
    return [{"replicas": replicas, "timestamp": seconds_ago(age, now=now)} for replicas, age in items]


def horizontal_test_pods(
    requests_milli: Sequence[int],
    *,
    readiness: Sequence[str] | None = None,
    start_times: Sequence[datetime] | None = None,
    phases: Sequence[str] | None = None,
    deleted: Sequence[bool] | None = None,
    now: datetime = NOW,
) -> list[dict[str, Any]]:
    """horizontal_test.go's pod lister: pod i asks for requests_milli[i] millicores split in two integer
    halves over container1 and container2; its Ready condition changed at its startTime (Go's zero time
    when the test sets none)."""
    pods = []
    for i, request in enumerate(requests_milli):
        start = rfc3339(start_times[i] if start_times is not None else GO_ZERO_TIME)
        labels = {"name": POD_NAME_PREFIX}
        metadata: dict[str, Any] = {"name": pod_name(i), "namespace": TEST_NAMESPACE, "labels": labels}
        if deleted is not None and deleted[i]:
            metadata["deletionTimestamp"] = rfc3339(now)
        half = {"cpu": milli(request // 2)}
        pods.append(
            {
                "metadata": metadata,
                "spec": {
                    "containers": [
                        {"name": "container1", "resources": {"requests": dict(half)}},
                        {"name": "container2", "resources": {"requests": dict(half)}},
                    ]
                },
                "status": {
                    "phase": phases[i] if phases is not None else "Running",
                    "startTime": start,
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": readiness[i] if readiness is not None else "True",
                            "lastTransitionTime": start,
                        }
                    ],
                },
            }
        )
    return pods


def horizontal_test_reading(metric: Mapping[str, Any], levels: Sequence[int], *, now: datetime = NOW) -> dict[str, Any]:
    """What horizontal_test.go's fake metrics clients answer for one metric spec, stamped `now`.

    Resource metrics split each level in two integer halves over the two containers.
    """
    kind = metric["type"]
    if kind in ("Resource", "ContainerResource"):
        return pod_metrics_list([[level // 2, level // 2] for level in levels], timestamp=now)
    if kind == "Pods":
        return pods_metric_value_list(metric["pods"]["metric"]["name"], levels, timestamp=now)
    if kind == "Object":
        described = metric["object"]["describedObject"]
        return object_metric_value(metric["object"]["metric"]["name"], levels[0], described=described, timestamp=now)
    return external_metric_value_list(metric["external"]["metric"]["name"], levels, timestamp=now)


def horizontal_test_snapshot(
    *,
    min_replicas: int,
    max_replicas: int,
    spec_replicas: int,
    status_replicas: int,
    cpu_target: int = 0,
    metrics: Sequence[dict[str, Any]] = (),
    reported_levels: Sequence[int] = (),
    reported_cpu_requests: Sequence[int] | None = None,
    readiness: Sequence[str] | None = None,
    start_times: Sequence[datetime] | None = None,
    phases: Sequence[str] | None = None,
    deleted: Sequence[bool] | None = None,
    scale_up_rules: dict[str, Any] | None = None,
    scale_down_rules: dict[str, Any] | None = None,
    recommendations: Sequence[tuple[int, float]] | None = None,
    last_scale_time: datetime | None = None,
    readings: Sequence[dict[str, Any]] | None = None,
    scale: dict[str, Any] | None = None,
    target: Mapping[str, str] = HORIZONTAL_TEST_TARGET,
    now: datetime = NOW,
    feature_gates: Mapping[str, bool] | None = None,
    status_conditions: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """One reconcile of horizontal_test.go's test-hpa, from the fields of its testCase.

    As prepareTestClient: a CPU utilization metric first when `cpu_target` > 0, then `metrics`; one pod
    per entry of `reported_cpu_requests` (None: one 1-CPU pod per status replica); status current and
    desired replicas at the spec count. `recommendations` None is a nil history ("never reconciled"),
    `()` an empty one. `readings` replaces the fake metrics answers (e.g. `metric_error()`). Without any
    metric the spec gets the API's default (CPU at 80 %); upstream's cases of that kind never compute it.
    `feature_gates` sets the controller's gates (e.g. HPAScaleToZero) and `status_conditions` the HPA's
    status conditions before the reconcile (e.g. the ScaledToZero condition a scale to zero left).
    """
    spec_metrics = ([resource_utilization_metric(cpu_target)] if cpu_target > 0 else []) + list(metrics)
    if readings is None:
        readings = [horizontal_test_reading(m, reported_levels, now=now) for m in spec_metrics] or [
            horizontal_test_reading(resource_utilization_metric(80), reported_levels, now=now)
        ]
    requests = list(reported_cpu_requests) if reported_cpu_requests is not None else [1000] * status_replicas
    spec: dict[str, Any] = {"scaleTargetRef": dict(target), "minReplicas": min_replicas, "maxReplicas": max_replicas}
    if spec_metrics:
        spec["metrics"] = spec_metrics
    if scale_up_rules is not None or scale_down_rules is not None:
        spec["behavior"] = {
            **({"scaleUp": scale_up_rules} if scale_up_rules is not None else {}),
            **({"scaleDown": scale_down_rules} if scale_down_rules is not None else {}),
        }
    status: dict[str, Any] = {"currentReplicas": spec_replicas, "desiredReplicas": spec_replicas}
    if last_scale_time is not None:
        status["lastScaleTime"] = rfc3339(last_scale_time)
    if status_conditions:
        status["conditions"] = [dict(c) for c in status_conditions]
    settings: dict[str, Any] = dict(HORIZONTAL_TEST_SETTINGS)
    if feature_gates:
        settings["featureGates"] = dict(feature_gates)
    return {
        "now": rfc3339(now),
        "settings": settings,
        "autoscaler": {"metadata": {"name": "test-hpa", "namespace": TEST_NAMESPACE}, "spec": spec, "status": status},
        "scale": scale
        or {
            "spec": {"replicas": spec_replicas},
            "status": {"replicas": status_replicas, "selector": f"name={POD_NAME_PREFIX}"},
        },
        "pods": horizontal_test_pods(
            requests, readiness=readiness, start_times=start_times, phases=phases, deleted=deleted, now=now
        ),
        "metrics": list(readings),
        "behaviorState": {"recommendations": timestamped_recommendations(recommendations, now=now)},
    }
