"""`autoscaler convert`: HPA manifests and KEDA ScaledObjects into PrometheusAutoscalers, and what is not carried.

Every conversion's output goes through the spec-file loader behind `autoscaler check` (and the daemon): it
must be a valid PrometheusAutoscaler. Each table case names the notices it must list, by input field.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.spec.convert import Conversion, convert
from autoscaler.spec.errors import SpecError
from autoscaler.spec.files import load_spec_text

CPU_70 = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}
PODS = {
    "type": "Pods",
    "pods": {"metric": {"name": "http_rps"}, "target": {"type": "AverageValue", "averageValue": "50"}},
}
OBJECT = {
    "type": "Object",
    "object": {
        "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
        "metric": {"name": "requests_per_second"},
        "target": {"type": "Value", "value": "2k"},
    },
}
EXTERNAL = {
    "type": "External",
    "external": {
        "metric": {"name": "pubsub.googleapis.com|subscription|num_undelivered_messages"},
        "target": {"type": "AverageValue", "averageValue": "30"},
    },
}
CONTAINER = {
    "type": "ContainerResource",
    "containerResource": {
        "name": "memory",
        "container": "app",
        "target": {"type": "AverageValue", "averageValue": "1Gi"},
    },
}
BEHAVIOR = {
    "scaleDown": {"stabilizationWindowSeconds": 60, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}]},
    "scaleUp": {"selectPolicy": "Max"},
}
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def hpa(version: str = "autoscaling/v2", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}, "resourceVersion": "7"},
        "spec": {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 10, **spec},
        "status": {"currentReplicas": 3},
    }


def trigger(query: str = "sum(queue_ready)", threshold: Any = "20", **fields: Any) -> dict[str, Any]:
    metadata = {"serverAddress": "http://prometheus.monitoring:9090", "query": query, "threshold": threshold}
    return {"type": "prometheus", "metadata": {**metadata, **fields.pop("metadata", {})}, **fields}


def scaled_object(*triggers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "worker", "namespace": "jobs"},
        "spec": {"scaleTargetRef": {"name": "worker"}, "triggers": list(triggers), **spec},
    }


def _valid(conversion: Conversion) -> dict[str, Any]:
    """The converted object, after checking it the way `autoscaler check` does."""
    result = load_spec_text(yaml.safe_dump(conversion.obj), source="out.yaml", scale_to_zero=False)
    assert result.valid, (result.problems, [d.problems for d in result.documents])
    assert conversion.obj["apiVersion"] == "autoscaler.dev/v1alpha1"
    assert conversion.obj["kind"] == "PrometheusAutoscaler"
    return conversion.obj


def _notices(conversion: Conversion) -> dict[str, tuple[bool, str]]:
    return {n.field: (n.dropped, n.message) for n in conversion.notices}


# --- HorizontalPodAutoscaler --------------------------------------------------------------------------

# fmt: off
HPAS = [
    pytest.param(hpa("autoscaling/v1", targetCPUUtilizationPercentage=60),
                 {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 10, "metrics": [
                     {"type": "Resource", "resource": {"name": "cpu",
                                                       "target": {"type": "Utilization", "averageUtilization": 60}}}]},
                 set(), id="v1: targetCPUUtilizationPercentage is a Resource cpu Utilization metric"),
    pytest.param(hpa("autoscaling/v1"), {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 10},
                 set(), id="v1 without a target: the same default CPU 80 %"),
    pytest.param(hpa("autoscaling/v2beta2", metrics=[CPU_70, CONTAINER], behavior=BEHAVIOR),
                 {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 10, "metrics": [CPU_70, CONTAINER],
                  "behavior": BEHAVIOR},
                 set(), id="v2beta2: field-compatible, resource metrics need nothing"),
    pytest.param(hpa(metrics=[CPU_70, PODS, OBJECT, EXTERNAL], behavior=BEHAVIOR),
                 {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 10,
                  "metrics": [CPU_70, PODS, OBJECT, EXTERNAL], "behavior": BEHAVIOR},
                 {"spec.metrics[1]", "spec.metrics[2]", "spec.metrics[3]"}, id="v2: every metric type and behavior"),
]
# fmt: on


@pytest.mark.parametrize(("manifest", "spec", "noted"), HPAS)
def test_an_hpa_keeps_its_spec(manifest: dict[str, Any], spec: dict[str, Any], noted: set[str]) -> None:
    before = copy.deepcopy(manifest)
    conversion = convert(manifest)
    obj = _valid(conversion)
    assert obj["metadata"] == {"name": "web", "namespace": "shop", "labels": {"app": "web"}}
    assert obj["spec"] == spec
    assert set(_notices(conversion)) == noted
    assert all(not n.dropped for n in conversion.notices)
    assert manifest == before  # the input is not changed


def test_a_metric_the_default_query_can_or_cannot_read_is_told_apart() -> None:
    notices = _notices(convert(hpa(metrics=[PODS, EXTERNAL])))
    assert "read with the daemon's default Pods query" in notices["spec.metrics[0]"][1]
    assert "is not a Prometheus metric name" in notices["spec.metrics[1]"][1]


def test_minreplicas_0_is_kept_and_the_gate_named() -> None:
    conversion = convert(hpa(minReplicas=0, metrics=[EXTERNAL]))
    assert _valid(conversion)["spec"]["minReplicas"] == 0
    assert "HPAScaleToZero" in _notices(conversion)["spec.minReplicas"][1]


def test_v1_annotations_holding_v2_fields_are_listed() -> None:
    manifest = hpa("autoscaling/v1")
    manifest["metadata"]["annotations"] = {"autoscaling.alpha.kubernetes.io/metrics": "[]", "team": "a"}
    notices = _notices(convert(manifest))
    assert set(notices) == {"metadata.annotations.autoscaling.alpha.kubernetes.io/metrics"}
    assert notices["metadata.annotations.autoscaling.alpha.kubernetes.io/metrics"][0] is True


# --- KEDA ScaledObject -------------------------------------------------------------------------------


def external(name: str, query: str, target: dict[str, Any], server: str | None = None) -> dict[str, Any]:
    binding = {"query": query, **({"server": server} if server else {})}
    return {"type": "External", "external": {"metric": {"name": name}, "target": target}, "prometheus": binding}


QUEUE = external("s0-prometheus", "sum(queue_ready)", {"type": "AverageValue", "averageValue": "20"})

# fmt: off
KEDA = [
    pytest.param(scaled_object(trigger()),
                 {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                  "minReplicas": 0, "maxReplicas": 100,
                  "metrics": [QUEUE], "scaleToZero": {"cooldownSeconds": 300}},
                 id="one trigger, KEDA's defaults (Deployment apps/v1, 0 to 100, AverageValue, a 300 s cooldown)"),
    pytest.param(scaled_object(trigger(metadata={"activationThreshold": 5}), trigger("sum(lag)", 7, name="lag"),
                               minReplicaCount=2, idleReplicaCount=0, cooldownPeriod=45, maxReplicaCount=10,
                               fallback={"failureThreshold": 4, "replicas": 3, "behavior": "currentReplicasIfHigher"}),
                 {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                  "minReplicas": 0, "maxReplicas": 10,
                  "metrics": [{**QUEUE, "activationThreshold": "5"},
                              external("lag", "sum(lag)", {"type": "AverageValue", "averageValue": "7"})],
                  "scaleToZero": {"cooldownSeconds": 45},
                  "fallback": {"failureThreshold": 4, "action": "scaleUpOnly", "replicas": 3}},
                 id="idle at 0 below minReplicaCount 2, an activation threshold, a cooldown, fallback if higher"),
    pytest.param(scaled_object(trigger(), minReplicaCount=1, maxReplicaCount=4, fallback={"replicas": 6}),
                 {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                  "minReplicas": 1, "maxReplicas": 4, "metrics": [QUEUE],
                  "fallback": {"failureThreshold": 3, "action": "replicas", "replicas": 4}},
                 id="fallback static (KEDA's default behaviour) above maxReplicaCount: the fixed count at the max"),
    pytest.param(scaled_object(trigger(), minReplicaCount=1, fallback={"failureThreshold": 2, "replicas": 2,
                                                                         "behavior": "currentReplicas"}),
                 {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                  "minReplicas": 1, "maxReplicas": 100, "metrics": [QUEUE],
                  "fallback": {"failureThreshold": 2, "action": "hold"}},
                 id="fallback currentReplicas: hold"),
    pytest.param(scaled_object(trigger(metricType="Value", threshold=100.5, name="rps"),
                               trigger("sum(lag)", 7, metadata={"serverAddress": "http://thanos:9090"}),
                               scaleTargetRef={"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "w"},
                               minReplicaCount=2, maxReplicaCount=30, pollingInterval=20,
                               advanced={"horizontalPodAutoscalerConfig": {"behavior": BEHAVIOR}}),
                 {"scaleTargetRef": {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "w"},
                  "minReplicas": 2, "maxReplicas": 30,
                  "metrics": [external("rps", "sum(queue_ready)", {"type": "Value", "value": "100.5"}),
                              external("s1-prometheus", "sum(lag)", {"type": "AverageValue", "averageValue": "7"},
                                       server="keda-2")],
                  "syncPeriodSeconds": 20, "behavior": BEHAVIOR},
                 id="several triggers and servers, metricType Value, every field that carries"),
    pytest.param(scaled_object(trigger(), {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}},
                               {"type": "memory", "metricType": "AverageValue",
                                "metadata": {"value": "512Mi", "containerName": "app"}}, minReplicaCount=1),
                 {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                  "minReplicas": 1, "maxReplicas": 100,
                  "metrics": [QUEUE,
                              {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                          "averageUtilization": 60}}},
                              {"type": "ContainerResource", "containerResource": {
                                  "name": "memory", "container": "app",
                                  "target": {"type": "AverageValue", "averageValue": "512Mi"}}}]},
                 id="cpu and memory triggers are resource metrics"),
    pytest.param(scaled_object({"type": "cpu", "metadata": {"type": "Utilization", "value": 50}}),
                 {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                  "minReplicas": 1, "maxReplicas": 100,
                  "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                          "averageUtilization": 50}}}]},
                 id="only a cpu trigger (the old metadata.type): no scale to zero without an External metric"),
]
# fmt: on


@pytest.mark.parametrize(("manifest", "spec"), KEDA)
def test_a_scaled_object_becomes_its_closest_equivalent(manifest: dict[str, Any], spec: dict[str, Any]) -> None:
    conversion = convert(manifest)
    obj = _valid(conversion)
    assert obj["metadata"] == {"name": "worker", "namespace": "jobs"}
    assert obj["spec"] == spec


def test_the_defaults_and_the_servers_are_noted() -> None:
    notices = _notices(convert(scaled_object(trigger())))
    assert notices["spec.minReplicaCount"][0] is False
    assert "HPAScaleToZero" in notices["spec.minReplicaCount"][1]
    assert (
        "metrics.servers.keda-1.url: http://prometheus.monitoring:9090"
        in notices["spec.triggers[0].metadata.serverAddress"][1]
    )
    assert "defaultServer" in notices["spec.triggers[0].metadata.serverAddress"][1]
    # KEDA reads an empty answer as 0 unless told otherwise: said, not copied.
    assert notices["spec.triggers[0].metadata.ignoreNullValues"][0] is True
    assert "ignoreNullValues" not in str(
        _notices(convert(scaled_object(trigger(metadata={"ignoreNullValues": "false"}))))
    )


def test_only_cpu_with_keda_min_0_becomes_1_and_says_so() -> None:
    conversion = convert(scaled_object({"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50"}}))
    assert _valid(conversion)["spec"]["minReplicas"] == 1
    assert "needs an Object or External metric" in _notices(conversion)["spec.minReplicaCount"][1]


EVERYTHING_NOT_CARRIED = scaled_object(
    trigger(
        authenticationRef={"name": "prom-auth"},
        useCachedMetrics=True,
        metadata={
            "activationThreshold": "5",
            "ignoreNullValues": "true",
            "unsafeSsl": "true",
            "customHeaders": "X-Org=a",
            "queryParameters": "dedup=true",
            "timeout": "1000",
            "authModes": "bearer",
            "cortexOrgID": "org",
            "namespace": "tenant",
            "metricName": "old",
        },
    ),
    {"type": "kafka", "metadata": {"topic": "orders"}},
    scaleTargetRef={"name": "worker", "envSourceContainerName": "app"},
    cooldownPeriod=60,
    initialCooldownPeriod=30,
    idleReplicaCount=0,
    minReplicaCount=1,
    fallback={"failureThreshold": 3, "replicas": 6},
    advanced={
        "restoreToOriginalReplicaCount": True,
        "scalingModifiers": {"formula": "a + b", "target": "2"},
        "horizontalPodAutoscalerConfig": {"name": "keda-hpa-worker"},
    },
)
EVERYTHING_NOT_CARRIED["metadata"]["annotations"] = {
    "autoscaling.keda.sh/paused-scale-in": "true",
    "scaledobject.keda.sh/transfer-hpa-ownership": "true",
    "team": "jobs",
}

NOT_CARRIED = {
    "metadata.annotations.autoscaling.keda.sh/paused-scale-in": "holds both",
    "metadata.annotations.scaledobject.keda.sh/transfer-hpa-ownership": "KEDA annotation",
    "spec.scaleTargetRef.envSourceContainerName": "environment",
    "spec.initialCooldownPeriod": "no equivalent",
    "spec.advanced.restoreToOriginalReplicaCount": "leaves the replica count",
    "spec.advanced.scalingModifiers": "one prometheus query",
    "spec.advanced.horizontalPodAutoscalerConfig.name": "no HPA object",
    "spec.triggers[0].authenticationRef": "metrics.servers",
    "spec.triggers[0].useCachedMetrics": "once",
    "spec.triggers[0].metadata.ignoreNullValues": "emptyAsZero",
    "spec.triggers[0].metadata.unsafeSsl": "tls.insecureSkipVerify",
    "spec.triggers[0].metadata.customHeaders": "headers",
    "spec.triggers[0].metadata.queryParameters": "extraQueryParams",
    "spec.triggers[0].metadata.timeout": "timeoutSeconds",
    "spec.triggers[0].metadata.authModes": "bearerTokenFile",
    "spec.triggers[0].metadata.cortexOrgID": "X-Scope-OrgID",
    "spec.triggers[0].metadata.namespace": "extraQueryParams",
    "spec.triggers[0].metadata.metricName": "named after the trigger",
    "spec.triggers[1]": "'kafka' trigger has no equivalent",
}


@pytest.mark.parametrize(
    ("annotations", "carried"),
    [
        pytest.param({"autoscaling.keda.sh/paused": "true"}, {"autoscaler.dev/paused": "true"}, id="paused"),
        pytest.param({"autoscaling.keda.sh/paused-replicas": "3"}, {"autoscaler.dev/paused-replicas": "3"},
                     id="paused at a count"),
    ],
)  # fmt: skip
def test_keda_pause_annotations_pause_the_converted_autoscaler(
    annotations: dict[str, str], carried: dict[str, str]
) -> None:
    obj = scaled_object(trigger())
    obj["metadata"]["annotations"] = annotations
    conversion = convert(obj)
    _valid(conversion)
    assert conversion.obj["metadata"]["annotations"] == carried
    assert not [n for n in conversion.notices if n.dropped and "paused" in n.field]


def test_everything_not_carried_over_is_listed_with_why() -> None:
    conversion = convert(EVERYTHING_NOT_CARRIED)
    _valid(conversion)
    dropped = {n.field: n.message for n in conversion.notices if n.dropped}
    assert set(dropped) == set(NOT_CARRIED)
    for field, words in NOT_CARRIED.items():
        assert words in dropped[field], field


# --- Bad input ----------------------------------------------------------------------------------------

# fmt: off
BAD = [
    pytest.param(hpa("autoscaling/v2beta1"), "apiVersion", "kubectl get hpa", id="HPA v2beta1"),
    pytest.param({**hpa(), "spec": None}, "spec", "required", id="HPA without a spec"),
    pytest.param(hpa("autoscaling/v1", targetCPUUtilizationPercentage="60"), "spec.targetCPUUtilizationPercentage",
                 "integer", id="v1 target as a string"),
    pytest.param(hpa("autoscaling/v1", metrics=[CPU_70]), "spec.metrics", "unknown field", id="v1 with v2 fields"),
    pytest.param(hpa(maxReplicas=0), "spec.maxReplicas", "PrometheusAutoscaler", id="an invalid HPA spec"),
    pytest.param({**hpa(), "metadata": {}}, "metadata.name", "required", id="no name"),
    pytest.param(scaled_object(trigger(threshold="0")), "spec.triggers[0].metadata.threshold", "positive",
                 id="a threshold of 0"),
    pytest.param(scaled_object(trigger(threshold="lots")), "spec.triggers[0].metadata.threshold", "not a number",
                 id="a threshold that is not a number"),
    pytest.param(scaled_object(trigger(metadata={"query": ""})), "spec.triggers[0].metadata.query", "required",
                 id="no query"),
    pytest.param(scaled_object(trigger(metricType="Utilization")), "spec.triggers[0].metricType", "AverageValue",
                 id="a Utilization prometheus trigger"),
    pytest.param(scaled_object(trigger(metadata={"serverAddress": ""})), "spec.triggers[0].metadata.serverAddress",
                 "required", id="no server"),
    pytest.param(scaled_object(), "spec.triggers", "at least one", id="no triggers"),
    pytest.param(scaled_object({"type": "kafka", "metadata": {}}), "spec.triggers", "nothing left to scale on",
                 id="no trigger that carries over"),
    pytest.param(scaled_object(trigger(), pollingInterval=0), "spec.pollingInterval", "1 to 3600",
                 id="a polling interval of 0"),
    pytest.param(scaled_object(trigger(), minReplicaCount=5, maxReplicaCount=2), "spec.maxReplicas",
                 "minReplicas", id="max below min"),
    pytest.param(scaled_object(trigger(), pollingIntervall=5), "spec.pollingIntervall", "unknown field",
                 id="a misspelled field"),
    pytest.param(scaled_object(trigger(), advanced={"horizontalPodAutoscalerConfig": {"behavior": {"scaleUp": {
        "policies": []}}}}), "spec.behavior.scaleUp.policies", "PrometheusAutoscaler", id="an invalid behavior"),
    pytest.param({**scaled_object(trigger()), "apiVersion": "keda.k8s.io/v1alpha1"}, "apiVersion", "keda.sh",
                 id="KEDA v1's API group"),
    pytest.param({**scaled_object(trigger()), "kind": "ScaledJob"}, "kind", "ScaledObject", id="a ScaledJob"),
    pytest.param(["a list"], "", "mapping", id="not an object"),
]
# fmt: on


@pytest.mark.parametrize(("manifest", "field", "words"), BAD)
def test_bad_input_names_the_field(manifest: Any, field: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        convert(manifest)
    assert field in [path for path, _ in caught.value.problems], caught.value.problems
    assert any(words in message for _, message in caught.value.problems), caught.value.problems


# --- The command --------------------------------------------------------------------------------------


def _convert(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoscaler", "convert", *args], input=stdin, capture_output=True, text=True, check=False
    )


def test_the_command_prints_objects_that_check_accepts(tmp_path: Path) -> None:
    source = tmp_path / "in.yaml"
    source.write_text(
        yaml.safe_dump_all(
            [
                hpa("autoscaling/v1", targetCPUUtilizationPercentage=60),
                {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "web"}},
                EVERYTHING_NOT_CARRIED,
            ]
        )
    )
    proc = _convert(str(source))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out.yaml"
    out.write_text(proc.stdout)
    check = subprocess.run(
        [sys.executable, "-m", "autoscaler", "check", str(out)], capture_output=True, text=True, check=False
    )
    assert (check.returncode, check.stdout) == (0, "2 of 2 autoscaler(s) valid\n")
    lines = proc.stderr.splitlines()
    assert (
        f"{source}: document 2 (Deployment web): skipped: neither a HorizontalPodAutoscaler nor a ScaledObject" in lines
    )
    assert (
        f"{source}: document 3 (ScaledObject jobs/worker): spec.initialCooldownPeriod: not carried over: no "
        "equivalent: a new target may go to zero once its metrics were idle for the whole cooldown"
    ) in lines
    assert len([line for line in lines if "not carried over" in line]) == len(NOT_CARRIED)
    # The YAML output carries the same list as comments.
    assert (
        "# spec.initialCooldownPeriod: not carried over: no equivalent: a new target may go to zero once its metrics "
        "were idle for the whole cooldown" in proc.stdout
    )


def test_json_output_and_stdin() -> None:
    proc = _convert("-o", "json", "-", stdin=json.dumps(hpa(metrics=[CPU_70])))
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout)["spec"]["metrics"] == [CPU_70]
    proc = _convert("-o", "json", "-", stdin=yaml.safe_dump_all([hpa(), scaled_object(trigger())]))
    listed = json.loads(proc.stdout)
    assert (listed["kind"], len(listed["items"])) == ("List", 2)


@pytest.mark.parametrize(
    ("stdin", "code", "line"),
    [
        pytest.param(yaml.safe_dump(scaled_object(trigger(threshold="0"))), 1,
                     "-: document 1 (ScaledObject jobs/worker): spec.triggers[0].metadata.threshold: must be positive, "
                     "not '0'", id="a bad document"),
        pytest.param("kind: [", 1, "-: not valid YAML", id="not YAML"),
        pytest.param(yaml.safe_dump({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}), 1,
                     "-: holds no HorizontalPodAutoscaler or ScaledObject to convert", id="nothing to convert"),
        pytest.param("a: 1\na: 2\n", 1, "-: not valid YAML: found duplicate key 'a'", id="a duplicate key"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_1(stdin: str, code: int, line: str) -> None:
    proc = _convert("-", stdin=stdin)
    assert proc.returncode == code
    assert any(got.startswith(line) for got in proc.stderr.splitlines()), proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_good_document_is_still_printed_beside_a_bad_one_and_a_missing_file(tmp_path: Path) -> None:
    proc = _convert(str(tmp_path / "missing.yaml"), "-", stdin=yaml.safe_dump_all([hpa(), hpa(maxReplicas="ten")]))
    assert proc.returncode == 1
    assert f"{tmp_path / 'missing.yaml'}: cannot read" in proc.stderr
    assert "-: document 2 (HorizontalPodAutoscaler shop/web): spec.maxReplicas:" in proc.stderr
    assert len(list(yaml.safe_load_all(proc.stdout))) == 1


def test_usage_errors_exit_2() -> None:
    assert _convert().returncode == 2
    assert _convert("-o", "xml", "x.yaml").returncode == 2
