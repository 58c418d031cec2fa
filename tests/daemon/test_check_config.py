"""`autoscaler check --config`: the settings, the spec files they name, each FILE and every binding against the
settings' servers and templates; one line per problem with the file and the field path; exit 0, 1 or 2."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autoscaler.cli import main
from autoscaler.daemon.check import check_config

ROOT = Path(__file__).resolve().parents[2]

SPEC = """\
apiVersion: autoscaler.dev/v1alpha1
kind: PrometheusAutoscaler
metadata: {name: NAME, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
    - type: Pods
      pods:
        metric: {name: http_requests_per_second}
        target: {type: AverageValue, averageValue: "10"}
      prometheus: PROMETHEUS
"""
SERVERS = """\
metrics:
  servers:
    main: {url: 'http://prometheus:9090'}
  templates:
    rps: {query: 'x{${matchers}}'}
"""


def _spec(name: str = "web", prometheus: str = "{template: rps}") -> str:
    return SPEC.replace("NAME", name).replace("PROMETHEUS", prometheus)


def _run(tmp_path: Path, settings: str, *files: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    path = tmp_path / "daemon.yaml"
    path.write_text(settings)
    out = io.StringIO()
    code = check_config(str(path), list(files), gates={}, new=False, out=out, env=env or {})
    return code, out.getvalue().splitlines()


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_valid_settings_with_a_directory_of_specs(tmp_path: Path) -> None:
    _write(tmp_path, "specs/web.yaml", _spec())
    _write(tmp_path, "specs/api.yml", _spec("api"))
    _write(tmp_path, "specs/notes.txt", "not a spec")
    code, lines = _run(tmp_path, SERVERS + "specs: {files: [specs]}\n")
    assert lines == [f"settings {tmp_path / 'daemon.yaml'}: valid; 2 of 2 autoscaler(s) valid"]
    assert code == 0


CASES = [
    pytest.param(SERVERS + "leaderElection: {leaseDurationSeconds: 5}\n", {}, [],
                 ["daemon.yaml: leaderElection.leaseDurationSeconds: must be greater than renewDeadlineSeconds"],
                 id="a bad setting"),
    pytest.param(SERVERS + "specs: {files: [absent.yaml]}\n", {}, [],
                 ["daemon.yaml: specs.files[0]: no such file or directory: "], id="a missing spec file"),
    pytest.param(SERVERS, {"AUTOSCALER_DRY_RUN": "maybe"}, [],
                 ["daemon.yaml: dryRun: ", "(set by AUTOSCALER_DRY_RUN)"], id="a bad environment override"),
    pytest.param(SERVERS, {"AUTOSCALER_NOPE": "1"}, [], ["daemon.yaml: AUTOSCALER_NOPE: not a setting"],
                 id="an unknown environment variable"),
    pytest.param(SERVERS, {}, [_spec(prometheus="{template: nope}")],
                 ["document 1 (PrometheusAutoscaler shop/web): spec.metrics[0].prometheus.template: "
                  "no template named 'nope' in metrics.templates"], id="an unknown template"),
    pytest.param(SERVERS, {}, [_spec(prometheus="{server: other, template: rps}")],
                 ["spec.metrics[0].prometheus.server: no server named 'other' in metrics.servers"],
                 id="an unknown server"),
    pytest.param("{}\n", {}, [_spec().replace("      prometheus: {template: rps}\n", "")],
                 ["spec.metrics[0].prometheus.server: no Prometheus server is configured in metrics.servers"],
                 id="no server at all"),
    pytest.param("{}\n", {}, [_spec(prometheus="{query: 'up'}")],
                 ["spec.metrics[0].prometheus.server: no Prometheus server is configured in metrics.servers"],
                 id="a binding and no server at all: the same words"),
    pytest.param(SERVERS.replace("  servers:\n", "  servers:\n    other: {url: 'http://other:9090'}\n"), {},
                 [_spec(prometheus="{query: 'up'}")],
                 ["spec.metrics[0].prometheus.server: required, metrics.defaultServer is not set"],
                 id="two servers and no default"),
    pytest.param(SERVERS, {}, [_spec(prometheus="{template: rps, sumSeries: true}")],
                 ["spec.metrics[0].prometheus.sumSeries: only for Object and External metrics, not Pods"],
                 id="a rule of the metric type"),
    pytest.param(SERVERS, {}, [_spec().replace("maxReplicas: 10", "maxReplicas: 0")],
                 ["document 1 (PrometheusAutoscaler shop/web): spec.maxReplicas: "], id="a bad spec"),
    pytest.param(SERVERS, {}, [_spec(), _spec()], ["metadata.name: shop/web is also defined in "],
                 id="one autoscaler in two files"),
    pytest.param(SERVERS, {}, ["kind: Deployment\n"], ["holds no PrometheusAutoscaler or HorizontalPodAutoscaler"],
                 id="a file without an autoscaler"),
    pytest.param(SERVERS, {}, ["a: 1\na: 2\n"], ["found duplicate key 'a'"], id="a duplicate key in a spec"),
]  # fmt: skip


@pytest.mark.parametrize(("settings", "env", "specs", "expected"), CASES)
def test_each_problem_is_a_line_and_exits_1(
    tmp_path: Path, settings: str, env: dict[str, str], specs: list[str], expected: list[str]
) -> None:
    files = [_write(tmp_path, f"spec{i}.yaml", text) for i, text in enumerate(specs)]
    code, lines = _run(tmp_path, settings, *files, env=env)
    assert code == 1, lines
    problem_lines = lines[:-1]
    assert any(all(part in line for part in expected) for line in problem_lines), lines
    assert lines[-1].startswith(f"settings {tmp_path / 'daemon.yaml'}: ")


def test_every_problem_at_once(tmp_path: Path) -> None:
    spec = _write(tmp_path, "web.yaml", _spec(prometheus="{template: nope}"))
    code, lines = _run(tmp_path, "syncPeriodSeconds: 0\nlog: {format: text}\nspecs: {files: [absent]}\n", spec)
    assert code == 1
    assert [line.split(": ")[1] for line in lines[:2]] == ["syncPeriodSeconds", "log.format"]
    # The spec file is still read and validated; its bindings need settings that load.
    assert lines[2:] == [
        f"settings {tmp_path / 'daemon.yaml'}: 2 problem(s); the specs it names not checked: the settings are "
        "invalid; bindings not checked; 1 of 1 autoscaler(s) valid"
    ]


def test_invalid_settings_alone_say_the_specs_were_not_checked(tmp_path: Path) -> None:
    code, lines = _run(tmp_path, "syncPeriodSeconds: 0\nspecs: {files: [specs]}\n")
    assert code == 1
    assert (
        lines[-1] == f"settings {tmp_path / 'daemon.yaml'}: 1 problem(s); specs not checked: the settings are invalid"
    )


def _cli(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTOSCALER_")} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "autoscaler", "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=120,
        check=False,
    )


def test_the_example_settings_file_passes() -> None:
    proc = _cli("--config", "config/daemon.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "settings config/daemon.yaml: valid; 2 of 2 autoscaler(s) valid\n"


def test_the_process_exits_1_for_a_bad_override_of_the_example() -> None:
    proc = _cli("--config", "config/daemon.yaml", env={"AUTOSCALER_HTTP__LISTEN_ADDRESS": "nowhere"})
    assert proc.returncode == 1
    assert "config/daemon.yaml: http.listenAddress: 'nowhere' is not host:port" in proc.stdout
    assert "(set by AUTOSCALER_HTTP__LISTEN_ADDRESS)" in proc.stdout and proc.stderr == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["--config"], "expected one argument", id="--config without a file"),
        pytest.param([], "the following arguments are required: FILE", id="neither --config nor a file"),
    ],
)
def test_usage_errors_exit_2(args: list[str], words: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2
    assert words in proc.stderr and "Traceback" not in proc.stderr


def test_main_with_extra_files_and_the_settings_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FILE beside --config is checked against the settings; their feature gates apply to the specs."""
    settings = _write(tmp_path, "daemon.yaml", SERVERS + "controller: {featureGates: {HPAScaleToZero: true}}\n")
    external = _spec().replace("type: Pods\n      pods:", "type: External\n      external:")
    spec = _write(tmp_path, "zero.yaml", external.replace("maxReplicas: 10", "minReplicas: 0\n  maxReplicas: 10"))
    assert main(["check", "--config", settings, "--new", spec]) == 0
    assert capsys.readouterr().out.endswith("valid; 1 of 1 autoscaler(s) valid\n")
    plain = _write(tmp_path, "plain.yaml", SERVERS)
    assert main(["check", "--config", plain, "--new", spec]) == 1
    assert "spec.minReplicas" in capsys.readouterr().out


def test_settings_whose_specs_live_in_the_cluster_say_so(tmp_path: Path) -> None:
    """Custom resources only and no file: "0 of 0 valid" would read as if nothing was there to check."""
    code, lines = _run(tmp_path, SERVERS)
    assert code == 0
    (summary,) = lines
    assert (
        summary.startswith("settings ")
        and "; 0 of 0 autoscaler(s) valid (the specs are PrometheusAutoscaler" in summary
    )
    assert summary.endswith("to check spec files here, name them: autoscaler check --config FILE SPEC.yaml)")
    spec = _write(tmp_path, "web.yaml", _spec())
    assert _run(tmp_path, SERVERS, spec)[1][-1].endswith("; 1 of 1 autoscaler(s) valid")


def test_a_metric_without_sample_times_is_a_warning_not_a_problem(tmp_path: Path) -> None:
    """A query whose answer carries no sample time (here a ratio of two sums) is valid but has no staleness check:
    a warning line, exit 0; an aggregation of one selector keeping namespace and pod, and a plain selector, need
    none."""
    no_time = _write(tmp_path, "ratio.yaml", _spec("ratio", "{query: 'sum(x{a=\"b\"}) / sum(y)'}"))
    query = "'sum by (namespace, pod) (rate(http_requests_total{app=\"web\"}[2m]))'"
    one_selector = _write(tmp_path, "queue.yaml", _spec("queue", "{query: " + query + "}"))
    code, lines = _run(tmp_path, SERVERS, no_time, one_selector, _write(tmp_path, "web.yaml", _spec()))
    assert code == 0, lines
    [warning] = [line for line in lines if "warning" in line and not line.startswith("settings")]
    assert warning.startswith(f"{no_time}: document 1 (PrometheusAutoscaler shop/ratio): warning: ")
    assert "spec.metrics[0].prometheus: no staleness check" in warning and "freshness" in warning
    assert lines[-1].endswith("; 3 of 3 autoscaler(s) valid; 1 warning(s)")


def test_a_drain_time_input_without_sample_times_is_a_warning_too(tmp_path: Path) -> None:
    drain = (
        "  drainTime:\n"
        "    backlog: {prometheus: {query: 'sum(queue_depth{queue=\"jobs\"})'}}\n"
        "    processingRate: {prometheus: {query: 'sum(rate(acked_total[2m])) / 2'}}\n"
        "    targetSeconds: 60\n"
    )
    path = _write(tmp_path, "drain.yaml", _spec() + drain)
    code, lines = _run(tmp_path, SERVERS, path)
    assert code == 0, lines
    [warning] = [line for line in lines if ": warning: " in line]
    assert "spec.drainTime.processingRate.prometheus: no staleness check" in warning
