"""Every validation rule of a spec, through the three ways a spec comes in, kept in step.

Each invalid spec is checked through (1) `replay` of a snapshot holding it, (2) the spec-file loader behind
`autoscaler check` (as the update of a stored object, and with --new as a new one), and (3) the CRD's
openAPIV3Schema with its CEL rules, applied offline as the API server applies it on create. Each case
says which paths refuse it and the field path they must name; a path not listed must accept it. The valid
specs at the end are accepted by all of them. docs/spec.md holds the same table in words.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.spec.crd_schema import crd_problems
from tests.spec.specs import (
    CONTAINER_METRIC,
    DELETE,
    EXTERNAL_TARGET,
    OBJECT_METRIC,
    PODS_TARGET,
    RESOURCE_TARGET,
    Mutation,
    apply,
    at,
    base,
    check_problems,
    replay_problems,
)

REPLAY, CHECK, NEW, CRD = "replay", "check", "check --new", "crd"
ALL = frozenset({REPLAY, CHECK, NEW, CRD})
# Rules that depend on the object's history (a stored object keeps what the API server accepted back then):
# `check --new` and the CRD (on create) refuse them; replay and `check` (stored objects) accept them.
NEW_OBJECTS = frozenset({NEW, CRD})
# Rules the CRD schema cannot express (docs/spec.md says why): the spec layer alone refuses them.
SPEC_LAYER = frozenset({REPLAY, CHECK, NEW})


DRAIN = {
    "backlog": {"prometheus": {"query": "sum(queue_depth)"}},
    "processingRate": {"metricName": "jobs_done_rate"},
    "targetSeconds": 60,
}
FORMULA = {
    "inputs": [{"name": "queue", "prometheus": {"query": "sum(queue_depth)"}}, {"name": "consumers"}],
    "expression": "queue / max(consumers, 1)",
    "target": {"type": "Value", "value": "10"},
}


def case(name: str, field: str, *mutations: Mutation, refused_by: frozenset[str] = ALL, crd_field: str = "") -> Any:
    """An invalid spec; `crd_field` when the CRD's schema names another path than the API server would."""
    return pytest.param(
        mutations, {way: crd_field if way == CRD and crd_field else field for way in ALL}, refused_by, id=name
    )


SELECTOR = "spec.metrics.1.pods.metric.selector"
COST = {"metric": {"name": "inflight_jobs"}, "prometheus": {"query": "sum by (namespace, pod) (inflight_jobs)"}}
SELECTOR_PATH = "spec.metrics[1].pods.metric.selector"


def requirement(**fields: Any) -> Mutation:
    """A pods metric selector with one requirement."""
    return at(SELECTOR, {"matchExpressions": [fields]})


# fmt: off
INVALID = [
    # validateHorizontalPodAutoscalerSpec
    case("minReplicas below 0", "spec.minReplicas", at("spec.minReplicas", -1)),
    case("minReplicas 0 without an Object or External metric", "spec.metrics",
         at("spec.minReplicas", 0), at("spec.metrics", [base()["spec"]["metrics"][0]])),
    case("minReplicas 0 with no metrics at all (the default is CPU)", "spec.metrics",
         at("spec.minReplicas", 0), at("spec.metrics", DELETE)),
    case("minReplicas 0 with HPAScaleToZero off, on a new object", "spec.minReplicas",
         at("spec.minReplicas", 0), refused_by=frozenset({NEW})),
    case("maxReplicas 0", "spec.maxReplicas", at("spec.maxReplicas", 0)),
    case("maxReplicas below minReplicas", "spec.maxReplicas", at("spec.minReplicas", 5), at("spec.maxReplicas", 4)),
    case("maxReplicas beyond int32", "spec.maxReplicas", at("spec.maxReplicas", 2**31)),
    case("maxReplicas of 10**30", "spec.maxReplicas", at("spec.maxReplicas", 10**30)),
    case("maxReplicas as a string", "spec.maxReplicas", at("spec.maxReplicas", "10")),
    case("maxReplicas as a boolean", "spec.maxReplicas", at("spec.maxReplicas", True)),
    case("maxReplicas as a fractional number", "spec.maxReplicas", at("spec.maxReplicas", 10.5)),
    case("maxReplicas missing", "spec.maxReplicas", at("spec.maxReplicas", DELETE)),
    case("a misspelled field", "spec.maxReplica", at("spec.maxReplica", 3)),
    # ValidateCrossVersionObjectReference
    case("scaleTargetRef without a kind", "spec.scaleTargetRef.kind", at("spec.scaleTargetRef.kind", DELETE)),
    case("scaleTargetRef with an empty name", "spec.scaleTargetRef.name", at("spec.scaleTargetRef.name", "")),
    case("scaleTargetRef name with a slash", "spec.scaleTargetRef.name", at("spec.scaleTargetRef.name", "a/b")),
    case("scaleTargetRef name '..'", "spec.scaleTargetRef.name", at("spec.scaleTargetRef.name", "..")),
    case("scaleTargetRef kind with a percent sign", "spec.scaleTargetRef.kind",
         at("spec.scaleTargetRef.kind", "Dep%2f")),
    case("scaleTargetRef kind longer than 63 characters", "spec.scaleTargetRef.kind",
         at("spec.scaleTargetRef.kind", "K" * 64)),
    case("scaleTargetRef apiVersion without a group", "spec.scaleTargetRef.apiVersion",
         at("spec.scaleTargetRef.apiVersion", "v1"), refused_by=NEW_OBJECTS),
    case("scaleTargetRef apiVersion missing", "spec.scaleTargetRef.apiVersion",
         at("spec.scaleTargetRef.apiVersion", DELETE), refused_by=NEW_OBJECTS),
    case("scaleTargetRef apiVersion with two slashes", "spec.scaleTargetRef.apiVersion",
         at("spec.scaleTargetRef.apiVersion", "a/b/c"), refused_by=NEW_OBJECTS),
    # validateMetricSpec
    case("an unknown metric type", "spec.metrics[0].type", at("spec.metrics.0.type", "CheddarCheese")),
    case("a metric type without its member", "spec.metrics[0].pods", at("spec.metrics.0.type", "Pods")),
    case("a metric with a second member", "spec.metrics[1].resource",
         at("spec.metrics.1.resource", base()["spec"]["metrics"][0]["resource"])),
    case("more than 32 metrics", "spec.metrics", at("spec.metrics", [base()["spec"]["metrics"][1]] * 33)),
    # validateMetricTarget and the sources' target rules
    case("a utilization of 0", "spec.metrics[0].resource.target.averageUtilization",
         at(f"{RESOURCE_TARGET}.averageUtilization", 0)),
    case("a negative utilization", "spec.metrics[0].resource.target.averageUtilization",
         at(f"{RESOURCE_TARGET}.averageUtilization", -5)),
    case("a utilization beyond int32", "spec.metrics[0].resource.target.averageUtilization",
         at(f"{RESOURCE_TARGET}.averageUtilization", 2**31)),
    case("an averageValue of '0'", "spec.metrics[1].pods.target.averageValue", at(f"{PODS_TARGET}.averageValue", "0")),
    case("an averageValue of 0m", "spec.metrics[1].pods.target.averageValue", at(f"{PODS_TARGET}.averageValue", "0m")),
    case("a negative averageValue", "spec.metrics[1].pods.target.averageValue",
         at(f"{PODS_TARGET}.averageValue", "-1")),
    case("an averageValue of the integer 0", "spec.metrics[1].pods.target.averageValue",
         at(f"{PODS_TARGET}.averageValue", 0)),
    case("an averageValue that is not a quantity", "spec.metrics[1].pods.target.averageValue",
         at(f"{PODS_TARGET}.averageValue", "5 cores")),
    case("an averageValue with spaces", "spec.metrics[1].pods.target.averageValue",
         at(f"{PODS_TARGET}.averageValue", " 5")),
    case("an averageValue as a fractional number", "spec.metrics[1].pods.target.averageValue",
         at(f"{PODS_TARGET}.averageValue", 0.5)),
    case("an integer averageValue whose milli-value overflows int64", "spec.metrics[1].pods.target.averageValue",
         at(f"{PODS_TARGET}.averageValue", 10**19)),
    case("a string averageValue whose milli-value overflows int64", "spec.metrics[1].pods.target.averageValue",
         at(f"{PODS_TARGET}.averageValue", "1e30"), refused_by=SPEC_LAYER),
    case("a value of '0'", "spec.metrics[2].external.target.value", at(f"{EXTERNAL_TARGET}.value", "0")),
    case("a Resource metric with a Value target", "spec.metrics[0].resource.target.type",
         at(RESOURCE_TARGET, {"type": "Value", "value": "5"})),
    case("a Pods metric with a Value target", "spec.metrics[1].pods.target.type",
         at(PODS_TARGET, {"type": "Value", "value": "5"})),
    case("an Object metric with a Utilization target", "spec.metrics[1].object.target.type",
         at("spec.metrics.1", OBJECT_METRIC), at("spec.metrics.1.object.target", {"type": "Utilization",
                                                                                  "averageUtilization": 5})),
    case("an External metric with a Utilization target", "spec.metrics[2].external.target.type",
         at(EXTERNAL_TARGET, {"type": "Utilization", "averageUtilization": 50})),
    case("a Utilization target without averageUtilization", "spec.metrics[0].resource.target.averageUtilization",
         at(RESOURCE_TARGET, {"type": "Utilization", "averageValue": "500m"})),
    case("an AverageValue target without averageValue", "spec.metrics[1].pods.target.averageValue",
         at(PODS_TARGET, {"type": "AverageValue"})),
    case("a Value target without value", "spec.metrics[2].external.target.value",
         at(EXTERNAL_TARGET, {"type": "Value", "averageValue": "3"})),
    case("a resource target with both a utilization and a value", "spec.metrics[0].resource.target.averageValue",
         at(f"{RESOURCE_TARGET}.averageValue", "500m")),
    case("an external target with both value and averageValue", "spec.metrics[2].external.target.value",
         at(f"{EXTERNAL_TARGET}.averageValue", "5")),
    case("a target without a type", "spec.metrics[0].resource.target.type", at(f"{RESOURCE_TARGET}.type", DELETE)),
    case("an unknown target type", "spec.metrics[0].resource.target.type", at(f"{RESOURCE_TARGET}.type", "Percent")),
    # validateMetricIdentifier, validateResourceSource, validateContainerResourceSource, validateObjectSource
    case("a metric without a name", "spec.metrics[1].pods.metric.name", at("spec.metrics.1.pods.metric.name", "")),
    case("a metric name with a slash", "spec.metrics[1].pods.metric.name",
         at("spec.metrics.1.pods.metric.name", "a/b")),
    case("a resource metric without a resource name", "spec.metrics[0].resource.name",
         at("spec.metrics.0.resource.name", DELETE)),
    case("a container metric without a container", "spec.metrics[0].containerResource.container",
         at("spec.metrics.0", CONTAINER_METRIC), at("spec.metrics.0.containerResource.container", DELETE)),
    case("a container name that is not a DNS-1123 label", "spec.metrics[0].containerResource.container",
         at("spec.metrics.0", CONTAINER_METRIC), at("spec.metrics.0.containerResource.container", "Main_App")),
    case("a container resource that no container has", "spec.metrics[0].containerResource.name",
         at("spec.metrics.0", CONTAINER_METRIC), at("spec.metrics.0.containerResource.name", "gpu")),
    case("a described object without a kind", "spec.metrics[1].object.describedObject.kind",
         at("spec.metrics.1", OBJECT_METRIC), at("spec.metrics.1.object.describedObject.kind", DELETE)),
    case("a described object apiVersion with two slashes", "spec.metrics[1].object.describedObject.apiVersion",
         at("spec.metrics.1", OBJECT_METRIC), at("spec.metrics.1.object.describedObject.apiVersion", "a/b/c"),
         refused_by=NEW_OBJECTS),
    # The HPA's LabelSelectorAsSelector, on every metric selector (docs/spec.md: the API server does not check them)
    case("a selector with an unknown operator", f"{SELECTOR_PATH}.matchExpressions[0].operator",
         requirement(key="a", operator="Contains")),
    case("a selector In with an empty list of values", f"{SELECTOR_PATH}.matchExpressions[0].values",
         requirement(key="a", operator="In", values=[])),
    case("a selector NotIn without values", f"{SELECTOR_PATH}.matchExpressions[0].values",
         requirement(key="a", operator="NotIn")),
    case("a selector Exists with values", f"{SELECTOR_PATH}.matchExpressions[0].values",
         requirement(key="a", operator="Exists", values=["b"])),
    case("an Object metric selector DoesNotExist with values", "spec.metrics[1].object.metric.selector."
         "matchExpressions[0].values", at("spec.metrics.1", OBJECT_METRIC),
         at("spec.metrics.1.object.metric.selector",
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["b"]}]})),
    case("a selector key that is not a label key", f"{SELECTOR_PATH}.matchExpressions[0].key",
         requirement(key="bad key!", operator="Exists")),
    case("a selector key with a prefix that is not a DNS subdomain", f"{SELECTOR_PATH}.matchExpressions[0].key",
         requirement(key="Example.com/app", operator="Exists")),
    case("a selector key with a name of 64 characters", f"{SELECTOR_PATH}.matchExpressions[0].key",
         requirement(key="k" * 64, operator="Exists")),
    case("a selector key with a prefix of 254 characters", f"{SELECTOR_PATH}.matchExpressions[0].key",
         requirement(key="a" * 254 + "/app", operator="Exists"), refused_by=SPEC_LAYER),
    case("a selector value that is not a label value", f"{SELECTOR_PATH}.matchExpressions[0].values",
         requirement(key="a", operator="In", values=["ok", "v v"]),
         crd_field=f"{SELECTOR_PATH}.matchExpressions[0].values[1]"),
    case("a selector value of 64 characters", f"{SELECTOR_PATH}.matchExpressions[0].values",
         requirement(key="a", operator="NotIn", values=["v" * 64]),
         crd_field=f"{SELECTOR_PATH}.matchExpressions[0].values[0]"),
    case("an External metric's matchLabels value that is not a label value",
         "spec.metrics[2].external.metric.selector.matchLabels",
         at("spec.metrics.2.external.metric.selector", {"matchLabels": {"queue": "v v"}}),
         crd_field="spec.metrics[2].external.metric.selector.matchLabels.queue"),
    case("a matchLabels key that is not a label key", f"{SELECTOR_PATH}.matchLabels",
         at(SELECTOR, {"matchLabels": {"bad key!": "v"}}), refused_by=SPEC_LAYER),
    # validateBehavior, validateScalingRules, validateScalingPolicy
    case("a policy value of 0", "spec.behavior.scaleUp.policies[0].value",
         at("spec.behavior.scaleUp.policies.0.value", 0)),
    case("a policy value beyond int32", "spec.behavior.scaleUp.policies[0].value",
         at("spec.behavior.scaleUp.policies.0.value", 2**31)),
    case("a policy period of 0", "spec.behavior.scaleUp.policies[0].periodSeconds",
         at("spec.behavior.scaleUp.policies.0.periodSeconds", 0)),
    case("a policy period over 1800", "spec.behavior.scaleUp.policies[0].periodSeconds",
         at("spec.behavior.scaleUp.policies.0.periodSeconds", 1801)),
    case("an unknown policy type", "spec.behavior.scaleUp.policies[0].type",
         at("spec.behavior.scaleUp.policies.0.type", "Replicas")),
    case("an empty policy list", "spec.behavior.scaleUp.policies", at("spec.behavior.scaleUp.policies", [])),
    case("a negative stabilization window", "spec.behavior.scaleUp.stabilizationWindowSeconds",
         at("spec.behavior.scaleUp.stabilizationWindowSeconds", -1)),
    case("a stabilization window over 3600", "spec.behavior.scaleDown.stabilizationWindowSeconds",
         at("spec.behavior.scaleDown.stabilizationWindowSeconds", 3601)),
    case("an unknown selectPolicy", "spec.behavior.scaleDown.selectPolicy",
         at("spec.behavior.scaleDown.selectPolicy", "Maximum")),
    case("a negative tolerance", "spec.behavior.scaleDown.tolerance", at("spec.behavior.scaleDown.tolerance", "-0.1")),
    case("a tolerance as a fractional number", "spec.behavior.scaleDown.tolerance",
         at("spec.behavior.scaleDown.tolerance", 0.05)),
    case("an unknown missingPods policy", "spec.missingPods", at("spec.missingPods", "Sometimes")),
    # The daemon's extensions.
    case("a sync period of 0", "spec.syncPeriodSeconds", at("spec.syncPeriodSeconds", 0)),
    case("a sync period over an hour", "spec.syncPeriodSeconds", at("spec.syncPeriodSeconds", 3601)),
    case("a sync period as a string", "spec.syncPeriodSeconds", at("spec.syncPeriodSeconds", "15")),
    case("a fractional sync period", "spec.syncPeriodSeconds", at("spec.syncPeriodSeconds", 1.5)),
    case("dryRun as a string", "spec.dryRun", at("spec.dryRun", "true")),
    case("dryRun as a number", "spec.dryRun", at("spec.dryRun", 1)),
    # Shadow mode (spec/shadow.py)
    case("an unknown mode", "spec.mode", at("spec.mode", "keda")),
    case("a mode in capitals", "spec.mode", at("spec.mode", "Shadow")),
    case("shadow without mode shadow", "spec.shadow", at("spec.shadow", {"horizontalPodAutoscaler": "web"})),
    case("shadow with mode hpa", "spec.shadow", at("spec.mode", "hpa"), at("spec.shadow", {"scaledObject": "w"})),
    case("shadow naming both", "spec.shadow", at("spec.mode", "shadow"),
         at("spec.shadow", {"horizontalPodAutoscaler": "a", "scaledObject": "b"})),
    case("a shadowed HPA name that is not a name", "spec.shadow.horizontalPodAutoscaler", at("spec.mode", "shadow"),
         at("spec.shadow", {"horizontalPodAutoscaler": "Web_1"})),
    case("an unknown field of shadow", "spec.shadow.deployment", at("spec.mode", "shadow"),
         at("spec.shadow", {"deployment": "web"})),
    # mode: predictive (spec/predictive.py)
    case("predictive without mode predictive", "spec.predictive", at("spec.predictive", {"fill": 0.9})),
    case("predictive with mode shadow", "spec.predictive", at("spec.mode", "shadow"), at("spec.predictive", {})),
    case("a minimum history as long as the history kept", "spec.predictive.minHistorySeconds",
         at("spec.mode", "predictive"), at("spec.predictive", {"minHistorySeconds": 1200}), refused_by=SPEC_LAYER),
    case("more bursts than the hold can see (20 at the defaults)", "spec.predictive.burstRepeats",
         at("spec.mode", "predictive"), at("spec.predictive", {"burstRepeats": 21}), refused_by=SPEC_LAYER),
    case("a burst rise shorter than a 60 s sync period (the default 45 s)", "spec.predictive.burstRiseSeconds",
         at("spec.mode", "predictive"), at("spec.syncPeriodSeconds", 60), refused_by=SPEC_LAYER),
    case("a hold too short to see a burst rise", "spec.predictive.burstRepeats",
         at("spec.mode", "predictive"), at("spec.predictive", {"burstHoldSeconds": 20}), refused_by=SPEC_LAYER),
    case("a minimum history longer than a 60 s sync period leaves", "spec.predictive.minHistorySeconds",
         at("spec.mode", "predictive"), at("spec.syncPeriodSeconds", 60),
         at("spec.predictive", {"minHistorySeconds": 1141}), refused_by=SPEC_LAYER),
    # Scale to zero and fallback (spec/zero.py).
    case("scaleToZero with minReplicas 1", "spec.scaleToZero", at("spec.scaleToZero", {})),
    case("scaleToZero with an idle count above maxReplicas", "spec.scaleToZero.idleReplicas",
         at("spec.minReplicas", 0), at("spec.scaleToZero", {"idleReplicas": 11})),
    case("a negative cooldown", "spec.scaleToZero.cooldownSeconds",
         at("spec.minReplicas", 0), at("spec.scaleToZero", {"cooldownSeconds": -1})),
    case("a cooldown over a day", "spec.scaleToZero.cooldownSeconds",
         at("spec.minReplicas", 0), at("spec.scaleToZero", {"cooldownSeconds": 86401})),
    case("wakeFromManualZero as a string", "spec.scaleToZero.wakeFromManualZero",
         at("spec.minReplicas", 0), at("spec.scaleToZero", {"wakeFromManualZero": "yes"})),
    case("a misspelled scaleToZero field", "spec.scaleToZero.cooldown",
         at("spec.minReplicas", 0), at("spec.scaleToZero", {"cooldown": 60})),
    case("an activationThreshold with minReplicas 1", "spec.metrics[2].activationThreshold",
         at("spec.metrics.2.activationThreshold", "5"), crd_field="spec.metrics"),
    case("a negative activationThreshold", "spec.metrics[2].activationThreshold",
         at("spec.minReplicas", 0), at("spec.metrics.2.activationThreshold", "-5")),
    case("an activationThreshold that is no quantity", "spec.metrics[2].activationThreshold",
         at("spec.minReplicas", 0), at("spec.metrics.2.activationThreshold", "five")),
    case("an unknown fallback action", "spec.fallback.action", at("spec.fallback", {"action": "panic"})),
    case("fallback replicas without its count", "spec.fallback.replicas", at("spec.fallback", {"action": "replicas"})),
    case("fallback scaleUpOnly without its count", "spec.fallback.replicas",
         at("spec.fallback", {"action": "scaleUpOnly"})),
    case("a fallback count with hold", "spec.fallback.replicas", at("spec.fallback", {"replicas": 2})),
    case("a fallback count above maxReplicas", "spec.fallback.replicas",
         at("spec.fallback", {"action": "replicas", "replicas": 11})),
    case("a fallback count of 0", "spec.fallback.replicas", at("spec.fallback", {"action": "replicas", "replicas": 0})),
    case("a failureThreshold of 0", "spec.fallback.failureThreshold", at("spec.fallback", {"failureThreshold": 0})),
    case("a negative recoverySeconds", "spec.fallback.recoverySeconds", at("spec.fallback", {"recoverySeconds": -1})),
    case("a recoverySeconds over a day", "spec.fallback.recoverySeconds",
         at("spec.fallback", {"recoverySeconds": 86401})),
    case("a staleness budget of 0", "spec.fallback.stalenessSeconds",
         at("spec.fallback", {"action": "lastKnownGood", "stalenessSeconds": 0})),
    case("a failureThreshold as a string", "spec.fallback.failureThreshold",
         at("spec.fallback", {"failureThreshold": "3"})),
    # The project's extension: the CRD leaves the prometheus block open while it evolves.
    case("a misspelled Prometheus binding field", "spec.metrics[1].prometheus.qurey",
         at("spec.metrics.1.prometheus", {"qurey": "sum(up)"}), refused_by=SPEC_LAYER),
    # drainTime and formula (autoscaler/spec/queue.py); the CRD cannot parse an expression.
    case("a drain target of 0 seconds", "spec.drainTime.targetSeconds",
         at("spec.drainTime", DRAIN), at("spec.drainTime.targetSeconds", 0)),
    case("a drain target over a day", "spec.drainTime.targetSeconds",
         at("spec.drainTime", DRAIN), at("spec.drainTime.targetSeconds", 86401)),
    case("a drain target as a string", "spec.drainTime.targetSeconds",
         at("spec.drainTime", DRAIN), at("spec.drainTime.targetSeconds", "60")),
    case("a drain time without a processing rate", "spec.drainTime.processingRate",
         at("spec.drainTime", DRAIN), at("spec.drainTime.processingRate", DELETE)),
    case("a drain input with neither a query nor a metric name", "spec.drainTime.backlog",
         at("spec.drainTime", DRAIN), at("spec.drainTime.backlog", {})),
    case("a misspelled drain input field", "spec.drainTime.backlog.query",
         at("spec.drainTime", DRAIN), at("spec.drainTime.backlog.query", "sum(x)")),
    case("a misspelled binding field of a drain input", "spec.drainTime.backlog.prometheus.qurey",
         at("spec.drainTime", DRAIN), at("spec.drainTime.backlog.prometheus.qurey", "x"), refused_by=SPEC_LAYER),
    case("a formula with a syntax error", "spec.formula.expression",
         at("spec.formula", FORMULA), at("spec.formula.expression", "queue / (consumers"), refused_by=SPEC_LAYER),
    case("a formula reading an unknown name", "spec.formula.expression",
         at("spec.formula", FORMULA), at("spec.formula.expression", "queue / consumer"), refused_by=SPEC_LAYER),
    case("a formula calling max with one argument", "spec.formula.expression",
         at("spec.formula", FORMULA), at("spec.formula.expression", "max(queue)"), refused_by=SPEC_LAYER),
    case("a formula calling an unknown function", "spec.formula.expression",
         at("spec.formula", FORMULA), at("spec.formula.expression", "sqrt(queue)"), refused_by=SPEC_LAYER),
    case("a formula dividing by a literal zero", "spec.formula.expression",
         at("spec.formula", FORMULA), at("spec.formula.expression", "queue / (1 - 1)"), refused_by=SPEC_LAYER),
    case("an empty formula", "spec.formula.expression", at("spec.formula", FORMULA), at("spec.formula.expression", "")),
    case("a formula over 512 characters", "spec.formula.expression",
         at("spec.formula", FORMULA), at("spec.formula.expression", "queue" + " + 1" * 128)),
    case("a formula without inputs", "spec.formula.inputs", at("spec.formula", FORMULA), at("spec.formula.inputs", [])),
    case("a formula input name that is not a name", "spec.formula.inputs[0].name",
         at("spec.formula", FORMULA), at("spec.formula.inputs.0.name", "1queue")),
    case("a formula input named like a function", "spec.formula.inputs[0].name",
         at("spec.formula", FORMULA), at("spec.formula.inputs.0.name", "max")),
    case("two formula inputs of one name", "spec.formula.inputs",
         at("spec.formula", FORMULA), at("spec.formula.inputs.1.name", "queue")),
    case("a formula target of type Utilization", "spec.formula.target.type",
         at("spec.formula", FORMULA), at("spec.formula.target", {"type": "Utilization", "value": "1"})),
    case("a formula Value target without a value", "spec.formula.target.value",
         at("spec.formula", FORMULA), at("spec.formula.target", {"type": "Value", "averageValue": "1"})),
    case("a formula target with a value and an averageValue", "spec.formula.target.value",
         at("spec.formula", FORMULA), at("spec.formula.target.averageValue", "2")),
    case("a formula target of 0", "spec.formula.target.value",
         at("spec.formula", FORMULA), at("spec.formula.target.value", "0")),
    # Scale-in extensions (spec/spare.py).
    case("rolloutAware as a string", "spec.rolloutAware", at("spec.rolloutAware", "true")),
    case("podDeletionCost on a StatefulSet", "spec.scaleDown.podDeletionCost",
         at("spec.scaleTargetRef.kind", "StatefulSet"), at("spec.scaleDown", {"podDeletionCost": COST})),
    case("podDeletionCost without a metric", "spec.scaleDown.podDeletionCost.metric",
         at("spec.scaleDown", {"podDeletionCost": {}})),
    case("podDeletionCost with a metric name holding a slash", "spec.scaleDown.podDeletionCost.metric.name",
         at("spec.scaleDown", {"podDeletionCost": {"metric": {"name": "a/b"}}})),
    case("a misspelled scaleDown field", "spec.scaleDown.podDeletionCosts",
         at("spec.scaleDown", {"podDeletionCosts": COST})),
]

VALID = [
    pytest.param([], id="the base spec"),
    pytest.param([at("spec.metrics", DELETE), at("spec.behavior", DELETE), at("spec.minReplicas", DELETE)],
                 id="only the required fields (CPU at 80 % by default)"),
    pytest.param([at("spec.minReplicas", 10)], id="minReplicas equal to maxReplicas"),
    pytest.param([at("spec.scaleTargetRef", {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc"})],
                 id="a ReplicationController in the core group"),
    pytest.param([at("spec.scaleTargetRef.apiVersion", "argoproj.io/v1alpha1"),
                  at("spec.scaleTargetRef.kind", "Rollout")], id="a custom resource target"),
    pytest.param([at("spec.metrics.1", OBJECT_METRIC)], id="an Object metric with a Value target"),
    pytest.param([at("spec.metrics.1", OBJECT_METRIC), at("spec.metrics.1.object.describedObject.apiVersion", "v1"),
                  at("spec.metrics.1.object.target", {"type": "AverageValue", "averageValue": 7})],
                 id="an Object metric in the core group with an integer AverageValue"),
    pytest.param([at("spec.metrics.0", CONTAINER_METRIC)], id="a ContainerResource metric"),
    pytest.param([at("spec.metrics.0", CONTAINER_METRIC), at("spec.metrics.0.containerResource.name", "hugepages-2Mi"),
                  at("spec.metrics.0.containerResource.target", {"type": "AverageValue", "averageValue": "1Gi"})],
                 id="a hugepages container resource with an AverageValue"),
    pytest.param([at("spec.metrics.0", CONTAINER_METRIC),
                  at("spec.metrics.0.containerResource.name", "example.com/gpu")], id="an extended container resource"),
    pytest.param([at(f"{RESOURCE_TARGET}", {"type": "AverageValue", "averageValue": "+1.5e-3"})],
                 id="a tiny positive quantity with a sign and an exponent"),
    pytest.param([at("spec.behavior.scaleDown.tolerance", "0")], id="a tolerance of 0"),
    pytest.param([at("spec.behavior.scaleDown.tolerance", "-0")], id="a tolerance of minus zero (zero)"),
    pytest.param([at("spec.behavior.scaleDown.tolerance", 1)], id="an integer tolerance"),
    pytest.param([at("spec.behavior.scaleUp", {"selectPolicy": "Disabled", "stabilizationWindowSeconds": 3600,
                                               "policies": [{"type": "Percent", "value": 2**31 - 1,
                                                             "periodSeconds": 1800}]})],
                 id="every behavior bound at its limit"),
    pytest.param([at("spec.metrics.1.pods.metric.selector",
                     {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "Exists"}]})],
                 id="a metric selector"),
    pytest.param([at(SELECTOR, {"matchLabels": {"example.com/tier": "", "app.kubernetes.io/name": "web-1.a_b"},
                                "matchExpressions": [{"key": "a" * 253 + "/" + "b" * 63, "operator": "In",
                                                      "values": ["", "v" * 63]},
                                                     {"key": "c", "operator": "DoesNotExist", "values": []},
                                                     {"key": "d", "operator": "NotIn", "values": ["x", "x"]}]})],
                 id="a metric selector at the bounds of the label rules"),
    pytest.param([at("spec.metrics.1.prometheus", {"query": "sum(rate(x[1m]))", "stalenessSeconds": 60})],
                 id="a Prometheus binding"),
    pytest.param([at("spec.missingPods", "Hold")], id="missingPods Hold"),
    pytest.param([at("spec.minReplicas", 0), at("spec.scaleToZero", {"cooldownSeconds": 0, "idleReplicas": 10,
                                                                    "wakeFromManualZero": True}),
                  at("spec.metrics.2.activationThreshold", "0.5")],
                 id="scaleToZero at its bounds with an activation threshold (opts in whatever the gate)"),
    pytest.param([at("spec.minReplicas", 0), at("spec.scaleToZero", {}), at("spec.metrics.2.activationThreshold", 0)],
                 id="an empty scaleToZero (the defaults) and an integer activation threshold of 0"),
    pytest.param([at("spec.fallback", {})], id="an empty fallback (hold after 3 failures)"),
    pytest.param([at("spec.fallback", {"failureThreshold": 1, "action": "scaleUpOnly", "replicas": 10})],
                 id="fallback scaleUpOnly at maxReplicas"),
    pytest.param([at("spec.fallback", {"failureThreshold": 1000, "action": "lastKnownGood",
                                       "stalenessSeconds": 86400})], id="fallback lastKnownGood at its bounds"),
    pytest.param([at("spec.syncPeriodSeconds", 1), at("spec.dryRun", True)], id="the shortest sync period, dry-run"),
    pytest.param([at("spec.syncPeriodSeconds", 3600), at("spec.dryRun", False)], id="the longest sync period"),
    pytest.param([at("spec.mode", "hpa")], id="mode hpa"),
    pytest.param([at("spec.mode", "shadow")], id="mode shadow beside the HPA named as the target"),
    pytest.param([at("spec.mode", "predictive"), at("spec.predictive", {"minHistorySeconds": 1185})],
                 id="a minimum history as long as the history the mode can have"),
    pytest.param([at("spec.mode", "predictive"), at("spec.predictive", {"burstRepeats": 20})],
                 id="as many bursts as the hold can see"),
    pytest.param([at("spec.mode", "predictive"), at("spec.syncPeriodSeconds", 60),
                  at("spec.predictive", {"burstRiseSeconds": 60, "minHistorySeconds": 60})],
                 id="a burst rise as long as a 60 s sync period"),
    pytest.param([at("spec.mode", "predictive"), at("spec.syncPeriodSeconds", 60),
                  at("spec.predictive", {"burstHoldSeconds": 0, "saturationRise": 0})],
                 id="no burst or saturation rise rule at a 60 s sync period"),
    pytest.param([at("spec.mode", "predictive"), at("spec.predictive", {"burstRepeats": 100, "burstHoldSeconds": 0})],
                 id="burst repeats with no burst rule"),
    pytest.param([at("spec.mode", "shadow"), at("spec.shadow", {"scaledObject": "w"})], id="shadow a ScaledObject"),
    pytest.param([at("spec.mode", "shadow"), at("spec.shadow", {"horizontalPodAutoscaler": "web-hpa"})],
                 id="shadow a named HPA"),
    pytest.param([at("spec.drainTime", DRAIN)], id="a drain time beside the metrics"),
    pytest.param([at("spec.drainTime", DRAIN), at("spec.metrics", DELETE)], id="a drain time alone (no CPU default)"),
    pytest.param([at("spec.formula", FORMULA), at("spec.drainTime", DRAIN)], id="a formula and a drain time"),
    pytest.param([at("spec.formula", FORMULA), at("spec.formula.target", {"type": "AverageValue", "averageValue": 3}),
                  at("spec.formula.expression", "-abs(ceil(queue) - floor(consumers)) * 2.5e0 + min(1, 2, queue)")],
                 id="a formula with every function and an AverageValue target"),
    pytest.param([at("spec.rolloutAware", True), at("spec.scaleDown", {"podDeletionCost": COST})],
                 id="rollout-aware counting and pod-deletion-cost on a Deployment"),
    pytest.param([at("spec.scaleTargetRef.kind", "ReplicaSet"), at("spec.scaleDown", {})],
                 id="an empty scaleDown on a ReplicaSet"),
]
# fmt: on


def _problems_by_path(obj: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    return {
        REPLAY: replay_problems(obj),
        CHECK: check_problems(obj, new=False),
        NEW: check_problems(obj, new=True),
        CRD: crd_problems(obj),
    }


@pytest.mark.parametrize(("mutations", "fields", "refused_by"), INVALID)
def test_an_invalid_spec_is_refused_where_the_rule_applies(
    mutations: Any, fields: dict[str, str], refused_by: frozenset[str]
) -> None:
    found = _problems_by_path(apply(mutations))
    for way, problems in found.items():
        if way in refused_by:
            field = fields[way]
            assert field in [path for path, _ in problems], f"{way} should refuse {field}: {problems}"
            assert all(message for _, message in problems)
        else:
            assert problems == [], f"{way} should accept it: {problems}"


@pytest.mark.parametrize("mutations", VALID)
def test_a_valid_spec_is_accepted_everywhere(mutations: Any) -> None:
    found = _problems_by_path(apply(mutations))
    assert {way: problems for way, problems in found.items() if problems} == {}


def test_a_drain_time_or_a_formula_alone_counts_as_an_external_metric_for_minreplicas_0() -> None:
    for block, value in (("drainTime", DRAIN), ("formula", FORMULA)):
        obj = apply([at(f"spec.{block}", value), at("spec.metrics", DELETE), at("spec.minReplicas", 0)])
        assert replay_problems(obj) == check_problems(obj, new=False) == crd_problems(obj) == []
        assert check_problems(obj, new=True, scale_to_zero=True) == []


def test_with_the_gate_on_a_new_object_may_have_minreplicas_0() -> None:
    obj = apply([at("spec.minReplicas", 0)])
    assert check_problems(obj, new=True, scale_to_zero=True) == []
    assert [p for p, _ in check_problems(obj, new=True, scale_to_zero=False)] == ["spec.minReplicas"]


def test_every_problem_of_a_spec_is_reported_at_once() -> None:
    """As the API server does: one refusal lists every field, not only the first."""
    obj = apply(
        [
            at("spec.minReplicas", 5),
            at("spec.maxReplicas", 4),
            at(f"{RESOURCE_TARGET}", {"type": "Value", "value": "5"}),
            at(f"{EXTERNAL_TARGET}.averageValue", "5"),
        ]
    )
    expected = {"spec.maxReplicas", "spec.metrics[0].resource.target.type", "spec.metrics[2].external.target.value"}
    assert {path for path, _ in replay_problems(obj)} == expected
    assert {path for path, _ in check_problems(obj, new=False)} == expected
    assert expected <= {path for path, _ in crd_problems(obj)}
    obj = apply([at("spec.maxReplicas", "ten"), at(f"{PODS_TARGET}.averageValue", "0"), at("spec.minReplicas", -1)])
    expected = {"spec.maxReplicas", "spec.metrics[1].pods.target.averageValue", "spec.minReplicas"}
    assert {path for path, _ in replay_problems(obj)} == expected
    assert {path for path, _ in crd_problems(obj)} == expected
