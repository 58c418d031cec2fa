"""Render charts/autoscaler offline (helm-python-sdk: Helm's own Go engine), and read what it renders.

The values sets are the ones the tests render, validate and lint; `permissions` flattens RBAC rules into the
(group, resource, verb) triples of tests/kube/conftest.py, so the chart compares with docs/rbac.md and the
emulator's audit log.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "autoscaler"
RELEASE = "prod"
NAMESPACE = "autoscaler"
FULLNAME = "prod-autoscaler"

WEB_SPEC = (ROOT / "config" / "samples" / "web.yaml").read_text()

# Every values set the chart is rendered, linted and validated with.
VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "namespaced RBAC, one namespace": {"rbac": {"scope": "namespaced"}, "watchNamespaces": ["shop"]},
    "namespaced RBAC, two namespaces": {"rbac": {"scope": "namespaced"}, "watchNamespaces": ["shop", "payments"]},
    "monitoring and network policy on": {
        "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
        "prometheusRule": {"enabled": True, "alertLabels": {"team": "platform"}},
        "networkPolicy": {
            "enabled": True,
            "metricsFrom": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
            "egress": [{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 443, "protocol": "TCP"}]}],
        },
        "dashboard": {"enabled": True},
    },
    "custom scale kinds and file specs": {
        "rbac": {"customScaleKinds": [{"apiGroup": "argoproj.io", "resources": ["rollouts"]}]},
        "fileSpecs": {"web.yaml": WEB_SPEC},
    },
    "shadow mode and pod-deletion-cost on": {
        "rbac": {
            "shadowMode": {"horizontalPodAutoscalers": True, "kedaScaledObjects": True},
            "podDeletionCost": True,
        },
    },
    "one replica without leader election, no CRD, files only": {
        "replicaCount": 1,
        "leaderElection": {"enabled": False},
        "crds": {"install": False},
        "config": {"specs": {"customResources": False}, "dryRun": True},
        "fileSpecs": {"web.yaml": WEB_SPEC},
        "image": {"digest": "sha256:" + "ab" * 32},
    },
}


def chart() -> helm_python.Chart:
    return helm_python.Chart.load(str(CHART))


def render_files(values: dict[str, Any]) -> dict[str, str]:
    """Template path -> rendered text (rendered once per distinct values)."""
    return dict(_render_cached(json.dumps(values, sort_keys=True)))


@functools.lru_cache(maxsize=64)
def _render_cached(values: str) -> tuple[tuple[str, str], ...]:
    rendered = chart().render(json.loads(values), name=RELEASE, namespace=NAMESPACE)
    return tuple(sorted(rendered.items()))


def render(values: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object the chart renders with `values`, parsed."""
    docs: list[dict[str, Any]] = []
    for path, text in sorted(render_files(values).items()):
        if not path.endswith((".yaml", ".yml")):
            continue
        docs += [d for d in yaml.safe_load_all(text) if d]
    return docs


def render_error(values: dict[str, Any]) -> str:
    """The message of a render that must fail."""
    with pytest.raises(helm_python.HelmError) as info:
        render_files(values)
    return str(info.value)


def one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"{kind} {name or ''}: {len(found)} rendered"
    return found[0]


def daemon_settings(docs: list[dict[str, Any]]) -> str:
    """The daemon.yaml of the settings ConfigMap."""
    return str(one(docs, "ConfigMap", FULLNAME)["data"]["daemon.yaml"])


Permission = tuple[str, str, str]


def permissions(docs: list[dict[str, Any]]) -> set[Permission]:
    """Every (group, resource, verb) the chart's Roles and ClusterRoles grant, wherever they apply."""
    out: set[Permission] = set()
    for doc in docs:
        if doc["kind"] in ("Role", "ClusterRole"):
            for rule in doc.get("rules") or []:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        for verb in rule["verbs"]:
                            out.add((group, resource, verb))
    return out


def grants(docs: list[dict[str, Any]], *, group: str, resource: str, verb: str, namespace: str, name: str) -> bool:
    """Whether the chart's roles, through its bindings, let the ServiceAccount make this request (RBAC's rules:
    a ClusterRole bound cluster-wide applies everywhere, a Role in its namespace, resourceNames by name)."""
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs}
    for binding in docs:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        scope = binding["metadata"].get("namespace", "")
        if binding["kind"] == "RoleBinding" and scope != namespace:
            continue
        ref = binding["roleRef"]
        role = roles.get((ref["kind"], scope if ref["kind"] == "Role" else "", ref["name"]))
        assert role is not None, f"{binding['metadata']['name']} binds a role the chart does not render"
        for rule in role.get("rules") or []:
            named = "resourceNames" not in rule or name in rule["resourceNames"]
            if group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"] and named:
                return True
    return False
