"""The chart renders, lints and validates strictly against Kubernetes 1.29 and 1.37 with every values set; what
it renders is the least privilege of docs/rbac.md, the hardened pod of docs/install.md, and settings the daemon
itself accepts."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from autoscaler.daemon.check import check_config
from tests.chart.chart import (
    CHART,
    FULLNAME,
    NAMESPACE,
    ROOT,
    VALUE_SETS,
    chart,
    daemon_settings,
    one,
    permissions,
    render,
    render_error,
    render_files,
)
from tests.kube.conftest import documented_permissions
from tests.metrics import server

KUBERNETES_VERSIONS = ("1.29", "1.37")
SETS = [pytest.param(values, id=name) for name, values in VALUE_SETS.items()]

# Kinds without a bundled Kubernetes schema: the prometheus-operator's, checked by structure below instead.
BY_STRUCTURE = {("monitoring.coreos.com/v1", "ServiceMonitor"), ("monitoring.coreos.com/v1", "PrometheusRule")}

# What the optional features add to docs/rbac.md's permissions, flag by flag (values.yaml's rbac section).
# Shadow mode reads HPAs and ScaledObjects from caches: list and watch, never get (the audit log of
# tests/chart/test_observability.py says so).
SHADOW_HPA = {("autoscaling", "horizontalpodautoscalers", verb) for verb in ("list", "watch")}
SHADOW_KEDA = {("keda.sh", "scaledobjects", verb) for verb in ("list", "watch")}
DELETION_COST = {("", "pods", "patch")}
OPTIONAL = SHADOW_HPA | SHADOW_KEDA | DELETION_COST
ROLLOUTS = {("argoproj.io", "rollouts/scale", "get"), ("argoproj.io", "rollouts/scale", "update")}
WORKLOADS = ("deployments", "statefulsets", "replicasets")
STATE = {("", "configmaps", verb) for verb in ("get", "create", "update", "delete")}


# --- lint and schemas ------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", SETS)
def test_helm_lint_finds_nothing_but_the_missing_icon(values: dict[str, Any]) -> None:
    report = helm_python.lint(str(CHART), values, strict=True, namespace=NAMESPACE, kube_version="v1.29.0")
    assert report["errors"] == []
    findings = [m for m in report["messages"] if m["error"] != "icon is recommended"]
    assert findings == []


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("values", SETS)
def test_every_manifest_is_valid_kubernetes_strictly(values: dict[str, Any], version: str) -> None:
    docs = render(values)
    assert docs
    for doc in docs:
        what = f"{doc['kind']} {doc['metadata']['name']}"
        if (doc["apiVersion"], doc["kind"]) in BY_STRUCTURE:
            assert_operator_object(doc)
            continue
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.SchemaNotFoundError as err:
            pytest.fail(f"{what}: no schema for {doc['apiVersion']} in Kubernetes {version}: {err.message}")
        except kubernetes_validate.ValidationError as err:
            path = ".".join(str(p) for p in err.path)
            pytest.fail(f"{what} against Kubernetes {version}: {path}: {err.message}")


def test_the_validator_refuses_an_unknown_field() -> None:
    """The strict schemas are really applied: a typo in a rendered Deployment is an error."""
    deployment = one(render({}), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFileSystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, "1.37", strict=True)


def assert_operator_object(doc: dict[str, Any]) -> None:
    """A ServiceMonitor or PrometheusRule has the fields the prometheus-operator reads, and no others."""
    assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}
    assert set(doc["metadata"]) <= {"name", "namespace", "labels", "annotations"}
    assert doc["metadata"]["namespace"] == NAMESPACE
    spec = doc["spec"]
    if doc["kind"] == "ServiceMonitor":
        assert set(spec) == {"namespaceSelector", "selector", "endpoints"}
        service = one(render({}), "Service")
        assert spec["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
        assert spec["namespaceSelector"] == {"matchNames": [NAMESPACE]}
        ports = {p["name"] for p in service["spec"]["ports"]}
        for endpoint in spec["endpoints"]:
            assert set(endpoint) <= {"port", "path", "interval", "scrapeTimeout", "honorLabels"}
            assert endpoint["port"] in ports
            assert re.fullmatch(r"(\d+(ms|s|m|h))+", endpoint["interval"])
    else:
        assert set(spec) == {"groups"}
        for group in spec["groups"]:
            assert set(group) == {"name", "rules"}
            for rule in group["rules"]:
                assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}
                assert isinstance(rule["expr"], str) and rule["expr"]
        promtool_check(spec)


def promtool_check(spec: dict[str, Any]) -> None:
    """`promtool check rules` (Prometheus's own parser of rule files) accepts the rule groups."""
    binary = server.find_binary("promtool")
    if binary is None:
        pytest.fail("no promtool binary: run scripts/install-prometheus.sh (make deps)", pytrace=False)
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as rules:
        yaml.safe_dump(spec, rules)
        rules.flush()
        result = subprocess.run([binary, "check", "rules", rules.name], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("values", "words"),
    [
        pytest.param({"replicaCount": 0}, "/replicaCount", id="no replicas"),
        pytest.param({"rbac": {"scope": "everywhere"}}, "/rbac/scope", id="unknown RBAC scope"),
        pytest.param({"replicas": 2}, "'replicas' not allowed", id="a misspelt top-level key"),
        pytest.param({"rbac": {"shadowmode": {}}}, "'shadowmode' not allowed", id="a misspelt rbac key"),
        pytest.param({"watchNamespaces": ["Shop"]}, "/watchNamespaces/0", id="not a namespace name"),
        pytest.param({"fileSpecs": {"web.json": "x"}}, "'web.json' does not match", id="a spec file that is not YAML"),
        pytest.param({"runAsUser": 0}, "/runAsUser", id="root"),
        pytest.param({"serviceMonitor": {"interval": "often"}}, "/serviceMonitor/interval", id="not a duration"),
    ],
)
def test_the_values_schema_refuses(values: dict[str, Any], words: str) -> None:
    assert words in render_error(values)


def test_the_default_values_follow_the_schema() -> None:
    chart().validate_schema({})


# --- the chart's own refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "words"),
    [
        pytest.param({"config": {"namespaces": ["a"]}}, "config.namespaces is set by the chart: set watchNamespaces"),
        pytest.param(
            {"config": {"http": {"listenAddress": ":9"}}}, "config.http is set by the chart: set service.port"
        ),
        pytest.param({"config": {"kubernetes": {"server": "x"}}}, "config.kubernetes is set by the chart"),
        pytest.param(
            {"config": {"leaderElection": {"enabled": False}}},
            "config.leaderElection.enabled is set by the chart: set leaderElection.enabled",
        ),
        pytest.param({"config": {"leaderElection": {"namespace": "x"}}}, "config.leaderElection.namespace"),
        pytest.param({"config": {"state": {"namespace": "x"}}}, "config.state.namespace is set by the chart"),
        pytest.param({"config": {"specs": {"files": ["x"]}}}, "put spec files in fileSpecs"),
        pytest.param({"leaderElection": {"enabled": False}}, "replicaCount above 1 needs leaderElection.enabled"),
        pytest.param({"rbac": {"scope": "namespaced"}}, "rbac.scope namespaced needs watchNamespaces"),
        pytest.param(
            {"terminationGracePeriodSeconds": 10},
            "terminationGracePeriodSeconds must exceed config.shutdownGraceSeconds",
        ),
        pytest.param({"serviceAccount": {"create": False}}, "serviceAccount.name"),
    ],
)
def test_the_chart_refuses_contradictory_values(values: dict[str, Any], words: str) -> None:
    assert words in render_error(values)


# --- the pod ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", SETS)
def test_the_pod_is_hardened(values: dict[str, Any]) -> None:
    docs = render(values)
    deployment = one(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] > 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["resources"]["requests"] and container["resources"]["limits"]
    # The only writable path is the /tmp emptyDir; the settings come read-only from the ConfigMap.
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]
    assert mounts["/etc/autoscaler"]["readOnly"] is True
    assert container["args"] == ["--config", "/etc/autoscaler/daemon.yaml"]
    settings = yaml.safe_load(daemon_settings(docs))
    assert settings["http"]["listenAddress"].endswith(f":{container['ports'][0]['containerPort']}")
    assert pod["terminationGracePeriodSeconds"] > settings.get("shutdownGraceSeconds", 10)


def test_defaults_run_two_replicas_with_leader_election_and_a_disruption_budget() -> None:
    docs = render({})
    assert one(docs, "Deployment")["spec"]["replicas"] == 2
    settings = yaml.safe_load(daemon_settings(docs))
    assert settings["leaderElection"] == {"enabled": True, "leaseName": FULLNAME}
    assert one(docs, "PodDisruptionBudget")["spec"]["minAvailable"] == 1
    assert {d["kind"] for d in docs} == {
        "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
        "CustomResourceDefinition", "Deployment", "Service", "PodDisruptionBudget",
    }  # fmt: skip


def test_the_service_the_disruption_budget_and_the_network_policy_select_the_pods() -> None:
    docs = render(VALUE_SETS["monitoring and network policy on"])
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    selectors = [
        one(docs, "Service")["spec"]["selector"],
        one(docs, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
        one(docs, "NetworkPolicy")["spec"]["podSelector"]["matchLabels"],
    ]
    for selector in selectors:
        assert selector.items() <= pod_labels.items()
    policy = one(docs, "NetworkPolicy")["spec"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    assert policy["ingress"][0]["ports"] == [{"port": "http", "protocol": "TCP"}]


def test_the_notes_say_how_to_watch_it() -> None:
    notes = render_files({})["autoscaler/templates/NOTES.txt"]
    assert f"rollout status deployment/{FULLNAME}" in notes
    assert "/debug/snapshots" in notes


def test_file_specs_are_mounted_beside_the_settings() -> None:
    docs = render(VALUE_SETS["custom scale kinds and file specs"])
    specs = one(docs, "ConfigMap", f"{FULLNAME}-specs")
    assert set(specs["data"]) == {"web.yaml"}
    volume = one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"][0]["projected"]["sources"]
    assert volume[1]["configMap"] == {
        "name": f"{FULLNAME}-specs",
        "items": [{"key": "web.yaml", "path": "specs/web.yaml"}],
    }
    assert yaml.safe_load(daemon_settings(docs))["specs"] == {"files": ["specs"]}


# --- the settings are the daemon's ----------------------------------------------------------------------------


@pytest.mark.parametrize("values", SETS)
def test_the_rendered_settings_pass_autoscaler_check(values: dict[str, Any], tmp_path: Path) -> None:
    """The settings ConfigMap, laid out as the pod sees it, passes `autoscaler check --config` (load_config)."""
    docs = render(values)
    (tmp_path / "daemon.yaml").write_text(daemon_settings(docs))
    for name, text in (values.get("fileSpecs") or {}).items():
        (tmp_path / "specs").mkdir(exist_ok=True)
        (tmp_path / "specs" / name).write_text(text)
    out = io.StringIO()
    status = check_config(str(tmp_path / "daemon.yaml"), [], gates={}, new=False, out=out, env={})
    assert status == 0, out.getvalue()
    assert "valid" in out.getvalue()


def test_a_bad_setting_reaches_the_daemon_and_is_refused(tmp_path: Path) -> None:
    """The check above can fail: a setting the daemon refuses passes the chart (the daemon owns that schema)."""
    docs = render({"config": {"syncPeriodSeconds": 0}})
    (tmp_path / "daemon.yaml").write_text(daemon_settings(docs))
    out = io.StringIO()
    assert check_config(str(tmp_path / "daemon.yaml"), [], gates={}, new=False, out=out, env={}) == 1
    assert "syncPeriodSeconds" in out.getvalue()


# --- RBAC ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", SETS)
def test_no_wildcard_anywhere(values: dict[str, Any]) -> None:
    for doc in render(values):
        if doc["kind"] in ("Role", "ClusterRole"):
            for rule in doc["rules"]:
                for key in ("apiGroups", "resources", "verbs", "resourceNames"):
                    assert not any("*" in item for item in rule.get(key, [])), (doc["metadata"]["name"], rule)
                assert "nonResourceURLs" not in rule


def test_the_rules_are_docs_rbac_md_exactly() -> None:
    """With every documented feature in use (file specs, a custom kind), the chart grants docs/rbac.md's table."""
    granted = permissions(render(VALUE_SETS["custom scale kinds and file specs"]))
    assert granted == documented_permissions() - OPTIONAL


def test_with_every_feature_on_the_rules_are_docs_rbac_md_exactly() -> None:
    """Shadow mode and pod-deletion-cost on as well: docs/rbac.md's table, its optional rows included."""
    values = {
        **VALUE_SETS["custom scale kinds and file specs"],
        "rbac": {
            **VALUE_SETS["custom scale kinds and file specs"]["rbac"],
            **VALUE_SETS["shadow mode and pod-deletion-cost on"]["rbac"],
        },
    }
    assert permissions(render(values)) == documented_permissions()


@pytest.mark.parametrize(
    ("values", "added"),
    [
        pytest.param({"rbac": {"shadowMode": {"horizontalPodAutoscalers": True}}}, SHADOW_HPA, id="shadow HPA"),
        pytest.param(
            {"rbac": {"shadowMode": {"kedaScaledObjects": True}}},
            SHADOW_KEDA | SHADOW_HPA,
            id="shadow KEDA: the ScaledObjects and the HPAs KEDA made",
        ),
        pytest.param({"rbac": {"podDeletionCost": True}}, DELETION_COST, id="pod-deletion-cost"),
        pytest.param(
            {"rbac": {"customScaleKinds": [{"apiGroup": "argoproj.io", "resources": ["rollouts"]}]}},
            ROLLOUTS,
            id="a custom kind",
        ),
        pytest.param({"fileSpecs": {"web.yaml": "{}"}}, STATE, id="file specs: their state ConfigMaps"),
    ],
)
def test_each_flag_adds_exactly_its_permissions(values: dict[str, Any], added: set[tuple[str, str, str]]) -> None:
    base = permissions(render({}))
    assert base == documented_permissions() - OPTIONAL - ROLLOUTS - STATE
    assert permissions(render(values)) - base == added


def test_without_custom_resources_the_daemon_gets_no_access_to_them() -> None:
    granted = permissions(render(VALUE_SETS["one replica without leader election, no CRD, files only"]))
    assert not {p for p in granted if p[0] == "autoscaler.dev"}
    assert not {p for p in granted if p[1] == "leases"}


def test_leases_and_state_are_granted_only_in_the_release_namespace() -> None:
    docs = render(VALUE_SETS["custom scale kinds and file specs"])
    for doc in docs:
        resources = {r for rule in doc.get("rules") or [] for r in rule["resources"]}
        if resources & {"leases", "configmaps"}:
            assert doc["kind"] == "Role" and doc["metadata"]["namespace"] == NAMESPACE
    lease_rules = [r for r in one(docs, "Role")["rules"] if r["resources"] == ["leases"]]
    assert lease_rules == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [FULLNAME],
            "verbs": ["get", "update"],
        },
    ]


CACHES = {("apps", plural, verb) for plural in WORKLOADS for verb in ("list", "watch")} | {
    ("", "pods", "list"),
    ("", "pods", "watch"),
}
SHADOW = {"shadowMode": {"horizontalPodAutoscalers": True, "kedaScaledObjects": True}, "podDeletionCost": True}


@pytest.mark.parametrize(
    ("namespaces", "rbac", "cluster_wide"),
    [
        pytest.param(["shop"], {}, set(), id="one namespace: every watch scoped to it"),
        pytest.param(["shop"], SHADOW, set(), id="one namespace, shadow mode: the shadow caches are scoped to it too"),
        pytest.param(["shop", "payments"], {}, CACHES, id="two namespaces: the pod and workload caches watch all"),
        pytest.param(
            ["shop", "payments"],
            SHADOW,
            CACHES | SHADOW_HPA | SHADOW_KEDA,
            id="two namespaces, shadow mode: the shadow caches watch all too; pods are patched per namespace",
        ),
    ],
)
def test_namespaced_rbac(namespaces: list[str], rbac: dict[str, Any], cluster_wide: set[tuple[str, str, str]]) -> None:
    docs = render({"rbac": {"scope": "namespaced", **rbac}, "watchNamespaces": namespaces})
    roles = [d for d in docs if d["kind"] == "Role" and d["metadata"]["namespace"] in namespaces]
    bindings = [d for d in docs if d["kind"] == "RoleBinding" and d["metadata"]["namespace"] in namespaces]
    assert sorted(r["metadata"]["namespace"] for r in roles) == sorted(namespaces)
    assert sorted(b["metadata"]["namespace"] for b in bindings) == sorted(namespaces)
    assert permissions([d for d in docs if d["kind"] == "ClusterRole"]) == cluster_wide
    assert permissions(docs) == permissions(render({"rbac": rbac}))
    assert yaml.safe_load(daemon_settings(docs))["namespaces"] == namespaces


# --- the CRD ------------------------------------------------------------------------------------------------


def test_the_charts_crd_is_the_projects() -> None:
    source = ROOT / "autoscaler" / "kube" / "crd.yaml"
    copy = CHART / "files" / "crd.yaml"
    assert copy.read_bytes() == source.read_bytes(), "copy autoscaler/kube/crd.yaml to charts/autoscaler/files/"
    crd = one(render({}), "CustomResourceDefinition")
    original = yaml.safe_load(source.read_text())
    assert crd["spec"] == original["spec"]  # printed as text: int64 bounds are not rounded through floats
    assert crd["metadata"]["name"] == original["metadata"]["name"]
    assert crd["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert "CustomResourceDefinition" not in {d["kind"] for d in render({"crds": {"install": False}})}


# --- the dashboard --------------------------------------------------------------------------------------------


def test_the_dashboard_configmap_ships_the_json() -> None:
    docs = render({"dashboard": {"enabled": True}})
    configmap = one(docs, "ConfigMap", f"{FULLNAME}-dashboard")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = configmap["data"]["autoscaler.json"]
    assert shipped == (CHART / "dashboards" / "autoscaler.json").read_text()


def test_rendering_is_deterministic() -> None:
    """Two renders are identical (no random names, no timestamps): `helm diff` shows only real changes."""
    values = VALUE_SETS["monitoring and network policy on"]
    first = chart().render(values, name="prod", namespace=NAMESPACE)
    assert chart().render(values, name="prod", namespace=NAMESPACE) == first


def test_no_template_renders_to_nothing_but_whitespace_when_on() -> None:
    """Every template that renders anything renders objects (no stray fragments)."""
    for path, text in render_files(VALUE_SETS["monitoring and network policy on"]).items():
        if path.endswith(".yaml") and text.strip():
            assert [d for d in yaml.safe_load_all(text) if d], path
