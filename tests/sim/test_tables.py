"""Server-side Tables (what `kubectl get` prints): built-in columns, CRD printer columns, ages."""

from __future__ import annotations

from typing import Any

from autoscaler.sim.apiserver import EmulatedApiServer
from autoscaler.sim.apiserver.tables import human_duration
from tests.sim.conftest import NS, Raw, autoscaler, workload

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def _table(raw: Raw, path: str, **headers: str) -> Any:
    code, body = raw.request("GET", path, Accept=TABLE, **headers)
    assert code == 200 and body["kind"] == "Table", body
    return body


def test_deployment_columns(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(workload("Deployment", "web", replicas=2))
    server.advance(90)
    table = _table(raw, f"/apis/apps/v1/namespaces/{NS}/deployments")
    names = [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0]
    assert names == ["Name", "Ready", "Up-to-date", "Available", "Age"]
    (row,) = table["rows"]
    assert row["cells"][:5] == ["web", "2/2", 2, 2, "90s"]
    assert row["cells"][7] == "app=web"
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "web"


def test_pod_columns(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(
        workload("Deployment", "web", replicas=1, annotations={"sim.autoscaler.dev/start-delay-seconds": "5"})
    )
    (row,) = _table(raw, f"/api/v1/namespaces/{NS}/pods")["rows"]
    assert row["cells"][1:5] == ["0/1", "ContainerCreating", "0", "0s"]
    server.advance(5)
    (row,) = _table(raw, f"/api/v1/namespaces/{NS}/pods")["rows"]
    assert row["cells"][1:3] == ["1/1", "Running"]


def test_custom_resource_printer_columns(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(autoscaler("web"))
    server.patch_status(
        "autoscaler.dev/v1alpha1", "PrometheusAutoscaler", "web",
        {"reference": "Deployment/web", "currentReplicas": 3, "conditions": [{"type": "Ready", "status": "True"}]},
    )  # fmt: skip
    server.advance(600)
    table = _table(raw, f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers/web")
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"), ("Reference", "string"), ("MinPods", "integer"), ("MaxPods", "integer"),
        ("Replicas", "integer"), ("Ready", "string"), ("Age", "date"),
    ]  # fmt: skip
    assert table["rows"][0]["cells"] == ["web", "Deployment/web", 1, 10, 3, "True", "10m"]


def test_missing_values_are_null_cells(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(autoscaler("web"))
    (row,) = _table(raw, f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers")["rows"]
    assert row["cells"][1] is None and row["cells"][4] is None


def test_include_object(server: EmulatedApiServer, raw: Raw) -> None:
    server.create(autoscaler("web"))
    (row,) = _table(raw, f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers?includeObject=Object")[
        "rows"
    ]
    assert row["object"]["spec"]["maxReplicas"] == 10


def test_human_duration_matches_apimachinery() -> None:
    cases = {0: "0s", 119: "119s", 120: "2m", 125: "2m5s", 600: "10m", 10_799: "179m", 10_800: "3h",
             12_600: "3h30m", 28_800: "8h", 172_800: "2d", 190_800: "2d5h", 691_200: "8d",
             63_072_000: "2y"}  # fmt: skip
    assert {s: human_duration(s) for s in cases} == cases
