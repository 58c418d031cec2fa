"""Decision snapshots written from the core values of one decision, in the format `autoscaler replay` reads.

The daemon's flight recorder calls `snapshot_json` with exactly what it passed to `core.decision.decide`;
`autoscaler.spec.snapshot.load_snapshot` of the result gives those values back, so replaying the file makes
the same decision (docs/snapshot.md). The output is plain JSON values (dicts, lists, strings, numbers,
booleans, None) built in a fixed order, with every mapping taken from the inputs (labels, requests, usage)
sorted by key: equal inputs give equal output, byte for byte once dumped.

What the format cannot hold is refused (SpecError naming the field) rather than written differently: an
empty failure message. Two details are not carried, because no decision reads them: a Pods reading's window
is written in whole seconds (the format's `windowSeconds`; the HPA reads a window only for CPU readiness of
Resource metrics), and an External reading without values loses its timestamp (there is no item to hold
it; read back as `now`). A deleted pod's deletion time is written as `now` (the core keeps only whether
the pod is being deleted). Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from autoscaler.core import types as core
from autoscaler.core.formats import format_milli, format_time
from autoscaler.core.pause import Pause
from autoscaler.core.shadow import ShadowReading
from autoscaler.core.state import behavior_state_to_json
from autoscaler.spec.errors import SpecError
from autoscaler.spec.hpa import AutoscalerSpec
from autoscaler.spec.settings import settings_json

SNAPSHOT_KIND = "DecisionSnapshot"  # a free label: replay ignores `apiVersion` and `kind`
SNAPSHOT_API_VERSION = "autoscaler.dev/v1alpha1"


def snapshot_json(
    *,
    name: str,
    namespace: str,
    spec_model: AutoscalerSpec,
    scale: core.Scale | core.ScaleFailure,
    pods: Sequence[core.Pod],
    metrics: Sequence[core.MetricInput],
    state: core.BehaviorState,
    settings: core.Settings,
    now: datetime,
    conditions: Sequence[core.Condition] = (),
    last_scale_time: datetime | None = None,
    previous_desired_replicas: int | None = None,
    controllers: Sequence[str] = (),
    dry_run: bool = False,
    scale_write_error: str | None = None,
    pause: Pause | None = None,
    shadow: ShadowReading | None = None,
    inputs: Sequence[core.MetricInput] = (),
    scale_not_written: bool = False,
) -> dict[str, Any]:
    """One decision's inputs as a snapshot `load_snapshot` reads back into the same values."""
    snapshot: dict[str, Any] = {
        "apiVersion": SNAPSHOT_API_VERSION,
        "kind": SNAPSHOT_KIND,
        "now": format_time(now),
        "settings": settings_json(settings),
        "autoscaler": {
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec_model.model_dump(mode="json", by_alias=True, exclude_unset=True),
            "status": _status(conditions, last_scale_time, previous_desired_replicas),
        },
        "scale": _scale(scale),
        "pods": [_pod(pod, now=now) for pod in pods],
        "metrics": [_metric(reading, index=i) for i, reading in enumerate(metrics)],
        "behaviorState": behavior_state_to_json(state),
    }
    if controllers:
        snapshot["controllers"] = list(controllers)
    if dry_run:
        snapshot["dryRun"] = True
    if scale_write_error is not None:
        snapshot["scaleWriteError"] = scale_write_error
    if scale_not_written:
        snapshot["scaleNotWritten"] = True
    if pause is not None:
        snapshot["pause"] = _pause(pause)
    if shadow is not None:
        snapshot["shadow"] = _shadow(shadow)
    if inputs:  # the drain time's and the formula's readings (docs/snapshot.md)
        snapshot["inputs"] = [_metric(reading, index=i, field="inputs") for i, reading in enumerate(inputs)]
    return snapshot


def _pause(pause: Pause) -> dict[str, Any]:
    out: dict[str, Any] = {"source": pause.source}
    if pause.replicas is not None:
        out["replicas"] = pause.replicas
    if pause.problem:
        out["problem"] = pause.problem
    return out


def _shadow(shadow: ShadowReading) -> dict[str, Any]:
    out: dict[str, Any] = {"source": shadow.source, "observedAt": format_time(shadow.observed_at)}
    if shadow.desired_replicas is not None:
        out["desiredReplicas"] = shadow.desired_replicas
    if shadow.error:
        out["error"] = shadow.error
    return out


@dataclass(frozen=True, slots=True)
class DecisionInputs:
    """One decision's inputs kept by reference (immutable core values, shared with the tick that decided), for
    `json()` to render as `snapshot_json` when someone reads them: a flight recorder keeps this, not the JSON."""

    name: str
    namespace: str
    # The spec's model, or what makes it when the snapshot is rendered (the daemon keeps no model per target).
    spec_model: AutoscalerSpec | Callable[[], AutoscalerSpec]
    scale: core.Scale | core.ScaleFailure
    pods: tuple[core.Pod, ...]
    metrics: tuple[core.MetricInput, ...]
    state: core.BehaviorState
    settings: core.Settings
    now: datetime
    conditions: tuple[core.Condition, ...] = ()
    last_scale_time: datetime | None = None
    previous_desired_replicas: int | None = None
    controllers: tuple[str, ...] = ()
    dry_run: bool = False
    scale_write_error: str | None = None
    scale_not_written: bool = False
    pause: Pause | None = None
    shadow: ShadowReading | None = None
    inputs: tuple[core.MetricInput, ...] = ()

    def json(self) -> dict[str, Any]:
        """The snapshot, rendered anew on each call (`snapshot_json` of these inputs)."""
        return snapshot_json(
            name=self.name,
            namespace=self.namespace,
            spec_model=self.spec_model if isinstance(self.spec_model, AutoscalerSpec) else self.spec_model(),
            scale=self.scale,
            pods=self.pods,
            metrics=self.metrics,
            state=self.state,
            settings=self.settings,
            now=self.now,
            conditions=self.conditions,
            last_scale_time=self.last_scale_time,
            previous_desired_replicas=self.previous_desired_replicas,
            controllers=self.controllers,
            dry_run=self.dry_run,
            scale_write_error=self.scale_write_error,
            pause=self.pause,
            shadow=self.shadow,
            inputs=self.inputs,
            scale_not_written=self.scale_not_written,
        )


def _quantities(values: Mapping[str, int]) -> dict[str, str]:
    return {key: format_milli(values[key]) for key in sorted(values)}


def _status(
    conditions: Sequence[core.Condition], last_scale_time: datetime | None, previous_desired_replicas: int | None
) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": [_condition(c) for c in conditions]}
    if last_scale_time is not None:
        status["lastScaleTime"] = format_time(last_scale_time)
    if previous_desired_replicas is not None:
        status["desiredReplicas"] = previous_desired_replicas
    return status


def _condition(condition: core.Condition) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": condition.type,
        "status": condition.status,
        "reason": condition.reason,
        "message": condition.message,
    }
    if condition.last_transition_time is not None:
        out["lastTransitionTime"] = format_time(condition.last_transition_time)
    return out


def _scale(scale: core.Scale | core.ScaleFailure) -> dict[str, Any]:
    if isinstance(scale, core.ScaleFailure):
        if not scale.message:
            raise SpecError([("scale.error", "a failed scale read needs a message: the format has no empty one")])
        return {"error": scale.message}
    return {
        "spec": {"replicas": scale.spec_replicas},
        "status": {"replicas": scale.status_replicas, "selector": scale.selector},
    }


def _container(container: core.Container) -> dict[str, Any]:
    out: dict[str, Any] = {"name": container.name, "resources": {"requests": _quantities(container.requests)}}
    if container.restart_policy_always:
        out["restartPolicy"] = "Always"
    return out


def _pod(pod: core.Pod, *, now: datetime) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": pod.name,
        "namespace": pod.namespace,
        "labels": dict(sorted(pod.labels.items())),
    }
    if pod.deleted:
        metadata["deletionTimestamp"] = format_time(now)
    spec: dict[str, Any] = {
        "containers": [_container(c) for c in pod.containers],
        "initContainers": [_container(c) for c in pod.init_containers],
    }
    if pod.pod_requests:
        spec["resources"] = {"requests": _quantities(pod.pod_requests)}
    status: dict[str, Any] = {"phase": pod.phase, "conditions": []}
    if pod.ready is not None:
        ready: dict[str, Any] = {"type": "Ready", "status": pod.ready}
        if pod.ready_transition is not None:
            ready["lastTransitionTime"] = format_time(pod.ready_transition)
        status["conditions"].append(ready)
    if pod.start_time is not None:
        status["startTime"] = format_time(pod.start_time)
    return {"metadata": metadata, "spec": spec, "status": status}


def _metric(reading: core.MetricInput, *, index: int, field: str = "metrics") -> dict[str, Any]:
    """One entry of `metrics`, in the shape of the metrics API the HPA would have asked (docs/snapshot.md)."""
    match reading:
        case core.MetricFailure():
            if not reading.message:
                raise SpecError([(f"{field}[{index}].error", "a failed metric needs a message: the format has none")])
            return {"error": reading.message}
        case core.ResourceReading():
            return {
                "kind": "PodMetricsList",
                "items": [
                    {
                        "metadata": {"name": item.pod},
                        "timestamp": format_time(item.timestamp),
                        "window": item.window_seconds,
                        "containers": [{"name": c.name, "usage": _quantities(c.usage)} for c in item.containers],
                    }
                    for item in reading.pods
                ],
            }
        case core.PodsReading():
            return {
                "kind": "MetricValueList",
                "items": [
                    {
                        "describedObject": {"kind": "Pod", "name": item.pod},
                        "timestamp": format_time(item.timestamp),
                        "windowSeconds": round(item.window_seconds),
                        "value": format_milli(item.value),
                    }
                    for item in reading.items
                ],
            }
        case core.ObjectReading():
            return {
                "kind": "MetricValue",
                "timestamp": format_time(reading.timestamp),
                "value": format_milli(reading.value),
            }
        case core.ExternalReading():
            return {
                "kind": "ExternalMetricValueList",
                "items": [
                    {"timestamp": format_time(reading.timestamp), "value": format_milli(v)} for v in reading.values
                ],
            }


__all__ = ["DecisionInputs", "snapshot_json"]
