"""docs/install.md's values reference is values.yaml's, value by value and default by default; its alert table
is the PrometheusRule's."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.chart.chart import CHART, ROOT, one, render

DOC = (ROOT / "docs" / "install.md").read_text()
WHOLE = {"config", "resources", "dashboard.labels"}  # documented as one value, not key by key


def leaves(node: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out = {}
    for key, value in node.items():
        path = prefix + key
        if isinstance(value, dict) and value and path not in WHOLE:
            out |= leaves(value, path + ".")
        else:
            out[path] = value
    return out


def documented() -> dict[str, Any]:
    section = DOC.split("\n## Values\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| `(.*?)` \| (.+) \|$", section, flags=re.M)
    return {name: yaml.safe_load(default) for name, default, _ in rows}


def test_every_value_is_documented_with_its_default() -> None:
    values = leaves(yaml.safe_load((CHART / "values.yaml").read_text()))
    assert documented() == values


def test_every_value_has_a_comment_in_values_yaml() -> None:
    """values.yaml is documented too: each top-level key has a comment before it or on its line."""
    lines = (CHART / "values.yaml").read_text().splitlines()
    for number, line in enumerate(lines):
        if re.match(r"^[a-zA-Z]\w*:", line):
            assert lines[number - 1].startswith("#") or "#" in line or lines[number + 1].lstrip().startswith("#"), line


def test_the_alert_table_is_the_rule() -> None:
    rule = one(render({"prometheusRule": {"enabled": True}}), "PrometheusRule")
    alerts = [r["alert"] for group in rule["spec"]["groups"] for r in group["rules"]]
    assert re.findall(r"^  \| `(Autoscaler\w+)` \|", DOC, flags=re.M) == alerts
