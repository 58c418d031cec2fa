"""Pause requests and shadow readings survive the snapshot: written, read back, replayed to the same decision."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.core import types as core
from autoscaler.core.decision import decide, dry_run
from autoscaler.core.pause import Pause
from autoscaler.core.shadow import ShadowReading
from autoscaler.replay import replay_data
from autoscaler.spec.errors import SpecError
from autoscaler.spec.render import decision
from autoscaler.spec.snapshot import load_snapshot
from autoscaler.spec.snapshot_out import DecisionInputs, snapshot_json
from autoscaler.spec.validation import load_spec

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SEEN = datetime(2026, 11, 21, 11, 59, 59, 500000, tzinfo=UTC)
SPEC = {
    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
    "minReplicas": 1,
    "maxReplicas": 10,
    "metrics": [
        {
            "type": "External",
            "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "1"}},
        }
    ],
}
SHADOW_SPEC = {**SPEC, "mode": "shadow", "shadow": {"scaledObject": "worker"}}
READING = core.ExternalReading((8000,), NOW)


def _inputs(spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": "worker",
        "namespace": "shop",
        "spec_model": load_spec(spec, scale_to_zero=False),
        "scale": core.Scale(2, 2, "app=worker"),
        "pods": (),
        "metrics": (READING,),
        "state": core.BehaviorState(recommendations=()),
        "settings": core.Settings(),
        "now": NOW,
        **extra,
    }


CASES = [
    pytest.param(SPEC, {"pause": Pause("Deployment worker")}, {"pause": {"source": "Deployment worker"}}, id="a hold"),
    pytest.param(
        SPEC,
        {"pause": Pause("PrometheusAutoscaler shop/worker", 5)},
        {"pause": {"source": "PrometheusAutoscaler shop/worker", "replicas": 5}},
        id="a paused count",
    ),
    pytest.param(
        SPEC,
        {"pause": Pause("Deployment worker", problem='Deployment worker: annotation autoscaler.dev/paused: "y"')},
        {
            "pause": {
                "source": "Deployment worker",
                "problem": 'Deployment worker: annotation autoscaler.dev/paused: "y"',
            }
        },
        id="a bad annotation",
    ),
    pytest.param(
        SHADOW_SPEC,
        {"shadow": ShadowReading("ScaledObject worker (HorizontalPodAutoscaler keda-hpa-worker)", SEEN, 3)},
        {
            "shadow": {
                "source": "ScaledObject worker (HorizontalPodAutoscaler keda-hpa-worker)",
                "observedAt": "2026-11-21T11:59:59.5Z",
                "desiredReplicas": 3,
            }
        },
        id="a shadow reading",
    ),
    pytest.param(
        SHADOW_SPEC,
        {"shadow": ShadowReading("HorizontalPodAutoscaler worker", NOW, error="not found"), "dry_run": True},
        {
            "shadow": {
                "source": "HorizontalPodAutoscaler worker",
                "observedAt": "2026-11-21T12:00:00Z",
                "error": "not found",
            }
        },
        id="a shadow reading that failed",
    ),
    pytest.param(
        SHADOW_SPEC,
        {"shadow": ShadowReading("HorizontalPodAutoscaler worker", NOW, 2), "pause": Pause("Deployment worker", 4)},
        {
            "pause": {"source": "Deployment worker", "replicas": 4},
            "shadow": {
                "source": "HorizontalPodAutoscaler worker",
                "observedAt": "2026-11-21T12:00:00Z",
                "desiredReplicas": 2,
            },
        },
        id="both",
    ),
]


@pytest.mark.parametrize(("spec", "extra", "written"), CASES)
def test_round_trip_and_replay(spec: dict[str, Any], extra: dict[str, Any], written: dict[str, Any]) -> None:
    inputs = _inputs(spec, **extra)
    snapshot = snapshot_json(**inputs)
    assert {k: snapshot[k] for k in ("pause", "shadow") if k in snapshot} == written
    snap = load_snapshot(json.loads(json.dumps(snapshot)))
    assert (snap.pause, snap.shadow) == (extra.get("pause"), extra.get("shadow"))
    direct = decide(
        spec=snap.spec,
        scale=inputs["scale"],
        pods=(),
        metrics=(READING,),
        state=inputs["state"],
        settings=inputs["settings"],
        now=NOW,
        pause=extra.get("pause"),
        shadow=extra.get("shadow"),
    )
    if extra.get("dry_run"):
        direct = dry_run(direct, state=inputs["state"], conditions=(), last_scale_time=None)
    assert replay_data(snapshot) == decision(direct, now=NOW, name="worker", namespace="shop", source="")
    assert json.dumps(DecisionInputs(**inputs).json()) == json.dumps(snapshot)


def test_replay_shows_the_pause_and_the_comparison() -> None:
    paused = replay_data(snapshot_json(**_inputs(SPEC, pause=Pause("Deployment worker", 5))))
    assert (paused["desiredReplicas"], paused["rescale"]) == (5, True)
    active = next(c for c in paused["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "ScalingPaused")
    shadow = replay_data(
        snapshot_json(**_inputs(SHADOW_SPEC, shadow=ShadowReading("HorizontalPodAutoscaler w", NOW, 3)))
    )
    assert shadow["shadow"] == {
        "desiredReplicas": 4,  # the legacy scale-up limit: 2 -> max(2 * 2, 4), where the metric proposes 8
        "theirs": 3,
        "difference": 1,
        "observedAt": "2026-11-21T12:00:00Z",
        "source": "HorizontalPodAutoscaler w",
    }


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        pytest.param({"pause": {"replicas": 2}}, "pause.source", id="a pause without its source"),
        pytest.param({"pause": {"source": "x", "replicas": -1}}, "pause.replicas", id="a negative paused count"),
        pytest.param({"pause": {"source": "x", "replicas": "2"}}, "pause.replicas", id="a count as a string"),
        pytest.param({"shadow": {"source": "x"}}, "shadow.observedAt", id="a shadow reading without its time"),
        pytest.param(
            {"shadow": {"source": "x", "observedAt": "2026-11-21T12:00:00Z", "desired": 1}},
            "shadow.desired",
            id="an unknown field",
        ),
    ],
)
def test_a_malformed_entry_is_refused_naming_its_field(entry: dict[str, Any], field: str) -> None:
    snapshot = {**snapshot_json(**_inputs(SPEC)), **entry}
    with pytest.raises(SpecError) as raised:
        load_snapshot(snapshot)
    assert field in [path for path, _ in raised.value.problems]
