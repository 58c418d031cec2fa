"""The emulator stands in for the cluster: it must not import the autoscaler layers it is used to test."""

from __future__ import annotations

import ast
from pathlib import Path

import autoscaler.sim.apiserver as package

FORBIDDEN = ("autoscaler.kube", "autoscaler.metrics", "autoscaler.daemon", "autoscaler.spec", "autoscaler.cli")


def test_no_imports_of_the_layers_under_test() -> None:
    offenders = []
    for module in Path(package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{module.name}: {n}" for n in names if n.startswith(FORBIDDEN)]
    assert offenders == []
