"""`autoscaler convert`: an HPA manifest or a KEDA ScaledObject into a PrometheusAutoscaler (docs/migration.md).

An autoscaling/v2 or v2beta2 HorizontalPodAutoscaler keeps its spec as it is (v2beta2 is field-compatible
with v2); an autoscaling/v1 one becomes the v2 spec the API server would convert it to
(targetCPUUtilizationPercentage: a Resource cpu Utilization metric). A keda.sh/v1alpha1 ScaledObject becomes
its closest equivalent: each `prometheus` trigger an External metric read by the trigger's own query, each
`cpu` / `memory` trigger a Resource (or ContainerResource) metric, with KEDA's defaults for what it leaves out.

Nothing is dropped silently: every field that cannot be carried over is a `Notice` naming the field of the
input and why, and so is every point a user must act on (a Prometheus server to add to the daemon settings,
a metric name the default query may not find). Input that cannot be converted (a required field missing, a
value of the wrong type, a field neither KEDA nor the HPA has) raises SpecError naming the field. Every
result is checked with `load_autoscaler`, the reader behind `autoscaler check` and the daemon. `convert` is
pure; `run` is the command: it reads the files (spec/files.py's YAML reader), prints the objects and lists
every notice and problem on standard error.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TypeGuard

import yaml

from autoscaler.core.formats import QuantityError, milli_value
from autoscaler.core.formula import FormulaError, check_names, parse
from autoscaler.spec.errors import Problem, SpecError
from autoscaler.spec.files import AliasError, read_text, yaml_problem

# The spec layer's one strict YAML reader (duplicate keys, alias bombs) and its messages, as `check` uses them.
from autoscaler.spec.files import StrictLoader as SafeLoader
from autoscaler.spec.objects import CRD_API_VERSION, CRD_KIND, HPA_KIND, describe, load_autoscaler

KEDA_API_VERSION = "keda.sh/v1alpha1"
KEDA_KIND = "ScaledObject"
HPA_VERSIONS = ("autoscaling/v2", "autoscaling/v2beta2", "autoscaling/v1")
# KEDA's defaults (keda.sh/docs, ScaledObject specification).
KEDA_MIN_REPLICAS = 0
KEDA_MAX_REPLICAS = 100
KEDA_TARGET_API_VERSION = "apps/v1"
KEDA_TARGET_KIND = "Deployment"
MAX_SYNC_PERIOD_SECONDS = 3600

KEDA_COOLDOWN_SECONDS = 300  # cooldownPeriod's default
KEDA_FALLBACK_FAILURES = 3  # fallback.failureThreshold's default
# KEDA's fallback.behavior and the fallback action that does the same here.
KEDA_FALLBACK_BEHAVIORS = {"static": "replicas", "currentReplicasIfHigher": "scaleUpOnly", "currentReplicas": "hold"}
KEDA_SPEC_FIELDS = frozenset(
    {
        "scaleTargetRef", "pollingInterval", "cooldownPeriod", "initialCooldownPeriod", "idleReplicaCount",
        "minReplicaCount", "maxReplicaCount", "fallback", "advanced", "triggers",
    }
)  # fmt: skip
# The prometheus trigger's metadata that belongs to the server in the daemon settings, and where.
SERVER_FIELDS: dict[str, str] = {
    "customHeaders": "headers",
    "queryParameters": "extraQueryParams",
    "unsafeSsl": "tls.insecureSkipVerify",
    "timeout": "timeoutSeconds (in seconds; KEDA's timeout is in milliseconds)",
    "authModes": "bearerTokenFile, basicAuth or tls",
    "cortexOrgID": "headers: {X-Scope-OrgID: ...}",
    "namespace": "extraQueryParams: {namespace: ...} (Thanos' tenancy)",
}
_PROMETHEUS_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_SEGMENT = re.compile(r"^[^/%]+$")


# KEDA's pause annotations and the daemon's, which mean the same (docs/spec.md, "Pausing").
KEDA_PAUSE_ANNOTATIONS = {
    "autoscaling.keda.sh/paused": "autoscaler.dev/paused",
    "autoscaling.keda.sh/paused-replicas": "autoscaler.dev/paused-replicas",
}


@dataclass(frozen=True, slots=True)
class Notice:
    """One point about a conversion: a field of the input not carried over (`dropped`), or a note to act on."""

    field: str
    message: str
    dropped: bool = False

    def __str__(self) -> str:
        return f"{self.field}: {'not carried over' if self.dropped else 'note'}: {self.message}"


@dataclass(frozen=True, slots=True)
class Conversion:
    """A PrometheusAutoscaler object (valid for `autoscaler check`) and what the conversion could not carry."""

    obj: dict[str, Any]
    notices: tuple[Notice, ...]


def is_convertible(obj: Any) -> bool:
    """Whether a parsed document is a kind `convert` reads: a HorizontalPodAutoscaler or a KEDA ScaledObject."""
    return isinstance(obj, dict) and obj.get("kind") in (HPA_KIND, KEDA_KIND)


def convert(obj: Any) -> Conversion:
    """Convert one HPA or ScaledObject; raises SpecError naming every field that keeps it from converting."""
    if not isinstance(obj, dict):
        raise SpecError([("", f"a Kubernetes object is a mapping, not {type(obj).__name__}")])
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    builder = _Builder()
    if kind == HPA_KIND:
        spec = builder.hpa(obj, api_version)
    elif kind == KEDA_KIND:
        if api_version != KEDA_API_VERSION:
            builder.fail("apiVersion", f"a KEDA ScaledObject is {KEDA_API_VERSION}, not {api_version!r}")
        spec = builder.keda(obj)
    else:
        raise SpecError([("kind", f"must be {HPA_KIND} or {KEDA_KIND} ({KEDA_API_VERSION}), not {kind!r}")])
    metadata = builder.metadata(obj)
    if builder.problems:
        raise SpecError(builder.problems)
    out = {"apiVersion": CRD_API_VERSION, "kind": CRD_KIND, "metadata": metadata, "spec": spec}
    try:
        load_autoscaler(out, scale_to_zero=False, stored=True)
    except SpecError as err:  # a value carried over as it was, and refused as the API server would refuse it
        raise SpecError(
            [(path, f"{message} (in the converted {CRD_KIND})") for path, message in err.problems]
        ) from None
    return Conversion(out, tuple(builder.notices))


def _mapping(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


class _Builder:
    """The problems and notices of one conversion, gathered while the spec is built."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.notices: list[Notice] = []
        # Each prometheus trigger's activationThreshold: (its field path, the metric it became, the quantity).
        self.activations: list[tuple[str, dict[str, Any], str]] = []

    def fail(self, field: str, message: str) -> None:
        self.problems.append((field, message))

    def drop(self, field: str, message: str) -> None:
        self.notices.append(Notice(field, message, dropped=True))

    def note(self, field: str, message: str) -> None:
        self.notices.append(Notice(field, message))

    def section(self, obj: dict[str, Any], key: str, path: str) -> dict[str, Any]:
        """A mapping field that may be absent; a value of another type is a problem."""
        value = obj.get(key)
        if value is None:
            return {}
        if not _mapping(value):
            self.fail(path, f"must be a mapping, not {type(value).__name__}")
            return {}
        return value

    # --- metadata ---------------------------------------------------------------------------------------

    def metadata(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = self.section(obj, "metadata", "metadata")
        out: dict[str, Any] = {}
        for key in ("name", "namespace", "labels"):
            if key in meta:
                out[key] = copy.deepcopy(meta[key])
        if "name" not in meta:
            self.fail("metadata.name", "required: the PrometheusAutoscaler takes the object's name")
        annotations = meta.get("annotations")
        for key in sorted(annotations) if _mapping(annotations) else ():
            field = f"metadata.annotations.{key}"
            ours = KEDA_PAUSE_ANNOTATIONS.get(key)
            if ours is not None:
                out.setdefault("annotations", {})[ours] = copy.deepcopy(meta["annotations"][key])
                self.note(field, f"carried over as {ours} (docs/spec.md, Pausing)")
            elif key.startswith("autoscaling.keda.sh/paused"):
                self.drop(field, "pauses one direction only; the daemon's pause (autoscaler.dev/paused) holds both")
            elif "keda.sh/" in key:
                self.drop(field, "a KEDA annotation; the daemon creates no HPA and reads no KEDA annotation")
            elif key.startswith("autoscaling.alpha.kubernetes.io/"):
                self.drop(
                    field,
                    "autoscaling/v1 keeps v2 fields here; convert the autoscaling/v2 form instead "
                    "(`kubectl get hpa NAME -o yaml` returns it)",
                )
        return out

    # --- HorizontalPodAutoscaler -------------------------------------------------------------------------

    def hpa(self, obj: dict[str, Any], api_version: Any) -> dict[str, Any]:
        if api_version not in HPA_VERSIONS:
            hint = (
                " (`kubectl get hpa NAME -o yaml` returns autoscaling/v2)"
                if api_version == "autoscaling/v2beta1"
                else ""
            )
            self.fail("apiVersion", f"must be one of {', '.join(HPA_VERSIONS)}, not {api_version!r}{hint}")
            return {}
        raw = obj.get("spec")
        if not _mapping(raw):
            self.fail("spec", "required: a mapping")
            return {}
        if api_version == "autoscaling/v1":
            spec = self._hpa_v1(raw)
        else:
            spec = copy.deepcopy(raw)
        self._metric_notes(spec)
        self._min_zero(spec, "spec.minReplicas")
        return spec

    def _hpa_v1(self, raw: dict[str, Any]) -> dict[str, Any]:
        known = ("scaleTargetRef", "minReplicas", "maxReplicas", "targetCPUUtilizationPercentage")
        for key in raw:
            if key not in known:
                self.fail(f"spec.{key}", f"unknown field of an autoscaling/v1 HPA spec (known: {', '.join(known)})")
        spec = {key: copy.deepcopy(raw[key]) for key in known[:3] if key in raw}
        if "targetCPUUtilizationPercentage" in raw:
            target = raw["targetCPUUtilizationPercentage"]
            if isinstance(target, bool) or not isinstance(target, int) or target < 1:
                self.fail("spec.targetCPUUtilizationPercentage", f"must be an integer of 1 or more, not {target!r}")
            spec["metrics"] = [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}},
                }
            ]
        return spec

    def _metric_notes(self, spec: dict[str, Any]) -> None:
        """What the daemon's default queries read for Pods, Object and External metrics (docs/metrics.md)."""
        metrics = spec.get("metrics")
        for i, metric in enumerate(metrics if isinstance(metrics, list) else ()):
            if not _mapping(metric) or metric.get("type") not in ("Pods", "Object", "External"):
                continue
            member = metric.get(metric["type"].lower())
            name = member.get("metric", {}).get("name") if _mapping(member) and _mapping(member.get("metric")) else None
            if not isinstance(name, str):
                continue  # the spec's own check names the missing field
            field = f"spec.metrics[{i}]"
            if _PROMETHEUS_NAME.match(name):
                self.note(
                    field,
                    f"the {metric['type']} metric {name!r} is read with the daemon's default {metric['type']} query "
                    f"(the series {name} in Prometheus, docs/metrics.md); if Prometheus names it otherwise, add a "
                    "`prometheus` binding (a query, or a template in the daemon settings)",
                )
            else:
                self.note(
                    field,
                    f"the {metric['type']} metric {name!r} is not a Prometheus metric name, so no default query reads "
                    "it: add a `prometheus` binding (a query, or a template in the daemon settings, docs/metrics.md)",
                )

    def _min_zero(self, spec: dict[str, Any], field: str) -> None:
        if spec.get("minReplicas") == 0:
            self.note(
                field,
                "0 in a PrometheusAutoscaler scales to and from zero whatever the HPAScaleToZero feature gate, with "
                "scaleToZero's defaults (a 300 s cooldown, idle at 0; docs/spec.md); an HPA needs the gate",
            )

    # --- KEDA ScaledObject -------------------------------------------------------------------------------

    def keda(self, obj: dict[str, Any]) -> dict[str, Any]:
        raw = obj.get("spec")
        if not _mapping(raw):
            self.fail("spec", "required: a mapping")
            return {}
        for key in raw:
            if key not in KEDA_SPEC_FIELDS:
                self.fail(f"spec.{key}", "unknown field of a ScaledObject spec")
        spec: dict[str, Any] = {"scaleTargetRef": self._keda_target(raw)}
        metrics = self._triggers(raw.get("triggers"))
        minimum = self._count(raw, "minReplicaCount", KEDA_MIN_REPLICAS)
        idle = self._count(raw, "idleReplicaCount", 0) if "idleReplicaCount" in raw else None
        # KEDA scales to zero (or to idleReplicaCount, below minReplicaCount) when the triggers are inactive.
        to_zero = minimum == 0 or (idle is not None and idle < minimum)
        if to_zero and not any(m["type"] == "External" for m in metrics):
            self.note(
                "spec.minReplicaCount",
                f"{'absent (KEDA defaults to 0)' if 'minReplicaCount' not in raw else minimum}: scaling to zero needs "
                "an Object or External metric, and this ScaledObject has no prometheus trigger; minReplicas is "
                f"{max(minimum, 1)}",
            )
            minimum, to_zero = max(minimum, 1), False
        spec["minReplicas"] = 0 if to_zero else minimum
        spec["maxReplicas"] = self._count(raw, "maxReplicaCount", KEDA_MAX_REPLICAS)
        if metrics:
            spec["metrics"] = metrics
        if to_zero:
            self._keda_zero(raw, spec, minimum=minimum, idle=idle)
        else:
            for key in ("cooldownPeriod", "idleReplicaCount"):
                if key in raw:
                    self.drop(
                        f"spec.{key}",
                        f"KEDA applies it only to scaling to zero, which this ScaledObject does not do "
                        f"(minReplicaCount {minimum})",
                    )
        for path, metric, value in self.activations:
            if to_zero:
                metric["activationThreshold"] = value
            else:
                self.drop(path, "KEDA reads it only when scaling from zero, which this ScaledObject does not do")
        self._keda_rest(raw, spec)
        return spec

    def _keda_zero(self, raw: dict[str, Any], spec: dict[str, Any], *, minimum: int, idle: int | None) -> None:
        """minReplicaCount 0 (or idleReplicaCount below it): minReplicas 0 and a scaleToZero block."""
        where = "spec.minReplicaCount"
        if "minReplicaCount" not in raw:
            self.note(where, "absent: KEDA's default is 0, kept as minReplicas: 0")
        cooldown = raw.get("cooldownPeriod", KEDA_COOLDOWN_SECONDS)
        if isinstance(cooldown, bool) or not isinstance(cooldown, int) or not 0 <= cooldown <= 86_400:
            self.fail("spec.cooldownPeriod", f"must be an integer of seconds from 0 to 86400, not {cooldown!r}")
            cooldown = KEDA_COOLDOWN_SECONDS
        block: dict[str, Any] = {"cooldownSeconds": cooldown}
        if idle:
            block["idleReplicas"] = idle
        spec["scaleToZero"] = block
        self.note(
            where,
            "minReplicas: 0 with scaleToZero scales to and from zero whatever the HPAScaleToZero feature gate "
            f"(cooldownSeconds {cooldown}: KEDA's cooldownPeriod{'' if 'cooldownPeriod' in raw else ' default'})",
        )
        if minimum > 1:
            self.note(
                where,
                f"KEDA keeps at least {minimum} replicas while a trigger is active; here the least while active is 1",
            )

    def _keda_target(self, raw: dict[str, Any]) -> dict[str, Any]:
        ref = self.section(raw, "scaleTargetRef", "spec.scaleTargetRef")
        if "name" not in ref:
            self.fail("spec.scaleTargetRef.name", "required: the workload to scale")
        for key in ref:
            if key == "envSourceContainerName":
                self.drop(
                    "spec.scaleTargetRef.envSourceContainerName",
                    "the daemon reads no trigger parameters from a container's environment",
                )
            elif key not in ("apiVersion", "kind", "name"):
                self.fail(f"spec.scaleTargetRef.{key}", "unknown field of a ScaledObject's scaleTargetRef")
        return {
            "apiVersion": ref.get("apiVersion", KEDA_TARGET_API_VERSION),
            "kind": ref.get("kind", KEDA_TARGET_KIND),
            "name": ref.get("name"),
        }

    def _count(self, raw: dict[str, Any], key: str, default: int) -> int:
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(f"spec.{key}", f"must be an integer of 0 or more, not {value!r}")
            return default
        return value

    def _keda_rest(self, raw: dict[str, Any], spec: dict[str, Any]) -> None:
        """pollingInterval, the scale-to-zero fields, fallback and advanced."""
        if "pollingInterval" in raw:
            interval = raw["pollingInterval"]
            if (
                isinstance(interval, bool)
                or not isinstance(interval, int)
                or not 1 <= interval <= MAX_SYNC_PERIOD_SECONDS
            ):
                self.fail(
                    "spec.pollingInterval",
                    f"must be an integer from 1 to {MAX_SYNC_PERIOD_SECONDS} (the bounds of syncPeriodSeconds), "
                    f"not {interval!r}",
                )
            else:
                spec["syncPeriodSeconds"] = interval
        if "initialCooldownPeriod" in raw:
            self.drop(
                "spec.initialCooldownPeriod",
                "no equivalent: a new target may go to zero once its metrics were idle for the whole cooldown",
            )
        if "fallback" in raw:
            self._keda_fallback(self.section(raw, "fallback", "spec.fallback"), spec)
        advanced = self.section(raw, "advanced", "spec.advanced")
        for key in advanced:
            field = f"spec.advanced.{key}"
            if key == "restoreToOriginalReplicaCount":
                self.drop(field, "the daemon leaves the replica count as it is when an autoscaler is deleted")
            elif key == "scalingModifiers":
                self._scaling_modifiers(advanced[key], spec, field)
            elif key != "horizontalPodAutoscalerConfig":
                self.fail(field, "unknown field of a ScaledObject's advanced section")
        config = self.section(advanced, "horizontalPodAutoscalerConfig", "spec.advanced.horizontalPodAutoscalerConfig")
        for key in config:
            field = f"spec.advanced.horizontalPodAutoscalerConfig.{key}"
            if key == "name":
                self.drop(field, "the daemon creates no HPA object to name")
            elif key == "behavior":
                spec["behavior"] = copy.deepcopy(config["behavior"])
            else:
                self.fail(field, "unknown field of horizontalPodAutoscalerConfig")

    def _keda_fallback(self, raw: dict[str, Any], spec: dict[str, Any]) -> None:
        """KEDA's fallback {failureThreshold, replicas, behavior} as the spec's fallback."""
        for key in raw:
            if key not in ("failureThreshold", "replicas", "behavior"):
                self.fail(f"spec.fallback.{key}", "unknown field of a ScaledObject's fallback")
        failures = raw.get("failureThreshold", KEDA_FALLBACK_FAILURES)
        replicas = raw.get("replicas")
        behavior = raw.get("behavior", "static")
        if isinstance(failures, bool) or not isinstance(failures, int) or not 1 <= failures <= 1000:
            self.fail("spec.fallback.failureThreshold", f"must be an integer from 1 to 1000, not {failures!r}")
            return
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            self.fail("spec.fallback.replicas", f"required: an integer of 0 or more, not {replicas!r}")
            return
        action = KEDA_FALLBACK_BEHAVIORS.get(behavior) if isinstance(behavior, str) else None
        if action is None:
            self.drop(
                "spec.fallback.behavior",
                f"{behavior!r} has no equivalent (a failed metric never scales down here); the fallback is hold",
            )
            action = "hold"
        fallback: dict[str, Any] = {"failureThreshold": failures, "action": action}
        if action != "hold":
            maximum = spec.get("maxReplicas", KEDA_MAX_REPLICAS)
            if replicas == 0 or replicas > maximum:
                fixed = min(max(replicas, 1), maximum)
                self.note(
                    "spec.fallback.replicas",
                    f"{replicas} is outside 1..maxReplicas ({maximum}); the fallback count is {fixed}",
                )
                replicas = fixed
            fallback["replicas"] = replicas
        spec["fallback"] = fallback

    def _triggers(self, triggers: Any) -> list[dict[str, Any]]:
        if not isinstance(triggers, list) or not triggers:
            self.fail("spec.triggers", "required: a list of at least one trigger")
            return []
        metrics: list[dict[str, Any]] = []
        servers: dict[str, str] = {}
        for i, trigger in enumerate(triggers):
            path = f"spec.triggers[{i}]"
            if not _mapping(trigger):
                self.fail(path, f"must be a mapping, not {type(trigger).__name__}")
                continue
            kind = trigger.get("type")
            if kind == "prometheus":
                metric = self._prometheus(trigger, path, index=i, servers=servers)
            elif kind in ("cpu", "memory"):
                metric = self._resource(trigger, path, kind)
            else:
                self.drop(
                    path,
                    f"a {kind!r} trigger has no equivalent here (the daemon reads Prometheus); if Prometheus holds the "
                    "same data (an exporter), write a prometheus trigger with its query and convert again",
                )
                continue
            if metric is not None:
                metrics.append(metric)
        if not metrics and not any(p[0].startswith("spec.triggers[") for p in self.problems):
            self.fail("spec.triggers", "no prometheus, cpu or memory trigger: nothing left to scale on")
        return metrics

    def _trigger_common(self, trigger: dict[str, Any], path: str) -> None:
        for key in trigger:
            if key == "authenticationRef":
                self.drop(
                    f"{path}.authenticationRef",
                    "credentials of a Prometheus server go in the daemon settings (metrics.servers.<name>: "
                    "bearerTokenFile, basicAuth, tls), read from mounted Secret files",
                )
            elif key == "useCachedMetrics":
                self.drop(f"{path}.useCachedMetrics", "each tick reads every metric once, for all autoscalers at once")
            elif key not in ("type", "metadata", "name", "metricType"):
                self.fail(f"{path}.{key}", "unknown field of a ScaledObject trigger")

    def _prometheus(
        self, trigger: dict[str, Any], path: str, *, index: int, servers: dict[str, str]
    ) -> dict[str, Any] | None:
        self._trigger_common(trigger, path)
        meta = self.section(trigger, "metadata", f"{path}.metadata")
        query, threshold = meta.get("query"), meta.get("threshold")
        ok = True
        if not isinstance(query, str) or not query.strip():
            self.fail(f"{path}.metadata.query", "required: the PromQL query, a non-empty string")
            ok = False
        quantity = self._threshold(threshold, f"{path}.metadata.threshold")
        kind = trigger.get("metricType", "AverageValue")
        if kind not in ("AverageValue", "Value"):
            self.fail(
                f"{path}.metricType", f"a prometheus trigger takes AverageValue (KEDA's default) or Value, not {kind!r}"
            )
            ok = False
        if not ok or quantity is None:
            return None
        binding: dict[str, Any] = {"query": query}
        address = meta.get("serverAddress")
        if not isinstance(address, str) or not address:
            self.fail(f"{path}.metadata.serverAddress", "required: the Prometheus server's address")
            return None
        # The first server is the daemon's default server; each further one is named in the binding.
        name = servers.setdefault(address, f"keda-{len(servers) + 1}")
        if name == "keda-1":
            where = (
                f"the daemon's default server (metrics.servers.{name}.url: {address}, metrics.defaultServer: {name})"
            )
        else:
            binding["server"] = name
            where = f"the server this metric names (metrics.servers.{name}.url: {address})"
        self.note(f"{path}.metadata.serverAddress", f"add {where} to the daemon settings")
        activation = self._prometheus_metadata(meta, path)
        given = trigger.get("name")
        metric_name = (
            given
            if isinstance(given, str) and _SEGMENT.match(given) and given not in (".", "..")
            else f"s{index}-prometheus"
        )
        target = {"type": kind, "value" if kind == "Value" else "averageValue": quantity}
        metric = {
            "type": "External",
            "external": {"metric": {"name": metric_name}, "target": target},
            "prometheus": binding,
        }
        if activation is not None:
            self.activations.append((f"{path}.metadata.activationThreshold", metric, activation))
        return metric

    def _prometheus_metadata(self, meta: dict[str, Any], path: str) -> str | None:
        """Notes on the metadata that is not carried; the activation threshold as a quantity, if any."""
        activation = None
        for key in meta:
            field = f"{path}.metadata.{key}"
            if key in ("query", "threshold", "serverAddress"):
                continue
            if key == "activationThreshold":
                activation = self._activation(meta[key], field)
            elif key == "ignoreNullValues":
                if str(meta[key]).lower() != "false":
                    self._null_values(field)
            elif key in SERVER_FIELDS:
                self.drop(
                    field,
                    f"set it on the server in the daemon settings: metrics.servers.<name>.{SERVER_FIELDS[key]}",
                )
            elif key == "metricName":
                self.drop(field, "KEDA no longer reads it; the metric is named after the trigger")
            else:
                self.drop(field, "not a field of KEDA's prometheus trigger that this conversion knows")
        if "ignoreNullValues" not in meta:
            self._null_values(f"{path}.metadata.ignoreNullValues")
        return activation

    def _activation(self, value: Any, field: str) -> str | None:
        """KEDA's activationThreshold (a string or a number) as a quantity of 0 or more."""
        return self._quantity(value, field, positive=False)

    def _quantity(self, value: Any, field: str, *, positive: bool) -> str | None:
        """A KEDA number (a string or a number) as a quantity string: positive, or 0 or more."""
        wanted = "a positive number" if positive else "a number of 0 or more"
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.fail(field, f"required: {wanted}, not {value!r}" if positive else f"must be {wanted}, not {value!r}")
            return None
        text = str(value).strip()
        try:
            milli = milli_value(text)
        except QuantityError:
            self.fail(field, f"{value!r} is not a number")
            return None
        if milli < 0 or (positive and milli == 0):
            self.fail(field, f"must be {'positive' if positive else '0 or more'}, not {value!r}")
            return None
        return text

    def _null_values(self, field: str) -> None:
        self.drop(
            field,
            "KEDA reads an empty answer as 0 (ignoreNullValues defaults to true); here it is an error that holds "
            "the count; set prometheus.emptyAsZero: true to read it as 0",
        )

    def _threshold(self, value: Any, field: str) -> str | None:
        """KEDA's threshold (a string or a number) as a positive quantity string."""
        return self._quantity(value, field, positive=True)

    def _resource(self, trigger: dict[str, Any], path: str, resource: str) -> dict[str, Any] | None:
        self._trigger_common(trigger, path)
        meta = self.section(trigger, "metadata", f"{path}.metadata")
        kind = trigger.get("metricType", meta.get("type"))
        value = meta.get("value")
        for key in meta:
            if key not in ("value", "type", "containerName"):
                self.drop(
                    f"{path}.metadata.{key}", f"not a field of KEDA's {resource} trigger that this conversion knows"
                )
        if kind not in ("Utilization", "AverageValue"):
            self.fail(f"{path}.metricType", f"a {resource} trigger takes Utilization or AverageValue, not {kind!r}")
            return None
        target: dict[str, Any] = {"type": kind}
        if kind == "Utilization":
            text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
            if not text.isdigit() or int(text) < 1:
                self.fail(
                    f"{path}.metadata.value", f"a Utilization target is a whole percentage of 1 or more, not {value!r}"
                )
                return None
            target["averageUtilization"] = int(text)
        else:
            quantity = self._threshold(value, f"{path}.metadata.value")
            if quantity is None:
                return None
            target["averageValue"] = quantity
        container = meta.get("containerName")
        if isinstance(container, str) and container:
            return {
                "type": "ContainerResource",
                "containerResource": {"name": resource, "container": container, "target": target},
            }
        return {"type": "Resource", "resource": {"name": resource, "target": target}}

    def _scaling_modifiers(self, raw: Any, spec: dict[str, Any], path: str) -> None:
        """KEDA's composite metric into `formula`: the named prometheus triggers it reads become its inputs.

        As in KEDA, the triggers the formula reads no longer scale on their own; the formula's value is one
        metric against its target (`metricType`, AverageValue by default). A formula outside the expression
        language (KEDA's expr has comparisons, conditionals, ...) is not carried over, with why.
        """
        if not _mapping(raw):
            self.fail(path, f"must be a mapping, not {type(raw).__name__}")
            return
        for key in raw:
            if key == "activationTarget":
                self.drop(
                    f"{path}.{key}",
                    "KEDA activates (scales from zero) above it; here a formula is active while its value proposes a "
                    "replica (above 0), with no threshold of its own",
                )
            elif key not in ("formula", "target", "metricType"):
                self.fail(f"{path}.{key}", "unknown field of KEDA's scalingModifiers")
        text, kind = raw.get("formula"), raw.get("metricType", "AverageValue")
        quantity = self._threshold(raw.get("target"), f"{path}.target")
        if not isinstance(text, str) or not text.strip():
            self.fail(f"{path}.formula", "required: the formula over the triggers' names, a non-empty string")
            return
        if kind not in ("AverageValue", "Value"):
            self.fail(f"{path}.metricType", f"takes AverageValue (KEDA's default) or Value, not {kind!r}")
            return
        if quantity is None:
            return
        metrics = spec.get("metrics", [])
        by_name = {m["external"]["metric"]["name"]: m for m in metrics if m["type"] == "External" and "prometheus" in m}
        try:
            formula = parse(text.strip())
            check_names(formula, by_name)
        except FormulaError as err:
            self.drop(
                path,
                f"the formula {text.strip()!r} is not one this project reads ({err}; numbers, trigger names, "
                "+ - * /, parentheses, min, max, abs, ceil, floor): write it so, or combine the triggers' queries "
                "in one prometheus query",
            )
            return
        inputs = [{"name": name, "prometheus": by_name[name]["prometheus"]} for name in formula.names]
        kept = [
            m for m in metrics if not (m["type"] == "External" and m["external"]["metric"]["name"] in formula.names)
        ]
        for activation_path, metric, _ in self.activations:
            if metric not in kept and "activationThreshold" in metric:
                self.drop(
                    activation_path,
                    "the trigger became an input of the formula, which has no threshold of its own: the formula "
                    "is active (for scaleToZero) while its value proposes a replica",
                )
        if kept:
            spec["metrics"] = kept
        else:
            spec.pop("metrics", None)
        target_field = "value" if kind == "Value" else "averageValue"
        spec["formula"] = {
            "inputs": inputs,
            "expression": text.strip(),
            "target": {"type": kind, target_field: quantity},
        }
        self.note(
            f"{path}.formula",
            f"the triggers it reads ({', '.join(formula.names)}) are the formula's inputs; as in KEDA they no longer "
            "scale on their own",
        )


# --- The command ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Converted:
    """One document of an input file: its 1-based position, label, and conversion or problems."""

    index: int
    label: str
    conversion: Conversion | None = None
    problems: list[Problem] = field(default_factory=list)
    skipped: bool = False  # a Kubernetes object of another kind


def convert_text(text: str, *, source: str) -> tuple[list[Converted], list[Problem]]:
    """Every document of a YAML (or JSON) text, converted; the second list holds the text's own problems."""
    documents: list[Converted] = []
    try:
        loader = SafeLoader(text)
    except yaml.YAMLError as err:
        return [], [("", yaml_problem(err))]
    index = 0
    try:
        while True:
            try:
                if not loader.check_data():  # type: ignore[no-untyped-call]  # untyped in the stubs
                    break
                index += 1
                obj = loader.get_data()
            except AliasError as err:
                documents.append(Converted(index, err.label, problems=[("", err.problem)]))
                continue
            except yaml.YAMLError as err:
                return documents, [("", yaml_problem(err))]
            except RecursionError:
                return documents, [("", "not valid YAML: nested too deeply to read")]
            if obj is not None:
                documents.append(_convert_document(obj, index=index))
    finally:
        loader.dispose()
    if not any(d.conversion is not None or d.problems for d in documents):
        return documents, [("", f"holds no {HPA_KIND} or {KEDA_KIND} to convert")]
    return documents, []


def _convert_document(obj: Any, *, index: int) -> Converted:
    label = describe(obj)
    if not is_convertible(obj):
        if isinstance(obj, dict) and isinstance(obj.get("kind"), str):
            return Converted(index, label, skipped=True)
        return Converted(index, label, problems=[("", "not a Kubernetes object (no kind)")])
    try:
        return Converted(index, label, conversion=convert(obj))
    except SpecError as err:
        return Converted(index, label, problems=err.problems)


def _yaml(conversion: Conversion, *, origin: str) -> str:
    lines = [f"# autoscaler convert: from {origin}"]
    lines += [f"# {notice}" for notice in conversion.notices]
    body = yaml.safe_dump(conversion.obj, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)
    return "\n".join(lines) + "\n" + body


def run(paths: Sequence[str], *, output: str, out: IO[str], err: IO[str]) -> int:
    """`autoscaler convert`: the objects on `out`, one line per notice or problem on `err`; 1 when one failed."""
    converted: list[tuple[Conversion, str]] = []
    failed = False
    for path in paths:
        try:
            documents, problems = convert_text(read_text(path), source=path)
        except SpecError as error:
            documents, problems = [], error.problems
        for where, message in problems:
            print(f"{path}: {where + ': ' if where else ''}{message}", file=err)
            failed = True
        for doc in documents:
            origin = f"{path}: document {doc.index}" + (f" ({doc.label})" if doc.label else "")
            if doc.skipped:
                print(f"{origin}: skipped: neither a {HPA_KIND} nor a {KEDA_KIND}", file=err)
            for where, message in doc.problems:
                print(f"{origin}: {where + ': ' if where else ''}{message}", file=err)
                failed = True
            if doc.conversion is not None:
                for notice in doc.conversion.notices:
                    print(f"{origin}: {notice}", file=err)
                converted.append((doc.conversion, origin))
    if output == "json":
        objects = [conversion.obj for conversion, _ in converted]
        if len(objects) == 1:
            print(json.dumps(objects[0], indent=2), file=out)
        elif objects:
            print(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2), file=out)
    else:
        out.write("---\n".join(_yaml(conversion, origin=origin) for conversion, origin in converted))
    return 1 if failed else 0


__all__ = ["Conversion", "Converted", "Notice", "convert", "convert_text", "is_convertible", "run"]
