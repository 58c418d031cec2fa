"""The spec's scale-to-zero and fallback extensions: `scaleToZero`, `metrics[].activationThreshold`, `fallback`.

Strict models (unknown keys and wrong types are errors), the rules across fields (`problems`, run by
spec/validation.py's `load_spec` with the API server's rules, and mirrored as CEL rules in kube/crd.yaml), and
the mapping to the core's values (core/zero.py, core/fallback.py). The reference is docs/spec.md, sections
"scaleToZero" and "fallback".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from autoscaler.core.fallback import Fallback, FallbackAction
from autoscaler.core.formats import milli_value
from autoscaler.core.zero import ScaleToZero
from autoscaler.spec.errors import Problem

if TYPE_CHECKING:  # spec/hpa.py imports this module for the field types
    from autoscaler.spec.hpa import AutoscalerSpec

MAX_SECONDS = 86_400  # a day: longer cooldowns and staleness budgets are almost surely a unit mistake
FIXED_COUNT_ACTIONS = ("replicas", "scaleUpOnly")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)


class ScaleToZeroModel(_Model):
    """`spec.scaleToZero`: with minReplicas 0, scale to and from zero whatever the HPAScaleToZero gate."""

    cooldown_seconds: int = Field(
        300,
        alias="cooldownSeconds",
        ge=0,
        le=MAX_SECONDS,
        description="Seconds every metric must stay readable and at or below its activation threshold before zero.",
    )
    idle_replicas: int = Field(
        0, alias="idleReplicas", ge=0, le=2**31 - 1, description="The replica count while inactive (default 0)."
    )
    wake_from_manual_zero: bool = Field(
        False,
        alias="wakeFromManualZero",
        description="Also scale up from a zero the autoscaler did not set (default false: left alone, as the HPA).",
    )


class FallbackModel(_Model):
    """`spec.fallback`: what N consecutive failed evaluations of a metric do."""

    failure_threshold: int = Field(
        3, alias="failureThreshold", ge=1, le=1000, description="Consecutive failed evaluations before the fallback."
    )
    action: Literal["hold", "scaleUpOnly", "replicas", "lastKnownGood"] = Field(
        "hold", description="hold (the HPA's), scaleUpOnly, replicas, or lastKnownGood."
    )
    replicas: int | None = Field(
        None, ge=1, le=2**31 - 1, description="The fixed count of `replicas` and the floor of `scaleUpOnly`."
    )
    staleness_seconds: int = Field(
        600,
        alias="stalenessSeconds",
        ge=1,
        le=MAX_SECONDS,
        description="lastKnownGood: the oldest last good value used; older, the HPA's hold.",
    )
    recovery_seconds: int = Field(
        120,
        alias="recoverySeconds",
        ge=0,
        le=MAX_SECONDS,
        description="After a fallback ends, no scale-down until the metric has been readable this long.",
    )


def problems(spec: AutoscalerSpec, *, path: str) -> list[Problem]:
    """The rules across fields of the extensions, each with its field path (docs/spec.md)."""
    from autoscaler.spec.hpa import known

    found: list[Problem] = []
    min_replicas = spec.min_replicas if known(spec.min_replicas) else None
    max_replicas = spec.max_replicas if known(spec.max_replicas) else None
    zero = spec.scale_to_zero if known(spec.scale_to_zero) else None
    if zero is not None and min_replicas != 0 and known(spec.min_replicas):
        found.append((f"{path}.scaleToZero", f"needs minReplicas 0, not {spec.min_replicas or 1}"))
    if zero is not None and max_replicas is not None and zero.idle_replicas > max_replicas:
        found.append((f"{path}.scaleToZero.idleReplicas", f"must be at most maxReplicas ({max_replicas})"))
    if known(spec.metrics) and known(spec.min_replicas) and min_replicas != 0:
        for i, metric in enumerate(spec.metrics or ()):
            if known(metric) and known(metric.activation_threshold) and metric.activation_threshold is not None:
                found.append(
                    (f"{path}.metrics[{i}].activationThreshold", "read only when scaling to zero: needs minReplicas 0")
                )
    fallback = spec.fallback if known(spec.fallback) else None
    if fallback is not None:
        if fallback.action in FIXED_COUNT_ACTIONS and fallback.replicas is None:
            found.append((f"{path}.fallback.replicas", f"required for action {fallback.action}"))
        if fallback.action not in FIXED_COUNT_ACTIONS and fallback.replicas is not None:
            found.append((f"{path}.fallback.replicas", "read only by the actions replicas and scaleUpOnly"))
        if fallback.replicas is not None and max_replicas is not None and fallback.replicas > max_replicas:
            found.append((f"{path}.fallback.replicas", f"must be at most maxReplicas ({max_replicas})"))
    return found


def scale_to_zero_to_core(spec: AutoscalerSpec) -> ScaleToZero | None:
    """The core's ScaleToZero with each metric's activation threshold in milli-units; None without the block."""
    if spec.scale_to_zero is None:
        return None
    thresholds = tuple(
        milli_value(m.activation_threshold) if m.activation_threshold is not None else None for m in spec.metrics or ()
    )
    return ScaleToZero(
        cooldown_seconds=spec.scale_to_zero.cooldown_seconds,
        idle_replicas=spec.scale_to_zero.idle_replicas,
        activation_thresholds=thresholds,
        wake_from_manual_zero=spec.scale_to_zero.wake_from_manual_zero,
    )


def fallback_to_core(model: FallbackModel | None) -> Fallback | None:
    if model is None:
        return None
    return Fallback(
        failure_threshold=model.failure_threshold,
        action=FallbackAction(model.action),
        replicas=model.replicas,
        staleness_seconds=model.staleness_seconds,
        recovery_seconds=model.recovery_seconds,
    )
