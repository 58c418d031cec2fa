"""`python -m autoscaler.sim.apiserver` in its own process: URL on stdout, seed files, clean SIGTERM exit."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.sim.conftest import PAS_CRD, autoscaler, workload


@pytest.fixture
def process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    crd_file = tmp_path / "crd.yaml"
    crd_file.write_text(yaml.safe_dump(PAS_CRD))
    seed = tmp_path / "seed.yaml"
    seed.write_text(yaml.safe_dump_all([autoscaler("web"), workload("Deployment", "web", replicas=2)]))
    command = [sys.executable, "-m", "autoscaler.sim.apiserver", "--port", "0", "--crd", str(crd_file),
               "--seed", str(seed), "--start-delay-seconds", "0", "--ready-delay-seconds", "0"]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def test_serves_seeded_objects_and_stops_on_sigterm(process: tuple[subprocess.Popen[str], str]) -> None:
    proc, url = process
    config = k8s.Configuration(host=url)
    with k8s.ApiClient(config) as api:
        scale = k8s.AppsV1Api(api).read_namespaced_deployment_scale("web", "default")
        assert scale.spec.replicas == 2
        got = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            "autoscaler.dev", "v1alpha1", "default", "prometheusautoscalers", "web"
        )
        assert got["spec"]["maxReplicas"] == 10
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0


def test_pods_become_ready_on_the_real_clock(process: tuple[subprocess.Popen[str], str]) -> None:
    """The standalone server's background ticker moves pods along: a watch sees the deployment get ready."""
    _, url = process
    ready = 0
    watch_url = f"{url}/apis/apps/v1/namespaces/default/deployments?watch=true&timeoutSeconds=10"
    with urllib.request.urlopen(watch_url, timeout=15) as stream:
        for line in stream:
            ready = json.loads(line)["object"].get("status", {}).get("readyReplicas", 0)
            if ready == 2:
                break
    assert ready == 2


def test_audit_log_is_readable_from_another_process(process: tuple[subprocess.Popen[str], str]) -> None:
    _, url = process
    request = urllib.request.Request(f"{url}/api/v1/namespaces/default/pods", headers={"User-Agent": "probe/1"})
    with urllib.request.urlopen(request, timeout=5):
        pass
    (item,) = _get(f"{url}/_emulator/audit?user_agent=probe/1")["items"]
    assert (item["verb"], item["resource"], item["code"]) == ("list", "pods", 200)


def test_bad_arguments_exit_nonzero(tmp_path: Path) -> None:
    from autoscaler.sim.apiserver import main

    with pytest.raises(SystemExit):
        main(["--port", "not-a-number"])
    assert main(["--port", "0", "--seed", str(tmp_path / "missing.yaml")]) == 1


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param("a: [1,\n", "not valid YAML", id="broken YAML"),
        pytest.param(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: many}\n",
            'document 1 (apps/v1 Deployment x): Deployment.apps "x" is invalid',
            id="an invalid object",
        ),
        pytest.param("kind: Gadget\nmetadata: {name: g}\n", "document 1 (? Gadget g)", id="an unknown kind"),
    ],
)
def test_a_bad_seed_file_names_the_file_and_the_document(tmp_path: Path, text: str, words: str) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "autoscaler.sim.apiserver", "--port", "0", "--seed", str(seed)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert f"error: {seed}" in proc.stderr and words in proc.stderr
    assert "Traceback" not in proc.stderr
