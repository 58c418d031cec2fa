"""The spec's `mode` and `shadow` fields, and the pause annotations of its own metadata (docs/spec.md).

`mode: shadow` decides and records as dry-run does and reads, beside each decision, the count the autoscaler it
would replace wants: `shadow.horizontalPodAutoscaler` names a HorizontalPodAutoscaler, `shadow.scaledObject`
a KEDA ScaledObject (whose HPA is read); neither: the HorizontalPodAutoscaler named as the scale target.
`Mode` is the one list of modes. The pause annotations are read by `autoscaler.core.pause`; here a spec's own
are checked when it is loaded, so `autoscaler check` and the daemon report a bad value as a spec problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from autoscaler.core.pause import PAUSED, PAUSED_REPLICAS, Pause, pause_from_annotations
from autoscaler.spec.errors import Problem, join
from autoscaler.spec.fields import ObjectName

# Every value of `spec.mode`: `hpa` (the default) decides and writes as the HPA does; `shadow` never writes and
# compares with the autoscaler it would replace; `predictive` forecasts the need a start-up delay ahead
# (spec.predictive, core/predictive.py).
Mode = Literal["hpa", "shadow", "predictive"]
MODES: tuple[str, ...] = get_args(Mode)
DEFAULT_MODE: Mode = "hpa"
SHADOW: Mode = "shadow"


class ShadowSpec(BaseModel):
    """Which autoscaler a spec in shadow mode is compared with: at most one of the two names."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)

    horizontal_pod_autoscaler: ObjectName | None = Field(
        None,
        alias="horizontalPodAutoscaler",
        description="A HorizontalPodAutoscaler of the spec's namespace whose status.desiredReplicas is compared.",
    )
    scaled_object: ObjectName | None = Field(
        None,
        alias="scaledObject",
        description="A KEDA ScaledObject of the spec's namespace: the HPA KEDA made for it is compared.",
    )

    @model_validator(mode="after")
    def _one(self) -> ShadowSpec:
        if self.horizontal_pod_autoscaler is not None and self.scaled_object is not None:
            raise ValueError("set horizontalPodAutoscaler or scaledObject, not both")
        return self


def shadow_problems(spec: Any, *, path: str) -> list[Problem]:
    """The rule across fields: `shadow` is read only with `mode: shadow`."""
    shadow, mode = getattr(spec, "shadow", None), getattr(spec, "mode", DEFAULT_MODE)
    if isinstance(shadow, ShadowSpec) and isinstance(mode, str) and mode != SHADOW:
        return [(join(path, "shadow"), f"is read only with mode: shadow, not mode: {mode}")]
    return []


def metadata_pause(annotations: Mapping[str, str], *, source: str) -> tuple[Pause | None, list[Problem]]:
    """The pause a spec's own annotations ask for, and the problem of each annotation whose value does not read."""
    pause = pause_from_annotations(annotations, source=source)
    if pause is None or not pause.problem:
        return pause, []
    problems: list[Problem] = []
    for key in (PAUSED, PAUSED_REPLICAS):
        alone = pause_from_annotations({key: annotations[key]}, source=source) if key in annotations else None
        if alone is not None and alone.problem:
            problems.append((f"metadata.annotations.{key}", alone.problem.removeprefix(f"{source}: ")))
    if not problems:  # each reads alone: together they contradict
        problems.append((f"metadata.annotations.{PAUSED}", pause.problem.removeprefix(f"{source}: ")))
    return None, problems
