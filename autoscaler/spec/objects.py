"""Autoscaler objects: a PrometheusAutoscaler custom resource, or a plain autoscaling/v2 HPA, into a valid spec.

The same function reads an object the daemon gets from the cluster and a document of a spec file, so the
two can never disagree. Only the object's identity is read besides its spec: `apiVersion`, `kind`,
`metadata.name` (required, a DNS-1123 subdomain, as the API server requires), `metadata.namespace` and the
pause annotations of `metadata.annotations` (autoscaler/core/pause.py: a bad value is a problem); other
metadata and the status are ignored, an unknown top-level field is an error (as with kubectl's strict field
validation). An HPA manifest cannot carry the project's `prometheus` blocks, nor the daemon's
`syncPeriodSeconds`, `dryRun`, `mode` and `shadow`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from autoscaler.core import types as core
from autoscaler.core.pause import Pause
from autoscaler.spec.errors import Problem, SpecError, pydantic_problems
from autoscaler.spec.fields import ObjectName
from autoscaler.spec.hpa import AutoscalerSpec, to_core
from autoscaler.spec.prometheus import PrometheusBinding
from autoscaler.spec.queue import input_bindings
from autoscaler.spec.shadow import DEFAULT_MODE, Mode, ShadowSpec, metadata_pause
from autoscaler.spec.validation import load_spec
from autoscaler.spec.zero import ScaleToZeroModel

GROUP = "autoscaler.dev"
CRD_API_VERSION = f"{GROUP}/v1alpha1"
CRD_KIND = "PrometheusAutoscaler"
HPA_API_VERSION = "autoscaling/v2"
HPA_KIND = "HorizontalPodAutoscaler"
KINDS = {CRD_KIND: CRD_API_VERSION, HPA_KIND: HPA_API_VERSION}
# The daemon's spec fields: a PrometheusAutoscaler has them, an autoscaling/v2 HPA does not.
CRD_ONLY_FIELDS = (
    "syncPeriodSeconds", "dryRun", "mode", "shadow", "drainTime", "formula", "scaleToZero", "fallback",
    "rolloutAware", "scaleDown", "predictive",
)  # fmt: skip


class _Meta(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True, strict=True)

    name: ObjectName = Field(description="The object's name.")
    namespace: str = Field("", description="The object's namespace (empty: the one it is applied to).")
    annotations: dict[str, str] = Field(
        default_factory=dict, description="Read for the pause annotations only (autoscaler/core/pause.py)."
    )


class _Object(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)

    api_version: str = Field(alias="apiVersion")
    kind: str
    metadata: _Meta
    spec: Any = Field(description="Validated by autoscaler/spec/validation.py.")
    status: Any = Field(None, description="Written by the controller; ignored here.")


@dataclass(frozen=True, slots=True)
class Autoscaler:
    """One autoscaler object, validated: its identity, the spec in core values, what the daemon reads of the
    spec model each tick, and the model itself on demand (`model`).

    The pydantic model is not kept: at ~6 KiB per spec it was the largest part of a target's memory in the daemon
    (docs/performance.md). `model` validates the spec's document again, the same way (the result is the model
    the object was first validated into); the daemon reads it only when a decision snapshot is rendered.
    """

    api_version: str
    kind: str
    name: str
    namespace: str
    spec: core.AutoscalerSpec
    # The pause the object's own annotations ask for (autoscaler.dev/paused, autoscaler.dev/paused-replicas).
    pause: Pause | None = None
    # minReplicas 0 without a scaleToZero block, opted in with its defaults (a PrometheusAutoscaler's rule):
    # as a new object, the API server's HPA rules still refuse it unless the HPAScaleToZero gate is on.
    implicit_scale_to_zero: bool = False
    # The daemon's fields of the model, read every tick (spec/hpa.py has their meaning).
    sync_period_seconds: int | None = None
    dry_run: bool = False
    mode: Mode = DEFAULT_MODE
    shadow: ShadowSpec | None = None
    metric_bindings: tuple[PrometheusBinding | None, ...] = ()  # spec.metrics[i].prometheus
    input_bindings: tuple[PrometheusBinding | None, ...] = ()  # the drain time's and formula's inputs
    cost_binding: PrometheusBinding | None = None  # scaleDown.podDeletionCost.prometheus
    # How `model` is made again: the spec's document as compact JSON and how it was validated; or the model
    # itself when its document does not survive JSON (a YAML key or value JSON has no form for).
    document: str = ""
    scale_to_zero_gate: bool = False
    stored: bool = True
    kept_model: AutoscalerSpec | None = None

    @property
    def model(self) -> AutoscalerSpec:
        """The spec's pydantic model (validated anew from `document` unless kept)."""
        if self.kept_model is not None:
            return self.kept_model
        spec = load_spec(json.loads(self.document), scale_to_zero=self.scale_to_zero_gate, stored=self.stored)
        return _implicit_zero(spec) if self.implicit_scale_to_zero else spec

    def load_model(self) -> AutoscalerSpec:
        """`model`, as a callable (what a decision snapshot keeps to render the spec when read)."""
        return self.model


def _implicit_zero(spec: AutoscalerSpec) -> AutoscalerSpec:
    """The model opted in to scale to zero with the defaults (see `load_autoscaler`)."""
    # A PrometheusAutoscaler's minReplicas 0 opts in to scaling to and from zero whatever the HPAScaleToZero
    # gate, with the defaults (docs/spec.md); written into the model so a decision snapshot carries it.
    return spec.model_copy(update={"scale_to_zero": ScaleToZeroModel()})


# Bindings are shared between the specs that bind a metric the same way (most use a template by name): a few
# hundred bytes each per spec otherwise. Bounded: past it, a binding is kept as parsed.
_BINDINGS: dict[str, PrometheusBinding] = {}
_BINDINGS_MAX = 4096


def _shared(binding: PrometheusBinding | None) -> PrometheusBinding | None:
    if binding is None:
        return None
    key = binding.model_dump_json(exclude_unset=True)
    found = _BINDINGS.get(key)
    if found is not None and found == binding:
        return found
    if len(_BINDINGS) < _BINDINGS_MAX:
        _BINDINGS[key] = binding
    return binding


def _document(data: Any) -> str | None:
    """`data` as compact JSON text when it reads back equal; None otherwise."""
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text if json.loads(text) == data else None


def describe(obj: Any) -> str:
    """How an object is named in messages: "PrometheusAutoscaler default/web", as far as it can be read."""
    if not isinstance(obj, Mapping):  # a dict, or the daemon's cached copy of a custom resource
        return ""
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "object"
    if not isinstance(name, str) or not name:
        return str(kind)
    return f"{kind} {namespace}/{name}" if isinstance(namespace, str) and namespace else f"{kind} {name}"


def is_autoscaler(obj: Any) -> bool:
    """Whether a parsed document is an object of a kind this module reads (of any apiVersion)."""
    return isinstance(obj, dict) and obj.get("kind") in KINDS


def load_autoscaler(
    obj: Any, *, scale_to_zero: bool, stored: bool = True, source: str = "", document: str | None = None
) -> Autoscaler:
    """Read and validate one autoscaler object, raising SpecError with every problem and its field path.

    `stored` validates it as an object the API server already holds; `stored=False` as a new object.
    `document` is the spec as compact JSON text when the caller keeps it so (the daemon's cache does): kept as
    the Autoscaler's `document` instead of a second copy.
    """
    if not isinstance(obj, dict):
        raise SpecError([("", f"an autoscaler object is a mapping, not {type(obj).__name__}")], source=source)
    problems: list[Problem] = []
    model: _Object | None = None
    try:
        model = _Object.model_validate(obj)
    except ValidationError as err:
        problems += pydantic_problems(err)
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind in KINDS and isinstance(api_version, str) and api_version != KINDS[kind]:
        problems.append(("apiVersion", f"{kind} is read as {KINDS[kind]}, not {api_version}"))
    elif isinstance(kind, str) and kind not in KINDS:
        problems.append(("kind", f"must be {CRD_KIND} ({CRD_API_VERSION}) or {HPA_KIND} ({HPA_API_VERSION})"))
    spec: AutoscalerSpec | None = None
    if "spec" in obj:
        try:
            spec = load_spec(obj["spec"], scale_to_zero=scale_to_zero, stored=stored, path="spec")
        except SpecError as err:
            problems += err.problems
    if spec is not None and kind == HPA_KIND:
        problems += [
            (
                f"spec.metrics[{i}].prometheus",
                f"unknown field: a {HPA_KIND} has no Prometheus binding (a {CRD_KIND} has)",
            )
            for i, metric in enumerate(spec.metrics or ())
            if metric.prometheus is not None
        ]
        problems += [
            (f"spec.{field}", f"unknown field: a {HPA_KIND} has no {field} (a {CRD_KIND} has)")
            for field in CRD_ONLY_FIELDS
            if field in obj["spec"]
        ]
        problems += [
            (f"spec.metrics[{i}].activationThreshold", f"unknown field: a {HPA_KIND} has none (a {CRD_KIND} has)")
            for i, metric in enumerate(spec.metrics or ())
            if metric.activation_threshold is not None
        ]
    pause = None
    if model is not None:
        pause, pause_problems = metadata_pause(model.metadata.annotations, source=describe(obj))
        problems += pause_problems
    if problems or model is None or spec is None:
        raise SpecError(problems, source=source)
    implicit = kind == CRD_KIND and spec.min_replicas == 0 and spec.scale_to_zero is None
    if implicit:
        spec = _implicit_zero(spec)
    document = _document(obj["spec"]) if document is None else document
    cost = spec.scale_down.pod_deletion_cost if spec.scale_down is not None else None
    return Autoscaler(
        api_version=model.api_version,
        kind=model.kind,
        name=model.metadata.name,
        namespace=model.metadata.namespace,
        spec=to_core(spec),
        pause=pause,
        implicit_scale_to_zero=implicit,
        sync_period_seconds=spec.sync_period_seconds,
        dry_run=spec.dry_run,
        mode=spec.mode,
        shadow=spec.shadow,
        metric_bindings=tuple(_shared(m.prometheus) for m in spec.metrics or ()),
        input_bindings=tuple(_shared(b) for b in input_bindings(spec.drain_time, spec.formula)),
        cost_binding=_shared(cost.prometheus) if cost is not None else None,
        document=document or "",
        scale_to_zero_gate=scale_to_zero,
        stored=stored,
        kept_model=spec if document is None else None,
    )
