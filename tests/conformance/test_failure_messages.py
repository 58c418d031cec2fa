"""The messages of a failed metric, as the HPA writes them (horizontal.go, computeReplicasForMetric).

The FailedGet*Metric event and the ScalingActive condition quote the error of the computeStatusFor* function;
the FailedComputeMetricsReplicas event quotes the error computeReplicasForMetric returns, which wraps it once
more by metric type ("failed to get cpu resource metric value: ..."), as kube-controller-manager's events show;
for External and Object AverageValue metrics computeStatusFor* has wrapped it once already.
"""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.replay import replay_data
from tests.conformance.builders import (
    external_average_value_metric,
    external_value_metric,
    horizontal_test_snapshot,
    metric_error,
    object_average_value_metric,
    object_value_metric,
    pods_metric,
    resource_utilization_metric,
)

ONE_CPU = 1000
CPU = "failed to get cpu utilization: unable to get metrics for resource cpu: boom"
CASES = [
    # (id, metric, event reason, the event's and condition's message, what FailedComputeMetricsReplicas quotes)
    ("Resource", resource_utilization_metric(50), "FailedGetResourceMetric", CPU,
     f"failed to get cpu resource metric value: {CPU}"),
    ("ContainerResource", resource_utilization_metric(50, container="app"), "FailedGetContainerResourceMetric", CPU,
     f"failed to get app container metric value: {CPU}"),
    ("Pods", pods_metric("qps", 1000), "FailedGetPodsMetric", "unable to get metric qps: boom",
     "failed to get pods metric value: unable to get metric qps: boom"),
    ("Object Value", object_value_metric("qps", 1000), "FailedGetObjectMetric",
     "unable to get metric qps: boom on Deployment some-deployment",
     "failed to get object metric value: unable to get metric qps: boom on Deployment some-deployment"),
    ("Object AverageValue", object_average_value_metric("qps", 1000), "FailedGetObjectMetric",
     "unable to get metric qps: boom on Deployment some-deployment",
     "failed to get object metric value: failed to get qps object metric: "
     "unable to get metric qps: boom on Deployment some-deployment"),
    ("External Value", external_value_metric("qps", 1000), "FailedGetExternalMetric",
     "unable to get external metric qps: boom",
     "failed to get qps external metric value: failed to get external metric qps: "
     "unable to get external metric qps: boom"),
    ("External AverageValue", external_average_value_metric("qps", 1000), "FailedGetExternalMetric",
     "unable to get external metric qps: boom",
     "failed to get qps external metric value: failed to get qps external metric: "
     "unable to get external metric qps: boom"),
]  # fmt: skip


@pytest.mark.parametrize(("metric", "reason", "message", "returned"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_the_events_of_a_failed_metric(metric: dict[str, Any], reason: str, message: str, returned: str) -> None:
    snapshot = horizontal_test_snapshot(
        min_replicas=1, max_replicas=6, spec_replicas=3, status_replicas=3, metrics=[metric],
        reported_cpu_requests=[ONE_CPU] * 3, readings=[metric_error("boom")],
    )  # fmt: skip
    result = replay_data(snapshot)
    events = [(e["reason"], e["message"]) for e in result["events"]]
    assert events == [
        (reason, message),
        ("FailedComputeMetricsReplicas", f"invalid metrics (1 invalid out of 1), first error is: {returned}"),
    ]
    active = next(c for c in result["conditions"] if c["type"] == "ScalingActive")
    expected = (reason, f"the HPA was unable to compute the replica count: {message}")
    assert (active["reason"], active["message"]) == expected
