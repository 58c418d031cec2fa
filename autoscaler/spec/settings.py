"""The controller-wide settings of a decision: kube-controller-manager's HPA flags and feature gates.

`SettingsModel` is the `settings` object of a decision snapshot (docs/snapshot.md), and `settings_json` writes
one from core settings; the daemon's settings file embeds the same fields. Feature gates are a map of gate
name to bool, as kube-controller-manager's `--feature-gates` flag sets them; `parse_feature_gates` reads that
flag's syntax ("A=true,B=false"). Each default is Kubernetes 1.36's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from autoscaler.core import types as core
from autoscaler.spec.fields import INT32_MAX, Seconds

HPA_SCALE_TO_ZERO = "HPAScaleToZero"
HPA_CONFIGURABLE_TOLERANCE = "HPAConfigurableTolerance"
# The gates the autoscaler knows, with Kubernetes 1.36's defaults: HPAScaleToZero is alpha (off),
# HPAConfigurableTolerance is beta (on).
FEATURE_GATES: Mapping[str, bool] = {HPA_CONFIGURABLE_TOLERANCE: True, HPA_SCALE_TO_ZERO: False}


def check_gates(gates: Mapping[str, bool]) -> dict[str, bool]:
    """The known gates with `gates` applied; an unknown gate name raises ValueError naming it."""
    unknown = sorted(set(gates) - set(FEATURE_GATES))
    if unknown:
        raise ValueError(f"unknown feature gate {unknown[0]!r}; known: {', '.join(sorted(FEATURE_GATES))}")
    return {**FEATURE_GATES, **gates}


def parse_feature_gates(text: str) -> dict[str, bool]:
    """kube-controller-manager's `--feature-gates` syntax, "HPAScaleToZero=true,Other=false" (raises ValueError)."""
    gates: dict[str, bool] = {}
    for part in text.split(","):
        name, sep, value = part.strip().partition("=")
        if not part.strip():
            continue
        if not sep or not name.strip():
            raise ValueError(f"{part.strip()!r} is not NAME=true or NAME=false")
        # strconv.ParseBool, as component-base's feature gate flag reads the value.
        if value.strip() in ("1", "t", "T", "true", "TRUE", "True"):
            gates[name.strip()] = True
        elif value.strip() in ("0", "f", "F", "false", "FALSE", "False"):
            gates[name.strip()] = False
        else:
            raise ValueError(f"invalid value of {name.strip()}: {value.strip()!r}, want true or false")
    return check_gates(gates)


class SettingsModel(BaseModel):
    """Controller-wide settings; each default is kube-controller-manager's (Kubernetes 1.36)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)

    tolerance: float = Field(
        0.1, ge=0, le=INT32_MAX, allow_inf_nan=False, description="--horizontal-pod-autoscaler-tolerance"
    )
    cpu_initialization_period_seconds: Seconds = Field(
        300.0, alias="cpuInitializationPeriodSeconds",
        description="--horizontal-pod-autoscaler-cpu-initialization-period",
    )  # fmt: skip
    initial_readiness_delay_seconds: Seconds = Field(
        30.0, alias="initialReadinessDelaySeconds",
        description="--horizontal-pod-autoscaler-initial-readiness-delay",
    )  # fmt: skip
    downscale_stabilization_window_seconds: Seconds = Field(
        300.0, alias="downscaleStabilizationWindowSeconds",
        description="--horizontal-pod-autoscaler-downscale-stabilization",
    )  # fmt: skip
    feature_gates: dict[str, bool] = Field(
        default_factory=dict,
        alias="featureGates",
        description="--feature-gates: HPAScaleToZero (default false) and HPAConfigurableTolerance (default true).",
    )
    scale_up_limit_factor: float = Field(
        2.0, alias="scaleUpLimitFactor", gt=0, le=1000, allow_inf_nan=False,
        description="Legacy path: scale-up cap factor (horizontal.go).",
    )  # fmt: skip
    scale_up_limit_minimum: float = Field(
        4.0, alias="scaleUpLimitMinimum", ge=0, le=INT32_MAX, allow_inf_nan=False,
        description="Legacy path: scale-up cap minimum (horizontal.go).",
    )  # fmt: skip

    moved_configurable_tolerance: None = Field(
        None,
        alias="configurableTolerance",
        description="Moved to featureGates.HPAConfigurableTolerance; setting it here is an error that says so.",
    )

    @field_validator("moved_configurable_tolerance", mode="before")
    @classmethod
    def _moved(cls, value: Any) -> None:
        raise ValueError("has moved: set featureGates.HPAConfigurableTolerance beside it instead")

    @field_validator("feature_gates")
    @classmethod
    def _known_gates(cls, gates: dict[str, bool]) -> dict[str, bool]:
        check_gates(gates)
        return gates

    def gates(self) -> dict[str, bool]:
        """Every known gate, defaults filled in."""
        return check_gates(self.feature_gates)

    def to_core(self) -> core.Settings:
        gates = self.gates()
        return core.Settings(
            tolerance=self.tolerance,
            cpu_initialization_period_seconds=self.cpu_initialization_period_seconds,
            initial_readiness_delay_seconds=self.initial_readiness_delay_seconds,
            downscale_stabilization_window_seconds=self.downscale_stabilization_window_seconds,
            configurable_tolerance=gates[HPA_CONFIGURABLE_TOLERANCE],
            hpa_scale_to_zero=gates[HPA_SCALE_TO_ZERO],
            scale_up_limit_factor=self.scale_up_limit_factor,
            scale_up_limit_minimum=self.scale_up_limit_minimum,
        )


def settings_json(settings: core.Settings) -> dict[str, Any]:
    """The `settings` object of a snapshot that `SettingsModel.to_core` reads back into `settings`."""
    return {
        "tolerance": settings.tolerance,
        "cpuInitializationPeriodSeconds": settings.cpu_initialization_period_seconds,
        "initialReadinessDelaySeconds": settings.initial_readiness_delay_seconds,
        "downscaleStabilizationWindowSeconds": settings.downscale_stabilization_window_seconds,
        "featureGates": {
            HPA_CONFIGURABLE_TOLERANCE: settings.configurable_tolerance,
            HPA_SCALE_TO_ZERO: settings.hpa_scale_to_zero,
        },
        "scaleUpLimitFactor": settings.scale_up_limit_factor,
        "scaleUpLimitMinimum": settings.scale_up_limit_minimum,
    }
