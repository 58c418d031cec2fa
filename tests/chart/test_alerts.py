"""The PrometheusRule's alerts, unit-tested by Prometheus's own `promtool test rules`: each fires after its `for`
with its labels and its annotations filled in, and not before, nor when all is well."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.chart.chart import FULLNAME, NAMESPACE, one, render
from tests.metrics import server

JOB = f'job="{FULLNAME}"'


def rules() -> dict[str, Any]:
    spec = one(render({"prometheusRule": {"enabled": True, "alertLabels": {"team": "platform"}}}), "PrometheusRule")
    return dict(spec["spec"])


def description(alert: str, **labels: str) -> str:
    """An alert's description as Prometheus fills it: `{{ $labels.x }}` replaced."""
    (rule,) = [r for group in rules()["groups"] for r in group["rules"] if r.get("alert") == alert]
    text = str(rule["annotations"]["description"])
    for name, value in labels.items():  # (labels the description does not use change nothing)
        text = text.replace(f"{{{{ $labels.{name} }}}}", value)
    return text


def summary(alert: str) -> str:
    (rule,) = [r for group in rules()["groups"] for r in group["rules"] if r.get("alert") == alert]
    return str(rule["annotations"]["summary"])


def expected(alert: str, severity: str, **labels: str) -> dict[str, Any]:
    return {
        "exp_labels": {"severity": severity, "team": "platform", **labels},
        "exp_annotations": {"summary": summary(alert), "description": description(alert, **labels)},
    }


TARGET = {"namespace": "shop", "name": "web"}
METRIC = {**TARGET, "metric": "cpu resource utilization (percentage of request)", "target_type": "Utilization"}


def series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ", ".join([JOB, *(f'{k}="{v}"' for k, v in labels.items())])
    return {"series": f"{name}{{{inner}}}", "values": values}


CASES = [
    pytest.param(
        [series("autoscaler_leader", {"pod": "a"}, "0x20"), series("autoscaler_leader", {"pod": "b"}, "0x20")],
        "AutoscalerDown",
        {"4m": [], "6m": [expected("AutoscalerDown", "critical")]},
        id="no replica leads for 5 minutes: down",
    ),
    pytest.param(
        [series("autoscaler_leader", {"pod": "a"}, "0x20"), series("autoscaler_leader", {"pod": "b"}, "1x20")],
        "AutoscalerDown",
        {"10m": []},
        id="one replica leads: not down",
    ),
    pytest.param(
        [],
        "AutoscalerDown",
        {"6m": [expected("AutoscalerDown", "critical")]},
        id="nothing scraped: down",
    ),
    pytest.param(
        [series("autoscaler_target_metric_target", METRIC, "60x20")],
        "AutoscalerMetricsFailing",
        {"9m": [], "11m": [expected("AutoscalerMetricsFailing", "warning", job=FULLNAME, **METRIC)]},
        id="a metric with a target and no value for 10 minutes: failing",
    ),
    pytest.param(
        [
            series("autoscaler_target_metric_target", METRIC, "60x20"),
            series("autoscaler_target_metric_value", METRIC, "45x20"),
        ],
        "AutoscalerMetricsFailing",
        {"15m": []},
        id="a metric with a value: not failing",
    ),
    pytest.param(
        [series("autoscaler_target_decision_info", {**TARGET, "reason": "TooManyReplicas"}, "1x40")],
        "AutoscalerTargetAtMaximum",
        {"29m": [], "31m": [expected("AutoscalerTargetAtMaximum", "warning", **TARGET)]},
        id="wants more than maxReplicas for 30 minutes: at maximum",
    ),
    pytest.param(
        [series("autoscaler_target_decision_info", {**TARGET, "reason": "DesiredWithinRange"}, "1x40")],
        "AutoscalerTargetAtMaximum",
        {"35m": []},
        id="within range: not at maximum",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("inputs", "alert", "evaluations"), CASES)
def test_alert(inputs: list[dict[str, str]], alert: str, evaluations: dict[str, Any], tmp_path: Path) -> None:
    binary = server.find_binary("promtool")
    if binary is None:
        pytest.fail("no promtool binary: run scripts/install-prometheus.sh (make deps)", pytrace=False)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules()))
    test = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": inputs,
                "alert_rule_test": [
                    {"eval_time": at, "alertname": alert, "exp_alerts": alerts} for at, alerts in evaluations.items()
                ],
            }
        ],
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test, sort_keys=False))
    result = subprocess.run(
        [binary, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_select_the_release_namespace_job() -> None:
    for group in rules()["groups"]:
        for rule in group["rules"]:
            assert JOB in rule["expr"], rule["alert"]
    assert NAMESPACE in description("AutoscalerDown")
