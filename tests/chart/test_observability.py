"""The chart's settings run the real daemon, and what the chart watches is what the daemon exports.

One real `autoscaler run` with the settings ConfigMap the chart renders (environment overrides point it at the
emulator and at a real Prometheus, as an operator would), file specs and a custom resource: `pinned` asks for
more than its maxReplicas, `broken` has a metric with no data, the others scale a StatefulSet, a ReplicaSet, a
custom Rollout and (`cr`, the custom resource) a Deployment. The runs with the chart's shadow-mode and
pod-deletion-cost grants on add `mode: shadow` specs beside an HPA and a KEDA ScaledObject, and a scale-down of
`spare` with `scaleDown.podDeletionCost`, which annotates its pods first. A real Prometheus scrapes the daemon.
Then:
- every metric name in the Grafana dashboard and in the PrometheusRule is one the daemon's /metrics serves;
- every dashboard query runs on that Prometheus, and the alerts say what happened (`pinned` at its maximum,
  `broken` failing, the autoscaler not down);
- the chart's RBAC and the daemon's requests (the emulator's audit log) agree both ways: every request is
  granted in its namespace, and every permission granted is used.
"""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from autoscaler.core.deletion_cost import ANNOTATION
from autoscaler.kube.client import USER_AGENT
from autoscaler.sim.apiserver import EmulatedApiServer
from tests.chart.chart import CHART, FULLNAME, NAMESPACE, daemon_settings, grants, one, permissions, render
from tests.e2e.stack import DaemonProcess, ScrapingPrometheus, wait_for
from tests.manifests import ROLLOUT_CRD, SCALED_OBJECT_CRD, hpa_manifest
from tests.metrics import server
from tests.sim.conftest import workload

SHOP = "shop"
DASHBOARD = json.loads((CHART / "dashboards" / "autoscaler.json").read_text())
SERIES_SUFFIXES = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_count", "_sum")}
GRAFANA_VARIABLES = {"$job": "load", "$namespace": ".*", "$target": ".*", "$__rate_interval": "1m", "$__range": "5m"}


def spec(name: str, query: str, *, kind: str = "Deployment", api_version: str = "apps/v1") -> dict[str, Any]:
    """A spec scaling `kind` `name` on one External metric from `query`, 1 per pod, at most 3 replicas."""
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": name, "namespace": SHOP},
        "spec": {
            "scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": name},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "queue_depth"},
                        "target": {"type": "AverageValue", "averageValue": "1"},
                    },
                    "prometheus": {"query": query},
                }
            ],
        },
    }


VALUES: dict[str, Any] = {
    "config": {"syncPeriodSeconds": 1, "tickSeconds": 0.5, "shutdownGraceSeconds": 3},
    "fileSpecs": {
        "pinned.yaml": yaml.safe_dump(spec("pinned", "vector(1000)")),
        "broken.yaml": yaml.safe_dump(spec("broken", "sum(no_such_series_anywhere)")),
        "db.yaml": yaml.safe_dump(spec("db", "vector(2)", kind="StatefulSet")),
        "rs.yaml": yaml.safe_dump(spec("rs", "vector(2)", kind="ReplicaSet")),
        "ro.yaml": yaml.safe_dump(spec("ro", "vector(2)", kind="Rollout", api_version="argoproj.io/v1alpha1")),
    },
    "rbac": {"customScaleKinds": [{"apiGroup": "argoproj.io", "resources": ["rollouts"]}]},
    "serviceMonitor": {"enabled": True},
    "prometheusRule": {"enabled": True},
    "dashboard": {"enabled": True},
}


# The chart's values that grant shadow mode (HPAs and KEDA ScaledObjects) and pod-deletion-cost, and the specs
# that use them: each run with these values also runs those specs.
FEATURES: dict[str, Any] = {
    "shadowMode": {"horizontalPodAutoscalers": True, "kedaScaledObjects": True},
    "podDeletionCost": True,
}
SPARE_COSTS = (5, 0, 3)  # the pod-deletion-cost of each of spare's pods, by name: the one with 5 stays


def feature_specs(spare_pods: list[str]) -> dict[str, str]:
    """Spec files for shadow mode (beside HPA `shadowed`, and beside KEDA's ScaledObject `kedaed`) and for a
    scale-down of `spare` (3 -> 1 at once) that sets each pod's cost from a per-pod query first."""
    shadowed = spec("shadowed", "vector(2)")
    shadowed["spec"]["mode"] = "shadow"
    kedaed = spec("kedaed", "vector(2)")
    kedaed["spec"].update(mode="shadow", shadow={"scaledObject": "kedaed"})
    spare = spec("spare", "vector(1)")
    per_pod = " or ".join(
        f'label_replace(vector({cost}), "pod", "{pod}", "", "")'
        for pod, cost in zip(sorted(spare_pods), SPARE_COSTS, strict=True)
    )
    spare["spec"]["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": 0}}
    spare["spec"]["scaleDown"] = {
        "podDeletionCost": {"metric": {"name": "inflight_jobs"}, "prometheus": {"query": per_pod}}
    }
    return {
        f"{name}.yaml": yaml.safe_dump(doc)
        for name, doc in (("shadowed", shadowed), ("kedaed", kedaed), ("spare", spare))
    }


def feature_seed() -> list[dict[str, Any]]:
    """The workloads of the feature specs, the HPA `shadowed` and KEDA's ScaledObject `kedaed` with its HPA."""
    scaled_object = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "kedaed", "namespace": SHOP},
        "spec": {"scaleTargetRef": {"name": "kedaed"}, "triggers": []},
    }
    return [
        *(workload("Deployment", name, replicas=1, namespace=SHOP) for name in ("shadowed", "kedaed")),
        workload("Deployment", "spare", replicas=3, namespace=SHOP),
        hpa_manifest("shadowed", target="shadowed", namespace=SHOP),
        SCALED_OBJECT_CRD,
        scaled_object,
        hpa_manifest("keda-hpa-kedaed", target="kedaed", namespace=SHOP),  # KEDA's name for the HPA it makes
    ]


class Run:
    def __init__(
        self,
        emulator: EmulatedApiServer,
        prometheus: ScrapingPrometheus,
        address: str,
        docs: Any,
        workdir: Path,
        *,
        features: bool,
    ) -> None:
        self.workdir = workdir
        self.features = features
        self.emulator = emulator
        self.prometheus = prometheus
        self.address = address
        self.docs = docs

    def scrape(self) -> bytes:
        with urllib.request.urlopen(f"http://{self.address}/metrics", timeout=5) as response:
            return bytes(response.read())

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query that must succeed (a bad expression fails the test with Prometheus's message)."""
        url = f"{self.prometheus.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = json.load(response)
        except urllib.error.HTTPError as err:
            raise AssertionError(f"{promql}: {err.code} {err.read()[:500]!r}") from err
        assert body["status"] == "success", (promql, body)
        return list(body["data"]["result"])


@pytest.fixture(
    scope="module",
    params=[
        {},
        # With one namespace the shadow caches list and watch in it; with two, in all (the cache ClusterRole).
        {"rbac": {"scope": "namespaced", **FEATURES}, "watchNamespaces": [SHOP]},
        # kedaScaledObjects alone grants the HPAs too (the comparison reads the HPA KEDA made): the HPA spec runs.
        {
            "rbac": {"scope": "namespaced", **FEATURES, "shadowMode": {"kedaScaledObjects": True}},
            "watchNamespaces": [SHOP, "payments"],
        },
    ],
    ids=[
        "cluster RBAC",
        "namespaced RBAC, shadow mode and pod-deletion-cost",
        "namespaced RBAC, two namespaces, shadow mode (the KEDA value alone) and pod-deletion-cost",
    ],
)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    binary = server.find_binary()
    if binary is None:
        pytest.fail("no prometheus binary: run scripts/install-prometheus.sh (make deps)", pytrace=False)
    tmp = tmp_path_factory.mktemp("chart-daemon")
    values = {**VALUES, **request.param, "rbac": {**VALUES["rbac"], **request.param.get("rbac", {})}}
    features = bool(values["rbac"].get("podDeletionCost"))
    docs = render(values)
    seed = [
        *(workload("Deployment", name, replicas=1, namespace=SHOP) for name in ("pinned", "broken", "cr")),
        workload("StatefulSet", "db", replicas=1, namespace=SHOP),
        workload("ReplicaSet", "rs", replicas=1, namespace=SHOP),
        ROLLOUT_CRD,
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "ro", "namespace": SHOP},
         "spec": {"replicas": 1}},
        spec("cr", "vector(2)"),  # a custom resource: its status is written, its Events are on it
        *(feature_seed() if features else []),
    ]  # fmt: skip
    namespaces = ("default", NAMESPACE, SHOP, "payments")
    with EmulatedApiServer(namespaces=namespaces, seed=seed, ready_delay_seconds=0.2) as emulator:
        emulator.patch_status("argoproj.io/v1alpha1", "Rollout", "ro", {"selector": "app=ro"}, namespace=SHOP)
        files = dict(VALUES["fileSpecs"])
        if features:
            for hpa, desired in (("shadowed", 3), ("keda-hpa-kedaed", 4)):
                emulator.patch_status(
                    "autoscaling/v2", "HorizontalPodAutoscaler", hpa, {"desiredReplicas": desired}, namespace=SHOP
                )
            wait_for(lambda: len(spare_pods(emulator)) == 3, deadline_seconds=30, what="spare's three pods")
            files.update(feature_specs(spare_pods(emulator)))
        # One conflict on a scale write of each apps kind and one on a status write: the daemon reads again (get).
        for plural, name in (("deployments", "pinned"), ("statefulsets", "db"), ("replicasets", "rs")):
            emulator.faults.add(f"/namespaces/{SHOP}/{plural}/{name}/scale$", method="PUT", status=409)
        emulator.faults.add(f"/namespaces/{SHOP}/prometheusautoscalers/cr/status$", method="PUT", status=409)
        (tmp / "prometheus").mkdir()
        prometheus = ScrapingPrometheus(binary, tmp / "prometheus", scrape_interval="1s")
        prometheus.start()
        try:
            # The pod's view: daemon.yaml with specs/ beside it, POD_NAMESPACE and POD_NAME from the downward API.
            workdir = tmp / "etc-autoscaler"
            (workdir / "specs").mkdir(parents=True)
            for name, text in files.items():
                (workdir / "specs" / name).write_text(text)
            address = f"127.0.0.1:{server.free_port()}"
            env = {
                "POD_NAMESPACE": NAMESPACE,
                "POD_NAME": f"{FULLNAME}-0",
                # What the chart leaves to the cluster: the API server (in-cluster), this test's ports.
                "AUTOSCALER_KUBERNETES__SERVER": emulator.url,
                "AUTOSCALER_HTTP__LISTEN_ADDRESS": address,
                "AUTOSCALER_METRICS__SERVERS__MAIN__URL": prometheus.url,
            }
            daemon = DaemonProcess(yaml.safe_load(daemon_settings(docs)), workdir, name="daemon", env=env)
            prometheus.scrape(address)
            daemon.start()
            try:
                wait_for(
                    lambda: daemon.get(address, "/readyz")[0] == 200,
                    deadline_seconds=60,
                    what="the daemon ready",
                    explain=daemon.tail,
                )
                yield Run(emulator, prometheus, address, docs, workdir, features=features)
            finally:
                assert daemon.terminate() == 0, daemon.tail()
        finally:
            prometheus.stop()


def spare_pods(emulator: EmulatedApiServer) -> list[str]:
    """The names of spare's live pods."""
    pods = emulator.list("v1", "Pod", namespace=SHOP, label_selector="app=spare")
    return sorted(p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp"))


# --- metric names in PromQL ------------------------------------------------------------------------------

_KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}


def metric_names(promql: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers outside strings, label matchers, ranges,
    grouping clauses and function calls."""
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', promql)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"(?<![\w$.])([A-Za-z_:][\w:]*)\b(\s*\()?", text):
        if match.group(2) is None and match.group(1) not in _KEYWORDS:
            names.add(match.group(1))
    return names


@pytest.mark.parametrize(
    ("promql", "names"),
    [
        pytest.param("up", {"up"}, id="a bare name"),
        pytest.param('rate(a_total{job="x", le="0.5"}[5m])', {"a_total"}, id="inside a function"),
        pytest.param("sum by (le, server) (rate(b_bucket[1m]))", {"b_bucket"}, id="grouping labels are not names"),
        pytest.param("x unless on (namespace) y", {"x", "y"}, id="binary operator"),
        pytest.param("count(c == 1) or vector(0)", {"c"}, id="functions and numbers"),
        pytest.param('label_values(d{job=~"$job"}, namespace)', {"d", "namespace"}, id="a Grafana variable query"),
        pytest.param("time() - e_seconds", {"e_seconds"}, id="time()"),
    ],
)
def test_metric_names(promql: str, names: set[str]) -> None:
    assert metric_names(promql) == names


def dashboard_queries() -> list[str]:
    """Every PromQL of the dashboard: panel targets, and the metric selectors of its variables' label_values."""
    out = []
    for panel in DASHBOARD["panels"]:
        out += [target["expr"] for target in panel.get("targets", [])]
    for variable in DASHBOARD["templating"]["list"]:
        if variable["type"] == "query":
            match = re.fullmatch(r"label_values\((.*), (\w+)\)", variable["query"]["query"])
            assert match is not None, variable
            out.append(match.group(1))
    return out


def rule_expressions(docs: Any) -> list[str]:
    rule = one(docs, "PrometheusRule")
    return [r["expr"] for group in rule["spec"]["groups"] for r in group["rules"]]


def grafana(promql: str) -> str:
    for variable, value in sorted(GRAFANA_VARIABLES.items(), key=lambda kv: -len(kv[0])):
        promql = promql.replace(variable, value)
    assert "$" not in promql, promql
    return promql


# --- the tests -------------------------------------------------------------------------------------------------


def test_every_metric_the_dashboard_and_the_alerts_use_is_exported(run: Run) -> None:
    def exported() -> set[str]:
        """The series names /metrics serves, and those of its declared families that have no sample yet (a
        labelled counter such as autoscaler_ticks_skipped_total before the first skip)."""
        names = set()
        for family in text_string_to_metric_families(run.scrape().decode()):
            names |= {sample.name for sample in family.samples}
            names |= {family.name + suffix for suffix in SERIES_SUFFIXES[family.type]}
        return names

    used = set()
    for promql in dashboard_queries() + rule_expressions(run.docs):
        used |= metric_names(promql)
    assert {name for name in used if not name.startswith("autoscaler_")} == set()
    # Per-target series come with the first tick; histograms with their first observation.
    wait_for(
        lambda: used <= exported(),
        deadline_seconds=30,
        what="every used metric in /metrics",
        explain=lambda: f"not exported: {sorted(used - exported())}",
    )
    assert len(used) >= 14


def test_every_dashboard_query_runs_and_has_data(run: Run) -> None:
    """Each query runs on a real Prometheus; each whose series the daemon has produced returns data (every one
    but autoscaler_ticks_skipped_total's, which has a series only once a tick was skipped)."""
    wait_for(lambda: run.query('autoscaler_target_replicas{job="load"}'), deadline_seconds=30, what="a scrape")
    queries = [grafana(promql) for promql in dashboard_queries()]
    for promql in queries:
        run.query(promql)  # runs: the answer is a success

    def unsampled() -> list[str]:
        sampled = {s.name for f in text_string_to_metric_families(run.scrape().decode()) for s in f.samples}
        return [promql for promql in queries if not metric_names(promql) <= sampled]

    # A series appears with its first event (a write, an Event): on a loaded machine a few ticks in. The skipped
    # ticks' counter has none until a tick is skipped (which a loaded machine may do too).
    skipped = ['sum by (reason) (rate(autoscaler_ticks_skipped_total{job=~"load"}[1m]))']
    missing = wait_for(
        lambda: (lambda now: [now] if set(now) <= set(skipped) else [])(unsampled()),
        deadline_seconds=60,
        what="every dashboard series exported but (maybe) the skipped ticks'",
        explain=lambda: str(unsampled()),
    )[0]
    expected = [promql for promql in queries if promql not in missing]
    # Rates need two scrapes of a changed counter; a few seconds.
    wait_for(
        lambda: [p for p in expected if not run.query(p)] == [],
        deadline_seconds=60,
        what="data in every dashboard query",
        explain=lambda: "\n".join(p for p in expected if not run.query(p)),
    )


def test_the_alerts_see_a_pinned_target_and_a_failing_metric(run: Run) -> None:
    alerts = dict(zip(("down", "failing", "pinned"), rule_expressions(run.docs), strict=True))
    local = {key: promql.replace(f'job="{FULLNAME}"', 'job="load"') for key, promql in alerts.items()}

    def targets(promql: str) -> set[str]:
        return {f"{r['metric'].get('namespace')}/{r['metric'].get('name')}" for r in run.query(promql)}

    wait_for(lambda: targets(local["pinned"]) == {"shop/pinned"}, deadline_seconds=60, what="pinned at its maximum")
    wait_for(lambda: targets(local["failing"]) == {"shop/broken"}, deadline_seconds=60, what="broken's metric failing")
    assert run.query(local["down"]) == []
    assert run.emulator.get("apps/v1", "Deployment", "pinned", namespace=SHOP)["spec"]["replicas"] == 3


def used_permissions(run: Run) -> set[tuple[str, str, str]]:
    """What the daemon's requests needed, each checked against the chart's roles in its namespace."""
    used = set()
    for r in run.emulator.audit.records():
        if not r.user_agent.startswith(USER_AGENT) or not r.resource:
            continue  # the emulator's own seeding, or discovery (granted to everyone by system:discovery)
        resource = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
        allowed = grants(run.docs, group=r.group, resource=resource, verb=r.verb, namespace=r.namespace, name=r.name)
        assert allowed, f"not granted by the chart: {r.verb} {r.group}/{resource} in {r.namespace!r} ({r.name})"
        used.add((r.group, resource, r.verb))
    return used


def test_the_chart_grants_exactly_what_the_daemon_uses(run: Run) -> None:
    """Both ways, from the emulator's audit log: every request granted in its namespace, every grant used.

    The run exercises each permission: the caches (list, watch), scale writes of every kind (a Deployment, a
    StatefulSet, a ReplicaSet, a custom Rollout), a scale conflict (get, re-read) and a status conflict (get on
    the custom resource), Events created then aggregated (patch), the Lease (create, get, update), the file
    specs' state ConfigMaps (get, create, update) and, once a spec file is removed, delete; with the feature
    values also the shadow caches (list, watch on HPAs and ScaledObjects) and the pods' costs (patch).
    """
    granted = permissions(run.docs)
    (run.workdir / "specs" / "rs.yaml").unlink()
    wait_for(
        lambda: used_permissions(run) == granted,
        deadline_seconds=60,
        what="every granted permission used",
        explain=lambda: f"granted, never used: {sorted(granted - used_permissions(run))}",
    )


def test_shadow_mode_and_pod_deletion_cost_did_their_work(run: Run) -> None:
    """What the feature grants are for happened: each shadow spec compares with the count of its HPA (KEDA's, found
    through the ScaledObject) and never writes, and spare's pods got their costs before the scale-down to 1, which
    kept the busiest pod."""
    if not run.features:
        # The default values grant neither: no such spec runs, no shadow series, no pod patch granted.
        assert "autoscaler_shadow_desired_replicas{" not in run.scrape().decode()
        assert not grants(run.docs, group="", resource="pods", verb="patch", namespace=SHOP, name="spare-0")
        hpas = {"group": "autoscaling", "resource": "horizontalpodautoscalers", "verb": "list"}
        assert not grants(run.docs, **hpas, namespace=SHOP, name="shadowed")
        return

    def theirs() -> dict[str, float]:
        families = text_string_to_metric_families(run.scrape().decode())
        return {
            sample.labels["name"]: sample.value
            for family in families
            for sample in family.samples
            if sample.name == "autoscaler_shadow_desired_replicas" and sample.labels.get("side") == "theirs"
        }

    wait_for(lambda: theirs() == {"shadowed": 3, "kedaed": 4}, deadline_seconds=30, what="both shadow comparisons")
    wait_for(lambda: len(spare_pods(run.emulator)) == 1, deadline_seconds=30, what="spare scaled down to one pod")
    (survivor,) = spare_pods(run.emulator)
    pod = run.emulator.get("v1", "Pod", survivor, namespace=SHOP)
    assert pod["metadata"]["annotations"][ANNOTATION] == str(max(SPARE_COSTS))
    for name in ("shadowed", "kedaed"):
        assert run.emulator.get("apps/v1", "Deployment", name, namespace=SHOP)["spec"]["replicas"] == 1


def test_the_grants_check_can_fail(run: Run) -> None:
    """The authorizer above refuses what the chart does not grant, and a lease other than the chart's."""
    assert not grants(run.docs, group="", resource="secrets", verb="get", namespace=SHOP, name="x")
    assert not grants(
        run.docs, group="coordination.k8s.io", resource="leases", verb="update", namespace=NAMESPACE, name="other"
    )
    assert not grants(run.docs, group="", resource="configmaps", verb="get", namespace=SHOP, name="x")
    assert grants(run.docs, group="", resource="configmaps", verb="get", namespace=NAMESPACE, name="x")


def test_the_dashboard_is_one_grafana_imports() -> None:
    assert DASHBOARD["uid"] and DASHBOARD["title"] and DASHBOARD["schemaVersion"] >= 36
    ids = [panel["id"] for panel in DASHBOARD["panels"]]
    assert len(ids) == len(set(ids))
    for panel in DASHBOARD["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["targets"] and panel["title"] and panel["description"]
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24
    variables = {v["name"]: v for v in DASHBOARD["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert set(variables) == {"datasource", "job", "namespace", "target"}
    assert Path(CHART / "dashboards" / "autoscaler.json").read_text().endswith("}\n")
