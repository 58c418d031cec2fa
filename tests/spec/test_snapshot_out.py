"""Snapshots written from core values (the flight recorder's) read back into the same values and decision.

The property: for any accepted spec and any inputs the daemon can hold, `load_snapshot(snapshot_json(...))`
gives back the inputs, and replaying the snapshot makes the decision `decide` makes on the inputs directly.
The tables pin the shape of each metric type's entry, the failures, and what the format cannot hold.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from autoscaler.core import types as core
from autoscaler.core.decision import decide
from autoscaler.replay import replay_data, replay_file
from autoscaler.spec.errors import SpecError
from autoscaler.spec.hpa import AutoscalerSpec, to_core
from autoscaler.spec.render import decision
from autoscaler.spec.snapshot import Snapshot, load_snapshot
from autoscaler.spec.snapshot_out import DecisionInputs, snapshot_json
from autoscaler.spec.validation import load_spec
from tests.spec.strategies import MAX_INT32, NOW, counts, milli_values, specs

# fold=0: hypothesis also draws fold=1, which compares equal but prints differently (decisions are compared by
# repr below).
times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)).map(
    lambda t: t.replace(fold=0)
) | st.just(NOW)
nows = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(8999, 1, 1), timezones=st.just(UTC)).map(
    lambda t: t.replace(fold=0)
)
requests = st.dictionaries(st.sampled_from(["cpu", "memory", "example.com/gpu"]), milli_values, max_size=3)
containers = st.builds(core.Container, st.sampled_from(["app", "side", "log"]), requests, st.booleans())
label_maps = st.dictionaries(st.sampled_from(["app", "tier", "example.com/x"]), st.sampled_from(["web", "", "a.b"]))


@st.composite
def pods(draw: st.DrawFn) -> tuple[core.Pod, ...]:
    """Pods as a pod cache holds them: unique names, a Ready transition only with a Ready condition."""
    names = draw(st.lists(st.sampled_from([f"web-{i}" for i in range(8)]), unique=True, max_size=6))
    out = []
    for name in names:
        ready = draw(st.sampled_from(["True", "False", "Unknown", None]))
        out.append(
            core.Pod(
                name=name,
                phase=draw(st.sampled_from(["Running", "Pending", "Succeeded", "Failed", "Unknown", ""])),
                labels=draw(label_maps),
                ready=ready,
                ready_transition=draw(st.none() | times) if ready is not None else None,
                start_time=draw(st.none() | times),
                deleted=draw(st.booleans()),
                containers=tuple(draw(st.lists(containers, max_size=2))),
                init_containers=tuple(draw(st.lists(containers, max_size=1))),
                pod_requests=draw(requests),
                namespace=draw(st.sampled_from(["shop", ""])),
            )
        )
    return tuple(out)


windows = st.sampled_from([0.0, 15.0, 30.0, 60.0, 90.5, 1e6])


def reading(metric: core.MetricSpec, pod_names: list[str], draw: st.DrawFn) -> core.MetricInput:
    """A reading of the metric's type (or a failure), with the timestamps and windows a source gives."""
    if draw(st.integers(0, 6)) == 0:
        return core.MetricFailure(draw(st.sampled_from(["no data", "Prometheus: 503 from http://p:9090", "é ☃"])))
    names = [name for name in pod_names if draw(st.booleans())] + draw(
        st.lists(st.sampled_from(["gone-1"]), max_size=1)
    )
    match metric.type:
        case core.MetricSourceType.RESOURCE | core.MetricSourceType.CONTAINER_RESOURCE:
            return core.ResourceReading(
                tuple(
                    core.PodUsage(
                        name,
                        draw(times),
                        draw(windows),
                        tuple(
                            core.ContainerUsage(c, {"cpu": draw(milli_values), "memory": draw(milli_values)})
                            for c in draw(st.lists(st.sampled_from(["app", "side"]), unique=True, max_size=2))
                        ),
                    )
                    for name in names
                )
            )
        case core.MetricSourceType.PODS:
            return core.PodsReading(
                tuple(
                    core.PodValue(n, draw(milli_values), draw(times), float(draw(st.integers(0, 600)))) for n in names
                )
            )
        case core.MetricSourceType.OBJECT:
            return core.ObjectReading(draw(milli_values), draw(times))
    return core.ExternalReading(tuple(draw(st.lists(milli_values, min_size=1, max_size=3))), draw(times))


core_settings = st.builds(
    core.Settings,
    tolerance=st.sampled_from([0.0, 0.1, 0.05, 1 / 3, float(MAX_INT32)]),
    cpu_initialization_period_seconds=st.sampled_from([0.0, 300.0, 0.5, 9223372036.0]),
    initial_readiness_delay_seconds=st.sampled_from([0.0, 30.0, 12.25]),
    downscale_stabilization_window_seconds=st.sampled_from([0.0, 300.0, 3600.0, 0.001]),
    scale_up_limit_factor=st.sampled_from([2.0, 0.5, 1000.0]),
    scale_up_limit_minimum=st.sampled_from([4.0, 0.0, 1.5]),
    configurable_tolerance=st.booleans(),
    hpa_scale_to_zero=st.booleans(),
)
events = st.builds(core.ScaleEvent, st.integers(1, MAX_INT32), times, st.booleans())
health = st.builds(
    core.MetricHealth,
    st.sampled_from(["External||||queue||", "Pods||||inflight||", "é ☃"]),
    st.integers(0, 1000),
    st.none() | milli_values,
    st.none() | times,
).filter(lambda h: (h.last_good is None) == (h.last_good_time is None))
states = st.builds(
    core.BehaviorState,
    st.none() | st.lists(st.builds(core.Recommendation, st.integers(0, MAX_INT32), times), max_size=4).map(tuple),
    st.lists(events, max_size=3).map(tuple),
    st.lists(events, max_size=3).map(tuple),
    st.lists(health, max_size=3).map(tuple),
    st.none() | times,
)
conditions = st.lists(
    st.builds(
        core.Condition,
        st.sampled_from(["AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero"]),
        st.sampled_from(["True", "False", "Unknown"]),
        st.sampled_from(["", "ReadyForNewScale", "ValidMetricFound"]),
        st.sampled_from(["", "the HPA was able to successfully calculate a replica count"]),
        st.none() | times,
    ),
    max_size=4,
).map(tuple)
scales = st.builds(core.Scale, counts, counts, st.sampled_from(["app=web", "", "app in (a,b),!x", "=="])) | st.builds(
    core.ScaleFailure, st.sampled_from(['deployments.apps "web" not found', "the server is slow"])
)
extensions = st.fixed_dictionaries(
    {},
    optional={
        "syncPeriodSeconds": st.sampled_from([1, 15, 3600]),
        "dryRun": st.booleans(),
        "missingPods": st.sampled_from(["Rebalance", "Hold"]),
        "scaleToZero": st.sampled_from([{}, {"cooldownSeconds": 0}, {"cooldownSeconds": 300, "idleReplicas": 1}]),
        "fallback": st.sampled_from(
            [
                {},
                {"action": "lastKnownGood", "stalenessSeconds": 60, "failureThreshold": 1},
                {"action": "replicas", "replicas": 1, "failureThreshold": 2},
                {"action": "scaleUpOnly", "replicas": 1},
            ]
        ),
    },
)


def _inputs(snap: Snapshot) -> dict[str, Any]:
    return {
        "spec": snap.spec,
        "scale": snap.scale,
        "pods": snap.pods,
        "metrics": snap.metrics,
        "state": snap.state,
        "settings": snap.settings,
        "now": snap.now,
        "conditions": snap.conditions,
        "last_scale_time": snap.last_scale_time,
        "previous_desired_replicas": snap.previous_desired_replicas,
    }


def _round_trip(name: str, namespace: str, spec_model: AutoscalerSpec, **inputs: Any) -> Snapshot:
    """Write the snapshot, through JSON text as the recorder stores it, and read it back."""
    written = snapshot_json(name=name, namespace=namespace, spec_model=spec_model, **inputs)
    text = json.dumps(written, allow_nan=False, sort_keys=True)
    return load_snapshot(json.loads(text))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(raw=specs, extra=extensions, data=st.data())
def test_a_written_snapshot_reads_back_as_its_inputs_and_replays_the_same_decision(
    raw: dict[str, Any], extra: dict[str, Any], data: st.DataObject
) -> None:
    draw = data.draw
    settings_ = draw(core_settings, label="settings")
    try:
        spec_model = load_spec({**raw, **extra}, scale_to_zero=settings_.hpa_scale_to_zero)
    except SpecError:
        assume(False)
        return
    spec = to_core(spec_model)
    pod_list = draw(pods(), label="pods")
    inputs: dict[str, Any] = {
        "scale": draw(scales, label="scale"),
        "pods": pod_list,
        "metrics": tuple(reading(m, [p.name for p in pod_list], draw) for m in spec.metrics),
        "state": draw(states, label="state"),
        "settings": settings_,
        "now": draw(nows, label="now"),
        "conditions": draw(conditions, label="conditions"),
        "last_scale_time": draw(st.none() | times, label="lastScaleTime"),
        "previous_desired_replicas": draw(st.none() | counts, label="desiredReplicas"),
    }

    snap = _round_trip("web", "shop", spec_model, **inputs)

    assert (snap.name, snap.namespace) == ("web", "shop")
    assert _inputs(snap) == {"spec": spec, **inputs}
    direct = decide(spec=spec, **inputs)
    replayed = decide(**_inputs(snap))
    assert repr(replayed) == repr(direct)  # repr: a NaN usage ratio equals itself there
    rendered = decision(direct, now=inputs["now"], name="web", namespace="shop", source="")
    eager = snapshot_json(name="web", namespace="shop", spec_model=spec_model, **inputs)
    assert replay_data(eager) == rendered
    # What the flight recorder keeps instead: the inputs by reference, rendered when read, to the same JSON.
    lazy = DecisionInputs(name="web", namespace="shop", spec_model=spec_model, **inputs)
    assert json.dumps(lazy.json()) == json.dumps(eager)


# --- Tables --------------------------------------------------------------------------------------------

T0 = datetime(2026, 11, 21, 11, 59, 30, 250000, tzinfo=UTC)
SPEC = {
    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
    "minReplicas": 1,
    "maxReplicas": 10,
}
POD = core.Pod(
    "web-1",
    "Running",
    labels={"tier": "front", "app": "web"},
    ready="True",
    ready_transition=T0,
    start_time=T0,
    containers=(core.Container("app", {"memory": 2**30 * 1000, "cpu": 250}),),
    namespace="shop",
)


def metric(kind: str, target: dict[str, Any]) -> dict[str, Any]:
    member = {
        "Resource": {"name": "cpu"},
        "ContainerResource": {"name": "cpu", "container": "app"},
        "Pods": {"metric": {"name": "rps"}},
        "Object": {"describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"}, "metric": {"name": "q"}},
        "External": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}}},
    }[kind]
    name = kind[0].lower() + kind[1:]
    return {"type": kind, name: {**member, "target": target}}


UTIL = {"type": "Utilization", "averageUtilization": 60}
AVERAGE = {"type": "AverageValue", "averageValue": "500m"}
VALUE = {"type": "Value", "value": "10"}

# fmt: off
ENTRIES = [
    pytest.param(metric("Resource", UTIL),
                 core.ResourceReading((core.PodUsage("web-1", T0, 30.0, (core.ContainerUsage("app", {"cpu": 150}),)),)),
                 {"kind": "PodMetricsList", "items": [{"metadata": {"name": "web-1"},
                  "timestamp": "2026-11-21T11:59:30.25Z", "window": 30.0,
                  "containers": [{"name": "app", "usage": {"cpu": "150m"}}]}]},
                 id="Resource: a PodMetricsList"),
    pytest.param(metric("ContainerResource", AVERAGE),
                 core.ResourceReading((core.PodUsage("web-1", NOW, 60.0, (core.ContainerUsage("app", {"cpu": 2000}),
                                                                          core.ContainerUsage("side", {"cpu": 1}))),)),
                 {"kind": "PodMetricsList", "items": [{"metadata": {"name": "web-1"},
                  "timestamp": "2026-11-21T12:00:00Z", "window": 60.0,
                  "containers": [{"name": "app", "usage": {"cpu": "2"}}, {"name": "side", "usage": {"cpu": "1m"}}]}]},
                 id="ContainerResource: every container, the core picks the named one"),
    pytest.param(metric("Pods", AVERAGE), core.PodsReading((core.PodValue("web-1", 1500, T0, 60.0),)),
                 {"kind": "MetricValueList", "items": [{"describedObject": {"kind": "Pod", "name": "web-1"},
                  "timestamp": "2026-11-21T11:59:30.25Z", "windowSeconds": 60, "value": "1500m"}]},
                 id="Pods: a MetricValueList"),
    pytest.param(metric("Object", VALUE), core.ObjectReading(3_000_000, T0),
                 {"kind": "MetricValue", "timestamp": "2026-11-21T11:59:30.25Z", "value": "3k"},
                 id="Object: one MetricValue"),
    pytest.param(metric("External", AVERAGE), core.ExternalReading((7000, -2), T0),
                 {"kind": "ExternalMetricValueList",
                  "items": [{"timestamp": "2026-11-21T11:59:30.25Z", "value": "7"},
                            {"timestamp": "2026-11-21T11:59:30.25Z", "value": "-2m"}]},
                 id="External: every value, negative ones too"),
    pytest.param(metric("External", VALUE), core.MetricFailure("Prometheus: no data for queue{q=\"jobs\"}"),
                 {"error": "Prometheus: no data for queue{q=\"jobs\"}"}, id="a failed metric"),
    pytest.param(metric("Pods", AVERAGE), core.PodsReading(()), {"kind": "MetricValueList", "items": []},
                 id="Pods: no values (the HPA's no-metrics error)"),
]
# fmt: on


def _write(spec: dict[str, Any], *, readings: tuple[core.MetricInput, ...], **overrides: Any) -> dict[str, Any]:
    inputs: dict[str, Any] = {
        "name": "web",
        "namespace": "shop",
        "spec_model": load_spec(spec, scale_to_zero=False),
        "scale": core.Scale(3, 3, "app=web"),
        "pods": (POD,),
        "metrics": readings,
        "state": core.BehaviorState(),
        "settings": core.Settings(),
        "now": NOW,
        **overrides,
    }
    return snapshot_json(**inputs)


@pytest.mark.parametrize(("spec_metric", "entry", "expected"), ENTRIES)
def test_each_metric_type_is_written_as_its_metrics_api_answer(
    spec_metric: dict[str, Any], entry: core.MetricInput, expected: dict[str, Any]
) -> None:
    spec = {**SPEC, "metrics": [spec_metric]}
    written = _write(spec, readings=(entry,))
    assert written["metrics"] == [expected]
    snap = load_snapshot(written)
    assert snap.metrics == (entry,)
    direct = decide(
        spec=to_core(load_spec(spec, scale_to_zero=False)),
        scale=core.Scale(3, 3, "app=web"),
        pods=(POD,),
        metrics=(entry,),
        state=core.BehaviorState(),
        settings=core.Settings(),
        now=NOW,
    )
    assert replay_data(written) == decision(direct, now=NOW, name="web", namespace="shop", source="")


def test_the_whole_snapshot_of_a_failed_scale_read() -> None:
    state = core.BehaviorState(
        recommendations=(core.Recommendation(4, T0),), scale_down_events=(core.ScaleEvent(2, T0, outdated=True),)
    )
    condition = core.Condition("AbleToScale", "False", "FailedGetScale", "no scale", T0)
    written = _write(
        {**SPEC, "syncPeriodSeconds": 30, "dryRun": True},
        readings=(core.MetricFailure("not read"),),
        scale=core.ScaleFailure('deployments.apps "web" not found'),
        pods=(),
        state=state,
        settings=core.Settings(tolerance=0.05, hpa_scale_to_zero=True),
        conditions=(condition,),
        last_scale_time=T0,
        previous_desired_replicas=4,
    )
    assert written == {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "DecisionSnapshot",
        "now": "2026-11-21T12:00:00Z",
        "settings": {
            "tolerance": 0.05,
            "cpuInitializationPeriodSeconds": 300.0,
            "initialReadinessDelaySeconds": 30.0,
            "downscaleStabilizationWindowSeconds": 300.0,
            "featureGates": {"HPAConfigurableTolerance": True, "HPAScaleToZero": True},
            "scaleUpLimitFactor": 2.0,
            "scaleUpLimitMinimum": 4.0,
        },
        "autoscaler": {
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {**SPEC, "syncPeriodSeconds": 30, "dryRun": True},
            "status": {
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "False",
                        "reason": "FailedGetScale",
                        "message": "no scale",
                        "lastTransitionTime": "2026-11-21T11:59:30.25Z",
                    }
                ],
                "lastScaleTime": "2026-11-21T11:59:30.25Z",
                "desiredReplicas": 4,
            },
        },
        "scale": {"error": 'deployments.apps "web" not found'},
        "pods": [],
        "metrics": [{"error": "not read"}],
        "behaviorState": {
            "recommendations": [{"replicas": 4, "timestamp": "2026-11-21T11:59:30.25Z"}],
            "scaleUpEvents": [],
            "scaleDownEvents": [{"replicaChange": 2, "timestamp": "2026-11-21T11:59:30.25Z", "outdated": True}],
        },
    }
    snap = load_snapshot(written)
    assert (snap.scale, snap.state, snap.conditions) == (
        core.ScaleFailure('deployments.apps "web" not found'),
        state,
        (condition,),
    )
    assert (snap.last_scale_time, snap.previous_desired_replicas) == (T0, 4)


def test_a_pod_as_written() -> None:
    pod = core.Pod(
        "web-2",
        "Pending",
        labels={"b": "2", "a": "1"},
        ready="False",
        deleted=True,
        containers=(core.Container("app", {"cpu": 100}),),
        init_containers=(core.Container("proxy", {"cpu": 50}, restart_policy_always=True),),
        pod_requests={"memory": 1000, "cpu": 500},
        namespace="shop",
    )
    written = _write(SPEC, readings=(core.MetricFailure("x"),), pods=(pod,))
    assert written["pods"] == [
        {
            "metadata": {
                "name": "web-2",
                "namespace": "shop",
                "labels": {"a": "1", "b": "2"},
                "deletionTimestamp": "2026-11-21T12:00:00Z",
            },
            "spec": {
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}],
                "initContainers": [
                    {"name": "proxy", "resources": {"requests": {"cpu": "50m"}}, "restartPolicy": "Always"}
                ],
                "resources": {"requests": {"cpu": "500m", "memory": "1"}},
            },
            "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]},
        }
    ]
    assert load_snapshot(written).pods == (pod,)


def test_the_spec_is_written_as_given_and_a_binding_survives() -> None:
    binding = {"query": 'sum(rate(http_requests_total{namespace="${namespace}"}[1m]))', "sumSeries": True}
    spec = {**SPEC, "metrics": [{**metric("External", AVERAGE), "prometheus": binding}]}
    written = _write(spec, readings=(core.ExternalReading((1,), NOW),))
    assert written["autoscaler"]["spec"] == spec
    assert load_snapshot(written).spec == to_core(load_spec(spec, scale_to_zero=False))


def test_equal_inputs_give_the_same_bytes() -> None:
    def dump() -> str:
        return json.dumps(_write(SPEC, readings=(core.MetricFailure("x"),)), sort_keys=False)

    assert dump() == dump()
    assert json.loads(dump())["pods"][0]["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert list(json.loads(dump())["pods"][0]["spec"]["containers"][0]["resources"]["requests"]) == ["cpu", "memory"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        pytest.param({"scale": core.ScaleFailure("")}, "scale.error", id="a scale failure without a message"),
        pytest.param({"readings": (core.MetricFailure(""),)}, "metrics[0].error", id="a metric failure without one"),
    ],
)
def test_what_the_format_cannot_hold_is_refused_naming_the_field(overrides: dict[str, Any], field: str) -> None:
    readings = overrides.pop("readings", (core.MetricFailure("x"),))
    with pytest.raises(SpecError) as caught:
        _write(SPEC, readings=readings, **overrides)
    assert caught.value.path == field


@pytest.mark.parametrize(
    ("entry", "read_back"),
    [
        pytest.param(
            core.PodsReading((core.PodValue("web-1", 1, NOW, 30.4),)),
            core.PodsReading((core.PodValue("web-1", 1, NOW, 30.0),)),
            id="a Pods window in whole seconds",
        ),
        pytest.param(
            core.ExternalReading((), T0), core.ExternalReading((), NOW), id="an empty External reading's timestamp"
        ),
    ],
)
def test_what_no_decision_reads_is_not_kept(entry: core.MetricInput, read_back: core.MetricInput) -> None:
    kind = "Pods" if isinstance(entry, core.PodsReading) else "External"
    spec = {**SPEC, "metrics": [metric(kind, AVERAGE)]}
    written = _write(spec, readings=(entry,))
    assert load_snapshot(written).metrics == (read_back,)
    direct = decide(
        spec=to_core(load_spec(spec, scale_to_zero=False)),
        scale=core.Scale(3, 3, "app=web"),
        pods=(POD,),
        metrics=(entry,),
        state=core.BehaviorState(),
        settings=core.Settings(),
        now=NOW,
    )
    assert replay_data(written) == decision(direct, now=NOW, name="web", namespace="shop", source="")


def test_a_written_file_replays_with_the_command_path(tmp_path: Path) -> None:
    path = tmp_path / "shop_web_20261121T120000Z.json"
    written = _write({**SPEC, "metrics": [metric("Object", VALUE)]}, readings=(core.ObjectReading(40_000, NOW),))
    path.write_text(json.dumps(written, sort_keys=True, indent=2))
    result = replay_file(str(path))
    # An Object Value target: ceil(40 / 10 × 1 ready pod) = 4.
    assert (result["currentReplicas"], result["desiredReplicas"], result["rescale"]) == (3, 4, True)


@pytest.mark.parametrize(
    ("overrides", "written_fields", "read_back"),
    [
        pytest.param({}, {}, (False, None), id="neither: no field"),
        pytest.param({"dry_run": True}, {"dryRun": True}, (True, None), id="dry-run"),
        pytest.param(
            {"scale_write_error": "the server is down"},
            {"scaleWriteError": "the server is down"},
            (False, "the server is down"),
            id="a failed scale write",
        ),
    ],
)
def test_dry_run_and_a_scale_write_error_are_written_when_they_apply(
    overrides: dict[str, Any], written_fields: dict[str, Any], read_back: tuple[bool, str | None]
) -> None:
    written = _write(SPEC, readings=(ENTRIES[0].values[1],), **overrides)
    assert {k: written[k] for k in ("dryRun", "scaleWriteError") if k in written} == written_fields
    snap = load_snapshot(json.loads(json.dumps(written)))
    assert (snap.dry_run, snap.scale_write_error) == read_back
