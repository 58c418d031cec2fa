"""`autoscaler check --config` checks the bindings of a drainTime's and a formula's inputs as it checks the
metrics' (server and template names), naming each input's field."""

from __future__ import annotations

from pathlib import Path

from tests.daemon.test_check_config import SERVERS, _run, _write

SPEC = """\
apiVersion: autoscaler.dev/v1alpha1
kind: PrometheusAutoscaler
metadata: {name: worker, namespace: jobs}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  maxReplicas: 10
  drainTime:
    backlog: {prometheus: {query: 'sum(queue_depth)', server: elsewhere}}
    processingRate: {metricName: jobs_done, prometheus: {template: rps}}
    targetSeconds: 30
  formula:
    inputs:
      - {name: a, prometheus: {template: missing}}
      - {name: b, prometheus: {query: 'sum(b)'}}
    expression: a + b
    target: {type: Value, value: "3"}
"""


def test_the_inputs_bindings_are_checked_against_the_settings(tmp_path: Path) -> None:
    spec = _write(tmp_path, "specs/worker.yaml", SPEC)
    code, lines = _run(tmp_path, SERVERS, spec)
    assert code == 1
    where = f"{spec}: document 1 (PrometheusAutoscaler jobs/worker)"
    assert [line for line in lines if line.startswith(where)] == [
        f"{where}: spec.drainTime.backlog.prometheus.server: no server named 'elsewhere' in metrics.servers",
        f"{where}: spec.formula.inputs[0].prometheus.template: no template named 'missing' in metrics.templates",
    ]


def test_valid_inputs_pass(tmp_path: Path) -> None:
    spec = _write(tmp_path, "specs/worker.yaml", SPEC.replace("server: elsewhere", "server: main").replace(
        "template: missing", "template: rps"))  # fmt: skip
    code, lines = _run(tmp_path, SERVERS, spec)
    assert code == 0, lines
    assert not any("spec." in line for line in lines), lines
