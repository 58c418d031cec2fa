"""bench/quality.py on two small traces: a subset of traces and scenarios, a predictive field set from the command
line (scored as a spec with that field would be), and every bad argument refused with what is wrong named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import quality


def _folder(tmp_path: Path) -> Path:
    """Two 3-hour traces: a sawtooth (a jump every hour, then a steady fall) and a flat line."""
    rows = {
        "saw": [f"{m * 60},{3000 - (m % 60) * 40}" for m in range(180)],
        "flat": [f"{m * 60},1200" for m in range(180)],
    }
    for name, points in rows.items():
        (tmp_path / f"{name}.csv").write_text("\n".join(["timestamp_seconds,value", *points]) + "\n")
        (tmp_path / f"{name}.meta.json").write_text(json.dumps({"to_per_second_factor": 1 / 60}))
    return tmp_path


def _run(folder: Path, *flags: str) -> list[dict[str, Any]]:
    out = folder / "figures.json"
    assert quality.main([str(folder), "--jobs", "1", "--json", str(out), *flags]) == 0
    runs: list[dict[str, Any]] = json.loads(out.read_text())["runs"]
    return runs


def test_a_subset_runs_only_the_traces_and_scenarios_named(tmp_path: Path) -> None:
    """One trace and one scenario asked: one row per mode, of that trace and scenario."""
    runs = _run(_folder(tmp_path), "--traces", "saw", "--scenarios", "cpu")
    assert [(r["trace"], r["scenario"], r["mode"]) for r in runs] == [
        ("saw", "cpu", "hpa"),
        ("saw", "cpu", "predictive"),
    ]


def test_a_field_set_changes_the_predictive_mode_only(tmp_path: Path) -> None:
    """`--set fill=1` sizes the count at the target, not at 0.8 of it: dearer, and the HPA's row is untouched."""
    folder = _folder(tmp_path)
    default = {r["mode"]: r for r in _run(folder, "--traces", "saw", "--scenarios", "rps")}
    filled = {r["mode"]: r for r in _run(folder, "--traces", "saw", "--scenarios", "rps", "--set", "fill=1")}
    assert filled["predictive"]["cost"] > default["predictive"]["cost"] * 1.05, (filled, default)
    assert {k: v for k, v in filled["hpa"].items() if k != "seconds"} == {
        k: v for k, v in default["hpa"].items() if k != "seconds"
    }


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(["--traces", "saw", "nope"], "--traces: no nope.csv in ", id="unknown-trace"),
        pytest.param(["--set", "fill"], "--set 'fill': expected NAME=VALUE", id="set-without-a-value"),
        pytest.param(["--set", "fill=high"], "--set 'fill=high': the value 'high' is not a JSON", id="set-not-json"),
        pytest.param(["--set", "fil=0.7"], "spec.predictive.fil: unknown field", id="set-unknown-field"),
        pytest.param(["--jobs", "0"], "--jobs: must be 1 or more, not 0", id="no-process"),
        pytest.param(["--modes", "hpa", "--set", "fill=0.9"], "--set: sets spec.predictive, but", id="set-unread"),
        pytest.param(
            ["--set", "fill=2"], "spec.predictive.fill: Input should be less than or equal to 1", id="set-range"
        ),
    ],
)
def test_bad_arguments_are_named(
    tmp_path: Path, flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any run, one line naming the argument, no traceback."""
    assert quality.main([str(_folder(tmp_path)), "--jobs", "1", *flags]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("bench/quality.py: ") and message in captured.err, captured.err
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(
    ("row", "message"),
    [
        pytest.param("60,abc", "bad.csv:3: not a pair of numbers: '60,abc'", id="not-a-number"),
        pytest.param("60,1e308", "bad.csv: the demand at 60 s, 1.66667e+306/s, is more than", id="huge-value"),
    ],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_bad_trace_among_good_ones_is_named_before_any_run(
    tmp_path: Path, row: str, message: str, jobs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not lost in a worker process: the file and the line, one message, nothing run."""
    folder = _folder(tmp_path)
    (folder / "bad.csv").write_text(f"timestamp_seconds,value\n0,1\n{row}\n")
    (folder / "bad.meta.json").write_text(json.dumps({"to_per_second_factor": 1 / 60}))
    assert quality.main([str(folder), "--jobs", jobs]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("bench/quality.py: ") and message in captured.err, captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


def test_traces_dir_must_be_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert quality.main([str(tmp_path / "nowhere")]) == 1
    assert capsys.readouterr().err == f"bench/quality.py: TRACES_DIR: {tmp_path / 'nowhere'} is not a directory\n"


def test_traces_dir_after_the_traces_list_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--traces NAME TRACES_DIR`: the list takes the folder as a name; the usage error says so, not only that
    TRACES_DIR is missing."""
    folder = _folder(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        quality.main(["--traces", "saw", str(folder)])
    assert exit_.value.code == 2
    assert f"TRACES_DIR is missing: {folder} was read as a name of --traces" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        quality.main(["--traces", "saw"])
    assert "the following arguments are required: TRACES_DIR" in capsys.readouterr().err
    assert _run(folder, "--traces", "saw", "--scenarios", "rps", "--modes", "hpa")[0]["trace"] == "saw"
