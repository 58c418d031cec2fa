"""The scaleToZero, activationThreshold and fallback fields from YAML to the core (spec/zero.py)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.core.fallback import Fallback, FallbackAction
from autoscaler.core.zero import ScaleToZero
from autoscaler.spec.errors import SpecError
from autoscaler.spec.objects import load_autoscaler
from autoscaler.spec.snapshot_out import snapshot_json

WORKER: dict[str, Any] = {
    "apiVersion": "autoscaler.dev/v1alpha1",
    "kind": "PrometheusAutoscaler",
    "metadata": {"name": "worker", "namespace": "jobs"},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
        "minReplicas": 0,
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "External",
                "external": {
                    "metric": {"name": "queue_depth"},
                    "target": {"type": "AverageValue", "averageValue": "30"},
                },
            }
        ],
    },
}


def _worker(**spec: Any) -> dict[str, Any]:
    obj = copy.deepcopy(WORKER)
    obj["spec"].update(spec)
    return obj


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(_worker(), ScaleToZero(300, 0, (None,)), id="a PrometheusAutoscaler's minReplicas 0 opts in"),
        pytest.param(
            {**_worker(), "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"},
            None,
            id="an HPA's minReplicas 0 keeps the gate's rules",
        ),
        pytest.param(_worker(minReplicas=1), None, id="minReplicas 1: the HPA's path"),
        pytest.param(
            _worker(scaleToZero={"cooldownSeconds": 60, "idleReplicas": 1}),
            ScaleToZero(60, 1, (None,)),
            id="an explicit block",
        ),
    ],
)
def test_who_scales_to_zero(obj: dict[str, Any], expected: ScaleToZero | None) -> None:
    assert load_autoscaler(obj, scale_to_zero=False).spec.scale_to_zero == expected


def test_an_activation_threshold_is_a_quantity_in_milli_units() -> None:
    obj = _worker()
    obj["spec"]["metrics"][0]["activationThreshold"] = "2.5"
    spec = load_autoscaler(obj, scale_to_zero=False).spec
    assert spec.scale_to_zero is not None and spec.scale_to_zero.activation_thresholds == (2500,)


def test_an_hpa_has_neither_extension() -> None:
    obj = {**_worker(fallback={}), "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"}
    obj["spec"]["metrics"][0]["activationThreshold"] = "1"
    with pytest.raises(SpecError) as err:
        load_autoscaler(obj, scale_to_zero=False)
    fields = [field for field, _ in err.value.problems]
    assert set(fields) == {"spec.metrics[0].activationThreshold", "spec.fallback"}


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        pytest.param({}, Fallback(3, FallbackAction.HOLD, None, 600), id="the defaults: hold after 3 failures"),
        pytest.param(
            {"action": "lastKnownGood", "stalenessSeconds": 120},
            Fallback(3, FallbackAction.LAST_KNOWN_GOOD, None, 120),
            id="lastKnownGood with a budget",
        ),
        pytest.param(
            {"failureThreshold": 1, "action": "replicas", "replicas": 4},
            Fallback(1, FallbackAction.REPLICAS, 4, 600),
            id="a fixed count",
        ),
    ],
)
def test_fallback_to_core(block: dict[str, Any], expected: Fallback) -> None:
    assert load_autoscaler(_worker(fallback=block), scale_to_zero=False).spec.fallback == expected


def test_the_implicit_opt_in_is_written_into_snapshots() -> None:
    """Replay reads a snapshot's spec without its kind: the filled-in block travels with it."""
    from datetime import UTC, datetime

    from autoscaler.core.types import BehaviorState, Scale, Settings
    from autoscaler.spec.snapshot import load_snapshot

    autoscaler = load_autoscaler(_worker(), scale_to_zero=False)
    document = snapshot_json(
        name="worker",
        namespace="jobs",
        spec_model=autoscaler.model,
        scale=Scale(1, 1, "app=worker"),
        pods=(),
        metrics=(),
        state=BehaviorState(),
        settings=Settings(),
        now=datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert document["autoscaler"]["spec"]["scaleToZero"] == {}  # the defaults
    document["metrics"] = [
        {"kind": "ExternalMetricValueList", "items": [{"value": "1", "timestamp": "2026-01-01T00:00:00Z"}]}
    ]
    assert load_snapshot(document).spec.scale_to_zero == autoscaler.spec.scale_to_zero


EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"


@pytest.mark.parametrize("args", [pytest.param([], id="as stored"), pytest.param(["--new"], id="as new")])
def test_the_examples_are_accepted_by_check(args: list[str]) -> None:
    files = [str(EXAMPLES / "scale-to-zero.yaml"), str(EXAMPLES / "fallback.yaml")]
    proc = subprocess.run(
        [sys.executable, "-m", "autoscaler", "check", *args, *files], capture_output=True, text=True, check=False
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "2 of 2 autoscaler(s) valid\n", "")


def test_the_examples_set_what_they_show() -> None:
    zero = load_autoscaler(yaml.safe_load((EXAMPLES / "scale-to-zero.yaml").read_text()), scale_to_zero=False)
    assert zero.spec.scale_to_zero == ScaleToZero(300, 0, (5000,))
    fallback = load_autoscaler(yaml.safe_load((EXAMPLES / "fallback.yaml").read_text()), scale_to_zero=False)
    assert fallback.spec.fallback == Fallback(3, FallbackAction.SCALE_UP_ONLY, 6, 600)


def test_a_snapshot_taken_mid_outage_replays_the_same_decision() -> None:
    """A queue worker with scaleToZero and lastKnownGood, 2 minutes into an outage: its snapshot, read back
    through JSON, decides exactly as the story's next tick."""
    import json

    from autoscaler.core.decision import decide
    from autoscaler.core.types import ExternalReading, MetricFailure, Scale, Settings
    from autoscaler.spec.snapshot import load_snapshot
    from tests.core.story import Story

    obj = _worker(
        scaleToZero={"cooldownSeconds": 300},
        fallback={"failureThreshold": 2, "action": "lastKnownGood", "stalenessSeconds": 600},
    )
    autoscaler = load_autoscaler(obj, scale_to_zero=False)
    story = Story(autoscaler.spec, 2)
    story.ticks(4, ExternalReading((90_000,), story.now))
    down = MetricFailure("Prometheus unreachable")
    story.ticks(8, down)
    assert story.state.metric_health[0].failures == 8
    inputs: dict[str, Any] = {
        "scale": Scale(story.replicas, story.replicas, "app=worker"),
        "pods": story.pods(),
        "metrics": (down,),
        "state": story.state,
        "settings": Settings(),
        "now": story.now,
        "conditions": story.conditions,
    }
    written = snapshot_json(name="worker", namespace="jobs", spec_model=autoscaler.model, **inputs)
    snap = load_snapshot(json.loads(json.dumps(written)))
    replayed = decide(
        spec=snap.spec,
        scale=snap.scale,
        pods=snap.pods,
        metrics=snap.metrics,
        state=snap.state,
        settings=snap.settings,
        now=snap.now,
        conditions=snap.conditions,
    )
    direct = story.tick(down)
    assert snap.state == inputs["state"]
    assert replayed == direct
    assert "last good value 90" in direct.summary
