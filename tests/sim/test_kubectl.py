"""kubectl against the emulator: get (server-side tables), scale, describe (with events), apply."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from autoscaler.sim.apiserver import EmulatedApiServer, FakeClock, default_crds
from tests.sim.conftest import NS, autoscaler, workload

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH"),
]


Kubectl = Callable[..., str]


@pytest.fixture
def kubectl(server: EmulatedApiServer, tmp_path: Path) -> Kubectl:
    def run(*args: str) -> str:
        command = ["kubectl", f"--server={server.url}", f"--cache-dir={tmp_path / 'cache'}", "-n", NS, *args]
        env = dict(os.environ, KUBECONFIG=os.devnull)
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=30, check=False)
        assert done.returncode == 0, f"{' '.join(args)}: {done.stderr}"
        return done.stdout

    return run


def _rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


def test_get_deployments(server: EmulatedApiServer, kubectl: Kubectl) -> None:
    server.create(workload("Deployment", "web", replicas=2))
    server.advance(30)
    assert _rows(kubectl("get", "deploy")) == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        ["web", "2/2", "2", "2", "30s"],
    ]
    wide = _rows(kubectl("get", "deployments.apps", "web", "-o", "wide"))
    assert wide[0][-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"] and wide[1][-1] == "app=web"


def test_get_pods_with_a_selector(server: EmulatedApiServer, kubectl: Kubectl) -> None:
    server.create(workload("Deployment", "web", replicas=2))
    server.create(workload("Deployment", "api", replicas=1))
    rows = _rows(kubectl("get", "po", "-l", "app in (web)"))
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [r[0].startswith("web-") and r[1:3] == ["1/1", "Running"] for r in rows[1:]] == [True, True]


def test_get_custom_resources_prints_printer_columns(server: EmulatedApiServer, kubectl: Kubectl) -> None:
    server.create(autoscaler("web"))
    server.patch_status("autoscaler.dev/v1alpha1", "PrometheusAutoscaler", "web",
                        {"reference": "Deployment/web", "currentReplicas": 2,
                         "conditions": [{"type": "Ready", "status": "True"}]})  # fmt: skip
    server.advance(120)
    assert _rows(kubectl("get", "pas")) == [
        ["NAME", "REFERENCE", "MINPODS", "MAXPODS", "REPLICAS", "READY", "AGE"],
        ["web", "Deployment/web", "1", "10", "2", "True", "2m"],
    ]


def test_scale_deployment(server: EmulatedApiServer, kubectl: Kubectl) -> None:
    server.create(workload("Deployment", "web", replicas=1))
    assert kubectl("scale", "deploy", "web", "--replicas=4").strip() == "deployment.apps/web scaled"
    assert server.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 4
    assert len(server.list("v1", "Pod", namespace=NS, label_selector="app=web")) == 4
    (patch,) = server.audit.records(verb="patch")
    assert (patch.subresource, patch.content_type) == ("scale", "application/merge-patch+json")


def test_describe_deployment_lists_events(server: EmulatedApiServer, kubectl: Kubectl) -> None:
    server.create(workload("Deployment", "web", replicas=2))
    output = kubectl("describe", "deploy", "web")
    assert "Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable" in output
    assert "NewReplicaSet:   web-" in output
    assert "ScalingReplicaSet" in output and "Scaled up replica set web-" in output


def test_describe_custom_resource_lists_its_events(server: EmulatedApiServer, kubectl: Kubectl) -> None:
    created = server.create(autoscaler("web"))
    server.create({
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": NS},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "autoscaler.dev/daemon",
        "reportingInstance": "daemon-0", "action": "Scale", "reason": "SuccessfulRescale", "type": "Normal",
        "note": "New size: 3; reason: cpu above target",
        "regarding": {"apiVersion": "autoscaler.dev/v1alpha1", "kind": "PrometheusAutoscaler", "name": "web",
                      "namespace": NS, "uid": created["metadata"]["uid"]},
    })  # fmt: skip
    output = kubectl("describe", "pas", "web")
    assert "Kind:         PrometheusAutoscaler" in output
    assert "SuccessfulRescale" in output and "New size: 3; reason: cpu above target" in output


def test_apply_creates_then_patches(server: EmulatedApiServer, kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "web.json"
    manifest.write_text(json.dumps(workload("Deployment", "web", replicas=1)))
    assert kubectl("apply", "-f", str(manifest)).strip() == "deployment.apps/web created"
    manifest.write_text(json.dumps(workload("Deployment", "web", replicas=3)))
    assert kubectl("apply", "-f", str(manifest)).strip() == "deployment.apps/web configured"
    assert server.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 3


def test_get_with_the_project_crd_prints_its_columns(tmp_path: Path) -> None:
    """The package's own CRD gives `kubectl get pas` the HPA-like columns."""
    crds = default_crds()
    with EmulatedApiServer(crds=crds, clock=FakeClock()) as server:
        server.create(autoscaler("web"))
        server.patch_status("autoscaler.dev/v1alpha1", "PrometheusAutoscaler", "web",
                            {"reference": "Deployment/web", "targets": "50%/80%", "currentReplicas": 2})  # fmt: skip
        command = ["kubectl", f"--server={server.url}", f"--cache-dir={tmp_path}", "-n", NS, "get", "pas"]
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, KUBECONFIG=os.devnull),
                              timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    header, row = _rows(done.stdout)
    assert header[:5] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS"]
    assert row[:5] == ["web", "Deployment/web", "50%/80%", "1", "10"]
