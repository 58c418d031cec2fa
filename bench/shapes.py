"""Synthetic load shapes for bench/quality.py: the shapes the real traces may lack, written as traces.

A sanity check of a mode on loads it was not tuned on, not a benchmark of its own: each shape is one day at one
point a minute, values in requests per minute (to_per_second_factor 1/60), with a fixed random seed so two runs
write the same files. `bench/quality.py OUT_DIR` then scores every mode on them as on the real traces
(docs/performance.md, "Shapes not in the traces").

    .venv/bin/python bench/shapes.py OUT_DIR
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Callable
from pathlib import Path

DAY = 86400
STEP = 60


def _sine(t: int, _: random.Random, __: float) -> float:
    return 100 + 80 * math.sin(2 * math.pi * t / DAY)


def _square(period: int) -> Callable[[int, random.Random, float], float]:
    """Between 50 and 300 every `period` seconds: a batch that comes and goes."""

    def value(t: int, _: random.Random, __: float) -> float:
        return 300.0 if (t // period) % 2 else 50.0

    return value


def _spikes(_: int, rng: random.Random, __: float) -> float:
    """A flat 100 with a minute at five times it, one minute in thirty on average, at random."""
    return 500.0 if rng.random() < 1 / 30 else 100.0


def _ramp(t: int, _: random.Random, __: float) -> float:
    """From 20 to 320 over six hours, then back to 20 at once, four times."""
    return 20 + (t % 21600) / 21600 * 300


def _noise(_: int, rng: random.Random, __: float) -> float:
    """A flat 100 with +-30 % of uniform noise each minute."""
    return 100 * (1 + rng.uniform(-0.3, 0.3))


def _walk(_: int, rng: random.Random, last: float) -> float:
    """A random walk in the log: 5 % a minute, at least 10."""
    return max(10.0, last * math.exp(rng.gauss(0, 0.05)))


SHAPES: dict[str, tuple[Callable[[int, random.Random, float], float], str]] = {
    "shape_sine": (_sine, "a daily swell between 20 and 180"),
    "shape_square10": (_square(600), "50 and 300 in turn, 10 minutes each"),
    "shape_square30": (_square(1800), "50 and 300 in turn, 30 minutes each"),
    "shape_spikes": (_spikes, "a flat 100 with one-minute spikes to 500 at random, one minute in thirty"),
    "shape_ramp": (_ramp, "a rise from 20 to 320 over six hours, then a drop back at once, four times"),
    "shape_noise": (_noise, "a flat 100 with +-30 % of uniform noise a minute"),
    "shape_walk": (_walk, "a random walk in the log, 5 % a minute"),
}


def write(folder: Path, *, seed: int = 7) -> list[Path]:
    """Write every shape's CSV and .meta.json into `folder`; the CSV paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (shape, description) in SHAPES.items():
        rng = random.Random(f"{seed}:{name}")
        value = 100.0
        rows = ["timestamp_seconds,value"]
        for t in range(0, DAY + 1, STEP):
            value = shape(t, rng, value)
            rows.append(f"{t},{value:.3f}")
        path = folder / f"{name}.csv"
        path.write_text("\n".join(rows) + "\n")
        meta = {
            "file": path.name,
            "description": f"synthetic (bench/shapes.py): {description}",
            "unit": "requests per minute",
            "to_per_second_factor": 1 / 60,
        }
        (folder / f"{name}.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", metavar="OUT_DIR", help="where to write the shapes (created if missing)")
    parser.add_argument("--seed", type=int, default=7, help="the random shapes' seed (default 7)")
    args = parser.parse_args(argv)
    try:
        paths = write(Path(args.folder), seed=args.seed)
    except OSError as err:
        print(f"bench/shapes.py: {args.folder}: {err}", file=sys.stderr)
        return 1
    print(f"{len(paths)} shapes written to {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
