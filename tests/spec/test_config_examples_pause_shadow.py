"""The pausing and shadow-mode examples in config/examples: `autoscaler check` accepts them as new objects, so
does the CRD schema, and they say what they show (a pause, a shadow comparison)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autoscaler.core.pause import Pause
from autoscaler.spec.files import load_spec_file
from tests.spec.crd_schema import crd_problems

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"


@pytest.mark.parametrize("name", ["paused.yaml", "shadow.yaml"])
def test_check_and_the_crd_accept_the_example(name: str) -> None:
    path = EXAMPLES / name
    done = subprocess.run(
        [sys.executable, "-m", "autoscaler", "check", "--new", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for doc in yaml.safe_load_all(path.read_text()):
        assert crd_problems(doc) == []


def test_the_examples_show_their_feature() -> None:
    (paused,) = load_spec_file(str(EXAMPLES / "paused.yaml"), scale_to_zero=False, stored=False).autoscalers
    assert paused.pause == Pause("PrometheusAutoscaler default/checkout", 2)
    (shadow,) = load_spec_file(str(EXAMPLES / "shadow.yaml"), scale_to_zero=False, stored=False).autoscalers
    assert shadow.model.mode == "shadow" and shadow.model.shadow is not None
    assert shadow.model.shadow.scaled_object == "orders"
