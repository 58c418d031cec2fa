"""config/examples/drain-time.yaml and formula.yaml: `autoscaler check` accepts them, and they decide as they say."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from autoscaler.core import types as core
from autoscaler.core.decision import decide
from autoscaler.spec.files import load_spec_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "config" / "examples" / name for name in ("drain-time.yaml", "formula.yaml")]
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def test_check_accepts_the_examples() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "autoscaler", "check", *map(str, EXAMPLES)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "2 of 2 autoscaler(s) valid\n", "")


def _pods(count: int) -> tuple[core.Pod, ...]:
    since = NOW - timedelta(minutes=10)
    return tuple(
        core.Pod(f"p-{i}", "Running", ready="True", ready_transition=since, start_time=since) for i in range(count)
    )


def _external(value: float) -> core.ExternalReading:
    return core.ExternalReading((round(value * 1000),), NOW)


@pytest.mark.parametrize(
    ("example", "inputs", "metrics", "current", "proposal"),
    [
        pytest.param("drain-time.yaml", (1200, 40), (None,), 4, 2, id="the drain-time example's arithmetic"),
        pytest.param("formula.yaml", (12000, 4), (), 4, 24, id="the formula example: 3000 lag per consumer"),
    ],
)
def test_the_example_decides_as_its_comment_says(
    example: str, inputs: tuple[float, ...], metrics: tuple[None, ...], current: int, proposal: int
) -> None:
    (document,) = [
        d for d in load_spec_file(str(ROOT / "config" / "examples" / example), scale_to_zero=False).documents
    ]
    assert document.autoscaler is not None
    spec = document.autoscaler.spec
    decision = decide(
        spec=spec,
        scale=core.Scale(current, current, "app=x"),
        pods=_pods(current),
        metrics=[core.MetricFailure("not read in this test") for _ in metrics],
        state=core.BehaviorState(recommendations=()),
        settings=core.Settings(),
        now=NOW,
        inputs=tuple(_external(v) for v in inputs),
    )
    assert [e.proposed_replicas for e in decision.extra_metrics] == [proposal]
