"""Client construction: kubeconfig or explicit server, the project's User-Agent, and no hidden retries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.kube.client import USER_AGENT, ClientSettings, KubeClient, connect
from autoscaler.kube.errors import RequestContext, Unavailable
from tests.kube.conftest import NS, Setup

SCALE = rf"/apis/apps/v1/namespaces/{NS}/deployments/web/scale$"


def _read_scale(kube: KubeClient) -> dict[str, Any]:
    context = RequestContext(verb="get", resource="deployments", group="apps", subresource="scale", name="web")
    return kube.request_json(
        kube.custom.get_namespaced_custom_object_scale, "apps", "v1", NS, "deployments", "web", context=context
    )


def test_a_kubeconfig_reaches_the_server_with_the_project_s_user_agent(
    server: Any, setup: Setup, tmp_path: Path
) -> None:
    setup.workload("deployments", "web", replicas=2)
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "emu", "cluster": {"server": server.url}}],
                "users": [{"name": "me", "user": {"token": "secret-token"}}],
                "contexts": [{"name": "emu", "context": {"cluster": "emu", "user": "me"}}],
                "current-context": "emu",
            }
        )
    )
    kube = connect(ClientSettings(kubeconfig=str(kubeconfig), in_cluster=False))
    assert _read_scale(kube)["spec"]["replicas"] == 2
    (record,) = server.audit.records(subresource="scale")
    assert record.user_agent == USER_AGENT
    assert record.token == "secret-token"


@pytest.mark.parametrize(
    ("method_fault"),
    [
        pytest.param({"status": 503, "retry_after_seconds": 1}, id="503 with Retry-After"),
        pytest.param({"status": 429, "retry_after_seconds": 1}, id="429 with Retry-After"),
        pytest.param({"drop": True}, id="dropped connection"),
    ],
)
def test_the_client_does_not_retry_behind_our_back(
    kube: KubeClient, setup: Setup, server: Any, method_fault: dict[str, Any]
) -> None:
    """urllib3's default Retry(3) would resend GETs silently; retries belong to the retry budget."""
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE, method="GET", times=3, **method_fault)
    with pytest.raises(Unavailable):
        _read_scale(kube)
    assert len(server.audit.records(subresource="scale")) == 1


def test_requests_time_out_as_configured(setup: Setup, server: Any) -> None:
    setup.workload("deployments", "web", replicas=2)
    server.faults.add(SCALE, method="GET", delay_seconds=2, times=1)
    kube = connect(ClientSettings(server=server.url, read_timeout_seconds=0.3))
    with pytest.raises(Unavailable, match=r"(?i)timed? ?out"):
        _read_scale(kube)
