"""`autoscaler simulate` as a user runs it: its output, its chart, its snapshots and its errors."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autoscaler.cli import main
from autoscaler.simulate.trace import TraceError
from tests.spec.crd_schema import crd_problems

META = {"to_per_second_factor": 1 / 60}


def _trace(folder: Path, rows: list[str], *, meta: object = META, name: str = "t") -> Path:
    path = folder / f"{name}.csv"
    path.write_text("\n".join(rows) + "\n")
    if meta is not None:
        (folder / f"{name}.meta.json").write_text(json.dumps(meta))
    return path


def _swell(minutes: int = 180) -> list[str]:
    """A sawtooth: a jump from 640 to 3000 per minute every hour, then a steady fall."""
    return ["timestamp_seconds,value"] + [f"{m * 60},{3000 - (m % 60) * 40}" for m in range(minutes)]


def _simulate(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["simulate", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("scenario", ["cpu", "rps"])
def test_json_scores_beside_the_oracle(tmp_path: Path, scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, _swell())
    status, out, err = _simulate("--trace", str(trace), "--scenario", scenario, "-o", "json", capsys=capsys)
    assert (status, err) == (0, "")
    document = json.loads(out)
    assert document["scenario"] == scenario and document["mode"] == "hpa"
    expected = "Resource cpu, Utilization 70 %" if scenario == "cpu" else "Pods requests_per_second, AverageValue "
    assert document["metric"].startswith(expected)
    assert document["oracle"]["cost"] == 1.0 and document["oracle"]["unserved"] == 0.0
    assert 0.9 < document["scores"]["cost"] < 2
    assert document["decisions"] == 715  # at 15, 30, ..., 10725 s: the trace ends at 10740 s
    assert document["scaleWrites"] > 0


def test_text_output_and_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, _swell())
    chart = tmp_path / "out.png"
    status, out, _ = _simulate("--trace", str(trace), "--chart", str(chart), capsys=capsys)
    assert status == 0
    assert "spec (hpa)" in out and "oracle" in out and "events/day" in out
    assert "\nmetric: Resource cpu, Utilization 70 % (the scenario's; a spec's own metrics are not simulated)\n" in out
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_chart_that_fails_after_the_run_keeps_the_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scores are printed first: a chart that cannot be written after all (a full disk) does not lose them."""
    from matplotlib.figure import Figure

    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", full)
    trace = _trace(tmp_path, _swell())
    status, out, err = _simulate(
        "--trace", str(trace), "--chart", str(tmp_path / "out.png"), "-o", "json", capsys=capsys
    )
    assert status == 1
    assert json.loads(out)["decisions"] == 715
    assert (
        err
        == f"autoscaler simulate: {tmp_path / 'out.png'}: cannot write the chart: [Errno 28] No space left on device\n"
    )


def test_snapshots_replay_to_the_same_decision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, _swell())
    folder = tmp_path / "snaps"
    status, _, _ = _simulate("--trace", str(trace), "--snapshots", str(folder), capsys=capsys)
    assert status == 0
    files = sorted(folder.glob("*.json"))
    assert files
    replay = subprocess.run(
        [sys.executable, "-m", "autoscaler.cli", "replay", "-o", "jsonl", *map(str, files[:5])],
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(json.loads(line)["rescale"] for line in replay.stdout.splitlines())


@pytest.mark.parametrize(
    ("rows", "meta", "flags", "message"),
    [
        pytest.param(["time,value", "0,1"], META, [], "t.csv:1: the header must be", id="header"),
        pytest.param(
            ["timestamp_seconds,value", "0,1", "60,x"], META, [], "t.csv:3: not a pair of numbers", id="not-a-number"
        ),
        pytest.param(
            ["timestamp_seconds,value", "0,1", "60,2", "60,3"],
            META,
            [],
            "t.csv:4: timestamp 60 does not increase",
            id="not-increasing",
        ),
        pytest.param(
            ["timestamp_seconds,value", "0,1", "60,-2"], META, [], "t.csv:3: value -2 is negative", id="negative"
        ),
        pytest.param(["timestamp_seconds,value", "0,1", "60,2,3"], META, [], "t.csv:3: expected 2", id="three-fields"),
        pytest.param(_swell(), None, [], "no sidecar t.meta.json", id="no-sidecar"),
        pytest.param(_swell(), {"unit": "x"}, [], "to_per_second_factor: required field", id="sidecar-field"),
        pytest.param(_swell(), {"to_per_second_factor": -1}, [], "to_per_second_factor: must be", id="sidecar-value"),
        pytest.param(_swell(), META, ["--window", "50"], "--window: 50 s is not a multiple", id="window-flag"),
        pytest.param(_swell(), META, ["--per-second-factor", "x"], "--per-second-factor: not a number", id="factor"),
        pytest.param(_swell(), META, ["--tolerance", "-1"], "--tolerance: must be a non-negative", id="tolerance"),
        pytest.param(["timestamp_seconds,value", "0,0", "60,0"], META, [], "p99 is 0", id="no-capacity"),
        pytest.param(
            ["timestamp_seconds,value", "0,1", "60,1e308"], META, [], "is more than the model takes", id="huge-value"
        ),
        pytest.param(_swell(), META, ["--capacity", "1e306"], "C = 1e+306/s per pod is more than", id="huge-capacity"),
        pytest.param(
            _swell(), META, ["--capacity", "1e-300"], "the oracle would run 7.14e+301 pods", id="tiny-capacity"
        ),
        # A chart that cannot be written is refused before the run, which it would otherwise follow.
        pytest.param(_swell(), META, ["--chart", "nowhere/out.png"], "nowhere is not a directory", id="chart-folder"),
        pytest.param(_swell(), META, ["--chart", "out.xyz"], "not a chart format matplotlib writes", id="chart-format"),
        pytest.param(_swell(), META, ["--chart", ""], "an empty path", id="chart-empty"),
        pytest.param(_swell(), META, ["--chart", "."], ".: cannot write the chart: it is a directory", id="chart-dir"),
    ],
)
def test_a_bad_trace_or_flag_is_named(
    tmp_path: Path, rows: list[str], meta: object, flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _trace(tmp_path, rows, meta=meta)
    status, out, err = _simulate("--trace", str(trace), *flags, capsys=capsys)
    assert (status, out) == (1, "")
    assert message in err and "Traceback" not in err
    assert err.startswith("autoscaler simulate: ") and err.count("\n") == 1


def test_a_byte_order_mark_is_not_part_of_the_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, ["\ufefftimestamp_seconds,value", *_swell()[1:]])
    status, out, err = _simulate("--trace", str(trace), "-o", "json", capsys=capsys)
    assert (status, err) == (0, "")
    assert json.loads(out)["decisions"] == 715


def test_snapshots_go_to_a_new_or_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second run into the same directory would mix its decisions with the first's in a replay: refused."""
    trace = _trace(tmp_path, _swell())
    folder = tmp_path / "snaps"
    folder.mkdir()  # empty: used
    assert _simulate("--trace", str(trace), "--snapshots", str(folder), capsys=capsys)[0] == 0
    written = sorted(folder.iterdir())
    status, out, err = _simulate("--trace", str(trace), "--snapshots", str(folder), capsys=capsys)
    assert (status, out) == (1, "")
    assert err == (
        f"autoscaler simulate: --snapshots: {folder} is not empty ({len(written)} entries): give a new or empty "
        "directory\n"
    )
    assert sorted(folder.iterdir()) == written


def test_a_bad_spec_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, _swell())
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "apiVersion: autoscaler.dev/v1alpha1\nkind: PrometheusAutoscaler\nmetadata: {name: web}\n"
        "spec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 0\n"
    )
    status, _, err = _simulate("--trace", str(trace), "--spec", str(spec), capsys=capsys)
    assert status == 1
    assert "spec.maxReplicas" in err and "Traceback" not in err


@pytest.mark.parametrize("scenario", ["cpu", "rps"])
def test_a_spec_made_invalid_by_the_scenarios_metric_is_named(
    tmp_path: Path, scenario: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Valid as written (minReplicas 0 with an External metric); the scenario's metric replaces the External one,
    # and minReplicas 0 needs an Object or External metric: refused, naming the field, not simulated.
    trace = _trace(tmp_path, _swell())
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n"
        "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 0\n"
        "  maxReplicas: 10\n  metrics:\n  - type: External\n    external:\n      metric: {name: queue}\n"
        "      target: {type: AverageValue, averageValue: '30'}\n"
    )
    status, out, err = _simulate("--trace", str(trace), "--spec", str(spec), "--scenario", scenario, capsys=capsys)
    assert (status, out) == (1, "")
    assert err == (
        f"autoscaler simulate: --spec: with the {scenario} scenario's metric in place of the spec's: spec.metrics: "
        "must specify at least one Object or External metric to support scaling to zero replicas\n"
    )


def test_a_spec_sets_min_max_and_behavior(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, _swell())
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "apiVersion: autoscaler.dev/v1alpha1\nkind: PrometheusAutoscaler\nmetadata: {name: web}\n"
        "spec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  minReplicas: 40\n  maxReplicas: 41\n"
        "  behavior: {scaleDown: {stabilizationWindowSeconds: 0}}\n"
    )
    status, out, _ = _simulate("--trace", str(trace), "--spec", str(spec), "-o", "json", capsys=capsys)
    assert status == 0
    bounded = json.loads(out)
    _, out, _ = _simulate("--trace", str(trace), "-o", "json", capsys=capsys)
    default = json.loads(out)
    # Between 40 and 41 pods (the oracle's floor is 40 too): nothing unserved, far fewer writes.
    assert bounded["scores"]["unserved"] == 0.0 < default["scores"]["unserved"]
    assert bounded["scaleWrites"] < default["scaleWrites"] / 2


@pytest.mark.parametrize(
    ("kind", "spec", "field"),
    [
        pytest.param("PrometheusAutoscaler", "  mode: forecast\n", "spec.mode", id="unknown-mode"),
        pytest.param(
            "PrometheusAutoscaler", "  mode: predictive\n  predictive: {horizonSeconds: -1}\n",
            "spec.predictive.horizonSeconds", id="negative-horizon",
        ),
        pytest.param(
            "PrometheusAutoscaler", "  mode: predictive\n  predictive: {horizon: 60}\n", "spec.predictive.horizon",
            id="unknown-parameter",
        ),
        pytest.param("HorizontalPodAutoscaler", "  mode: predictive\n", "spec.mode", id="not-on-an-hpa"),
    ],
)  # fmt: skip
def test_a_bad_mode_names_the_field(
    tmp_path: Path, kind: str, spec: str, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _trace(tmp_path, _swell())
    path = tmp_path / "spec.yaml"
    api = "autoscaler.dev/v1alpha1" if kind == "PrometheusAutoscaler" else "autoscaling/v2"
    path.write_text(
        f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: web}}\n"
        "spec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 10\n" + spec
    )
    status, out, err = _simulate("--trace", str(trace), "--spec", str(path), capsys=capsys)
    assert (status, out) == (1, "")
    assert field in err and "Traceback" not in err


def test_predictive_mode_reports_its_fallback_share(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, _swell())
    path = tmp_path / "spec.yaml"
    path.write_text(
        "apiVersion: autoscaler.dev/v1alpha1\nkind: PrometheusAutoscaler\nmetadata: {name: web}\n"
        "spec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 100\n  mode: predictive\n"
    )
    status, out, _ = _simulate("--trace", str(trace), "--spec", str(path), "-o", "json", capsys=capsys)
    assert status == 0
    document = json.loads(out)
    assert document["mode"] == "predictive"
    # The first three decisions have less than 60 s of history: they take the HPA's answer.
    assert 3 / document["decisions"] <= document["fallbackShare"] < 0.5


def test_the_example_predictive_spec_simulates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "config" / "simulate" / "predictive.yaml"
    trace = _trace(tmp_path, _swell())
    status, out, err = _simulate("--trace", str(trace), "--spec", str(example), "-o", "json", capsys=capsys)
    assert (status, err) == (0, "")
    assert json.loads(out)["mode"] == "predictive"
    # And the custom resource's schema (its CEL rules included) accepts it, as `kubectl apply` would.
    assert crd_problems(yaml.safe_load(example.read_text())) == []


def test_a_trace_error_crosses_a_process_boundary() -> None:
    """bench/quality.py's workers send errors back pickled: the file and line survive."""
    error = pickle.loads(pickle.dumps(TraceError("not a pair of numbers", source="t.csv", line=3)))
    assert (str(error), error.source, error.line) == ("t.csv:3: not a pair of numbers", "t.csv", 3)
