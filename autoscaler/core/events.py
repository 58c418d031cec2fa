"""The HPA's Events, as values: their types, their closed set of reasons and the messages it writes.

One owner for the controller's event vocabulary (pkg/controller/podautoscaler/horizontal.go): the core emits
these in a `Decision`, and the Kubernetes layer (kube/events.py) records them and its own write-path ones
(FailedRescale, FailedUpdateStatus, AmbiguousSelector) with the same names and messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from autoscaler.core.types import MetricSourceType
from autoscaler.core.values import quick_init


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


class EventReason(StrEnum):
    """Every event reason the HPA controller uses (horizontal.go), and the project's own (dry-run, pausing)."""

    SUCCESSFUL_RESCALE = "SuccessfulRescale"
    FAILED_GET_SCALE = "FailedGetScale"
    FAILED_RESCALE = "FailedRescale"
    FAILED_COMPUTE_METRICS_REPLICAS = "FailedComputeMetricsReplicas"
    FAILED_GET_RESOURCE_METRIC = "FailedGetResourceMetric"
    FAILED_GET_CONTAINER_RESOURCE_METRIC = "FailedGetContainerResourceMetric"
    FAILED_GET_PODS_METRIC = "FailedGetPodsMetric"
    FAILED_GET_OBJECT_METRIC = "FailedGetObjectMetric"
    FAILED_GET_EXTERNAL_METRIC = "FailedGetExternalMetric"
    FAILED_UPDATE_STATUS = "FailedUpdateStatus"
    SELECTOR_REQUIRED = "SelectorRequired"
    INVALID_SELECTOR = "InvalidSelector"
    AMBIGUOUS_SELECTOR = "AmbiguousSelector"
    # Not the HPA's: a rescale decided in dry-run and not written (the HPA has no dry-run).
    DRY_RUN_RESCALE = "DryRunRescale"
    # Not the HPA's: pausing by annotation starts and ends, or an annotation's value does not read (core/pause.py).
    SCALING_PAUSED = "ScalingPaused"
    SCALING_RESUMED = "ScalingResumed"
    INVALID_PAUSE_ANNOTATION = "InvalidPauseAnnotation"
    # Not the HPA's: a metric's fallback started or ended (core/fallback.py).
    FALLBACK_STARTED = "FallbackStarted"
    FALLBACK_ENDED = "FallbackEnded"


# The FailedGet*Metric reason per metric source type, as computeReplicasForMetric picks it.
METRIC_FAILURE_REASONS: dict[MetricSourceType, EventReason] = {
    MetricSourceType.RESOURCE: EventReason.FAILED_GET_RESOURCE_METRIC,
    MetricSourceType.CONTAINER_RESOURCE: EventReason.FAILED_GET_CONTAINER_RESOURCE_METRIC,
    MetricSourceType.PODS: EventReason.FAILED_GET_PODS_METRIC,
    MetricSourceType.OBJECT: EventReason.FAILED_GET_OBJECT_METRIC,
    MetricSourceType.EXTERNAL: EventReason.FAILED_GET_EXTERNAL_METRIC,
}


@quick_init
@dataclass(frozen=True, slots=True)
class Event:
    """A Kubernetes Event the HPA would emit: type Normal or Warning, reason, message."""

    type: EventType
    reason: EventReason
    message: str


def rescale_message(new_size: int, reason: str) -> str:
    """SuccessfulRescale: "New size: 4; reason: cpu resource utilization (percentage of request) above target"."""
    return f"New size: {new_size}; reason: {reason}"


def failed_rescale_message(new_size: int, reason: str, err: object) -> str:
    """FailedRescale: "New size: 4; reason: ...; error: ..."."""
    return f"New size: {new_size}; reason: {reason}; error: {err}"
