"""bench/shapes.py writes traces the simulator reads, the same bytes for the same seed, and quality.py scores them."""

from __future__ import annotations

import json
from pathlib import Path

from autoscaler.simulate.trace import load_trace
from bench import quality, shapes


def test_every_shape_is_a_day_of_minutes_the_simulator_reads(tmp_path: Path) -> None:
    paths = shapes.write(tmp_path)
    assert sorted(p.stem for p in paths) == sorted(shapes.SHAPES)
    for path in paths:
        trace = load_trace(str(path))
        assert len(trace.times) == 1441 and trace.times[-1] == 86400
        assert trace.per_second_factor == 1 / 60 and min(trace.values) >= 0
    square = load_trace(str(tmp_path / "shape_square10.csv")).values
    assert square[:10] == (50.0,) * 10 and square[10:20] == (300.0,) * 10


def test_the_same_seed_writes_the_same_shapes(tmp_path: Path) -> None:
    first, second, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    shapes.write(first)
    shapes.write(second)
    shapes.write(other, seed=8)
    for name in shapes.SHAPES:
        assert (first / f"{name}.csv").read_bytes() == (second / f"{name}.csv").read_bytes()
    assert (first / "shape_noise.csv").read_bytes() != (other / "shape_noise.csv").read_bytes()
    assert (first / "shape_sine.csv").read_bytes() == (other / "shape_sine.csv").read_bytes()


def test_quality_scores_a_shape(tmp_path: Path) -> None:
    assert shapes.main([str(tmp_path)]) == 0
    out = tmp_path / "figures.json"
    flags = ["--jobs", "1", "--json", str(out), "--traces", "shape_square30", "--scenarios", "rps"]
    assert quality.main([str(tmp_path), *flags]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert {(r["trace"], r["mode"]) for r in runs} == {("shape_square30", "hpa"), ("shape_square30", "predictive")}
    assert all(r["cost"] > 0 and 0 <= r["unserved"] < 1 for r in runs)
