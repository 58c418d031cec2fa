"""A spec's own pause annotations and its shadow-mode fields, through the loader the daemon and `check` share."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.pause import PAUSED, PAUSED_REPLICAS, Pause
from autoscaler.spec.errors import SpecError
from autoscaler.spec.objects import load_autoscaler


def obj(annotations: Any = None, *, kind: str = "PrometheusAutoscaler", **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "worker", "namespace": "shop"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": "autoscaler.dev/v1alpha1" if kind == "PrometheusAutoscaler" else "autoscaling/v2",
        "kind": kind,
        "metadata": meta,
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
            "maxReplicas": 5,
            **spec,
        },
    }


SOURCE = "PrometheusAutoscaler shop/worker"


@pytest.mark.parametrize(
    ("annotations", "pause"),
    [
        pytest.param(None, None, id="no annotations"),
        pytest.param({"team": "payments"}, None, id="others"),
        pytest.param({PAUSED: "true"}, Pause(SOURCE), id="paused"),
        pytest.param({PAUSED_REPLICAS: "2"}, Pause(SOURCE, 2), id="paused at 2"),
    ],
)
def test_the_pause_a_spec_asks_for(annotations: dict[str, str] | None, pause: Pause | None) -> None:
    assert load_autoscaler(obj(annotations), scale_to_zero=False).pause == pause


@pytest.mark.parametrize(
    ("annotations", "problems"),
    [
        pytest.param(
            {PAUSED: "on"},
            [(f"metadata.annotations.{PAUSED}", f'annotation {PAUSED}: "on" is not "true" or "false"')],
            id="paused on",
        ),
        pytest.param(
            {PAUSED: "1", PAUSED_REPLICAS: "x"},
            [
                (f"metadata.annotations.{PAUSED}", f'annotation {PAUSED}: "1" is not "true" or "false"'),
                (
                    f"metadata.annotations.{PAUSED_REPLICAS}",
                    f'annotation {PAUSED_REPLICAS}: "x" is not a replica count (0 to 2147483647)',
                ),
            ],
            id="both bad, both named",
        ),
        pytest.param(
            {PAUSED: "false", PAUSED_REPLICAS: "3"},
            [(f"metadata.annotations.{PAUSED}", f'annotation {PAUSED}: "false" contradicts {PAUSED_REPLICAS}: "3"')],
            id="a contradiction",
        ),
        pytest.param(
            {PAUSED: True},
            [(f"metadata.annotations.{PAUSED}", "Input should be a valid string, not true")],
            id="an unquoted YAML boolean",
        ),
    ],
)
def test_a_bad_annotation_is_a_problem_naming_it(annotations: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    with pytest.raises(SpecError) as raised:
        load_autoscaler(obj(annotations), scale_to_zero=False)
    assert raised.value.problems == problems


@pytest.mark.parametrize("field", ["mode", "shadow"])
def test_an_hpa_manifest_has_no_shadow_mode(field: str) -> None:
    value = "shadow" if field == "mode" else {"horizontalPodAutoscaler": "x"}
    with pytest.raises(SpecError) as raised:
        load_autoscaler(obj(kind="HorizontalPodAutoscaler", **{field: value}), scale_to_zero=False)
    assert f"spec.{field}" in [path for path, _ in raised.value.problems]
