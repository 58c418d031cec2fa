"""`Autoscaler` keeps no pydantic model: `model` validates the spec's document again into the model the object
was first validated into, and the fields the daemon reads every tick are kept beside the core spec."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from autoscaler.spec import objects
from autoscaler.spec.hpa import AutoscalerSpec
from autoscaler.spec.objects import load_autoscaler
from autoscaler.spec.validation import load_spec


def _object(kind: str = "PrometheusAutoscaler", **spec: Any) -> dict[str, Any]:
    api_version = "autoscaler.dev/v1alpha1" if kind == "PrometheusAutoscaler" else "autoscaling/v2"
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, **spec},
    }


RPS = {
    "type": "Pods",
    "pods": {"metric": {"name": "http_requests"}, "target": {"type": "AverageValue", "averageValue": "500m"}},
    "prometheus": {"template": "rps"},
}
QUEUE_DEPTH = {
    "type": "External",
    "external": {"metric": {"name": "queue_depth"}, "target": {"type": "AverageValue", "averageValue": "30"}},
    "prometheus": {"query": "sum(queue_depth)"},
}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}
QUEUE = {
    "backlog": {"prometheus": {"query": "sum(queue_depth)"}},
    "processingRate": {"prometheus": {"query": "sum(rate(jobs_total[1m]))"}},
    "targetSeconds": 60,
}


def _dump(model: AutoscalerSpec) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.parametrize(
    ("obj", "scale_to_zero", "stored"),
    [
        pytest.param(_object(maxReplicas=10, metrics=[CPU, RPS]), False, True, id="metrics-and-a-binding"),
        pytest.param(
            _object(minReplicas=0, maxReplicas=10, metrics=[QUEUE_DEPTH]), False, True, id="implicit-scale-to-zero"
        ),
        pytest.param(_object(minReplicas=0, maxReplicas=10, metrics=[QUEUE_DEPTH]), True, False, id="a-new-object"),
        pytest.param(
            _object(
                "HorizontalPodAutoscaler",
                minReplicas=0,
                maxReplicas=4,
                metrics=[{k: v for k, v in QUEUE_DEPTH.items() if k != "prometheus"}],
            ),
            True,
            True,
            id="hpa-gate-on",
        ),
        pytest.param(
            _object(maxReplicas=10, metrics=[RPS], drainTime=QUEUE, mode="predictive"), False, True, id="queue"
        ),
    ],
)
def test_the_model_made_again_is_the_one_first_validated(
    obj: dict[str, Any], scale_to_zero: bool, stored: bool
) -> None:
    autoscaler = load_autoscaler(obj, scale_to_zero=scale_to_zero, stored=stored)
    assert autoscaler.kept_model is None and autoscaler.document  # nothing but the document is kept
    first = load_spec(obj["spec"], scale_to_zero=scale_to_zero, stored=stored)
    made = autoscaler.model
    assert made is not autoscaler.model  # made on each read, never kept
    if autoscaler.implicit_scale_to_zero:
        assert made.scale_to_zero is not None and first.scale_to_zero is None
        assert _dump(made) == {**_dump(first), "scaleToZero": {}}
    else:
        assert made == first and _dump(made) == _dump(first)
    assert autoscaler.load_model() == made


def test_the_fields_the_daemon_reads_are_kept_and_bindings_shared() -> None:
    one = load_autoscaler(
        _object(maxReplicas=10, metrics=[CPU, RPS], drainTime=QUEUE, dryRun=True), scale_to_zero=False
    )
    two = load_autoscaler(_object(maxReplicas=5, metrics=[RPS], syncPeriodSeconds=30), scale_to_zero=False)
    model = one.model
    assert one.metric_bindings == tuple(m.prometheus for m in model.metrics or ())
    assert one.metric_bindings[0] is None and one.metric_bindings[1] is not None
    assert one.metric_bindings[1].template == "rps"
    assert one.metric_bindings[1] is two.metric_bindings[0]  # one binding object for the same binding
    assert [b.query if b else None for b in one.input_bindings] == ["sum(queue_depth)", "sum(rate(jobs_total[1m]))"]
    assert (one.dry_run, one.sync_period_seconds, one.mode) == (True, None, "hpa")
    assert (two.dry_run, two.sync_period_seconds) == (False, 30)


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"maxReplicas": float("nan")}, id="nan"),
        pytest.param({1: "a"}, id="a-key-json-makes-a-string"),
        pytest.param({"when": dt.date(2026, 1, 1)}, id="a-yaml-date"),
    ],
)
def test_a_document_json_cannot_hold_has_no_text(document: dict[Any, Any]) -> None:
    assert objects._document(document) is None


def test_a_spec_whose_document_has_no_text_keeps_its_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(objects, "_document", lambda data: None)
    autoscaler = load_autoscaler(_object(maxReplicas=10, metrics=[RPS]), scale_to_zero=False)
    assert autoscaler.document == "" and autoscaler.kept_model is not None
    assert autoscaler.model is autoscaler.kept_model
