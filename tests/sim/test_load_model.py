"""The load model without servers: curves, the split over ready pods, saturation, queues, on an injected clock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from autoscaler.sim.load import (
    Container,
    CurveError,
    LoadGenerator,
    LoadModel,
    PodState,
    Series,
    Timeline,
    Workload,
    WorkloadRef,
    constant,
    parse_steps,
    pod_state,
    read_trace,
)
from autoscaler.sim.load.command import parse_workload

REF = WorkloadRef("shop", "Deployment", "web")
CPU, RPS, QUEUE = Series.CPU, Series.RPS, Series.QUEUE


def ready(name: str, limit: float | None = None, request: float | None = 0.25) -> PodState:
    return PodState(name, f"uid-{name}", running=True, ready=True, containers=(Container("app", request, limit),))


def unready(name: str) -> PodState:
    return PodState(name, f"uid-{name}", running=True, ready=False)


def pending(name: str) -> PodState:
    return PodState(name, f"uid-{name}", running=False, ready=False)


def samples(model: LoadModel) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the model's exposition, by name and sorted labels (through the text parser)."""
    from prometheus_client import CollectorRegistry, generate_latest

    class _Collect:
        def collect(self):  # type: ignore[no-untyped-def]
            return model.families()

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collect())  # type: ignore[arg-type]
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def cpu_seconds(model: LoadModel, pod: str, container: str = "app") -> float:
    key = ("container_cpu_usage_seconds_total", (("container", container), ("namespace", "shop"), ("pod", pod)))
    return samples(model)[key]


def run(workload: Workload, pods: list[PodState], seconds: float) -> LoadModel:
    model = LoadModel([workload], timeline=Timeline(0.0))
    model.observe(REF, pods, now=0.0)
    model.advance(seconds)
    return model


@pytest.mark.parametrize(
    ("demand", "pods", "options", "per_pod_cores"),
    [
        pytest.param(2.0, [ready("a"), ready("b"), ready("c"), ready("d")], {}, 0.5, id="the load splits evenly"),
        pytest.param(4.0, [ready("a", 0.5), ready("b", 0.5)], {}, 0.5, id="CPU saturates at the pod's limit"),
        pytest.param(4.0, [ready("a"), ready("b")], {"cpu_capacity": 0.75}, 0.75, id="no limit: the capacity caps"),
        pytest.param(4.0, [ready("a"), ready("b")], {"capacity": 1.0}, 1.0, id="a request capacity caps CPU too"),
        pytest.param(4.0, [ready("a"), ready("b")], {"cost": 0.1}, 0.2, id="cost: cores per unit of load"),
        pytest.param(1.0, [ready("a"), unready("b"), pending("c")], {}, 1.0, id="unready pods get no share"),
    ],
)
def test_cpu_per_ready_pod(
    demand: float, pods: list[PodState], options: dict[str, float], per_pod_cores: float
) -> None:
    model = run(Workload(REF, constant(demand), **options), pods, 10.0)  # type: ignore[arg-type]
    assert cpu_seconds(model, "a") == pytest.approx(10 * per_pod_cores)
    assert cpu_seconds(model, "a", "") == pytest.approx(10 * per_pod_cores), "the pod's cgroup: all containers"


def test_unready_pods_export_standing_counters_and_pending_pods_nothing() -> None:
    model = run(Workload(REF, constant(3.0), series=frozenset({CPU, RPS})), [ready("a"), unready("b"), pending("c")], 5)
    got = samples(model)
    assert cpu_seconds(model, "b") == 0.0
    assert got[("http_requests_total", (("namespace", "shop"), ("pod", "b")))] == 0.0
    assert not [key for key in got if ("pod", "c") in key[1]]


def test_requests_served_and_dropped_at_capacity() -> None:
    model = run(Workload(REF, constant(6.0), series=frozenset({RPS}), capacity=2.0), [ready("a"), ready("b")], 10)
    got = samples(model)
    assert got[("http_requests_total", (("namespace", "shop"), ("pod", "a")))] == pytest.approx(20)
    assert got[("http_requests_dropped_total", (("namespace", "shop"), ("pod", "a")))] == pytest.approx(10)
    assert got[("load_model_unserved_total", (("kind", "Deployment"), ("name", "web"), ("namespace", "shop")))] == (
        pytest.approx(20)
    )
    assert not [key for key in got if key[0] == "container_cpu_usage_seconds_total"], "cpu was not asked for"


def test_no_ready_pod_leaves_all_of_the_load_unserved() -> None:
    model = run(Workload(REF, constant(2.0)), [unready("a")], 10)
    unserved = samples(model)[
        ("load_model_unserved_total", (("kind", "Deployment"), ("name", "web"), ("namespace", "shop")))
    ]
    assert unserved == pytest.approx(20)


def test_containers_share_by_their_cpu_requests() -> None:
    pod = PodState("a", "u", True, True, (Container("app", 0.3, None), Container("sidecar", 0.1, None)))
    model = run(Workload(REF, constant(2.0)), [pod], 10)
    assert (cpu_seconds(model, "a"), cpu_seconds(model, "a", "sidecar")) == pytest.approx((15, 5))


def test_the_queue_grows_when_processing_is_short_and_drains_never_below_zero() -> None:
    worker = Workload(REF, constant(10.0), series=frozenset({QUEUE, CPU}), capacity=4.0, cost=0.1)
    model = LoadModel([worker], timeline=Timeline(0.0))
    model.observe(REF, [ready("a"), ready("b")], now=0.0)
    model.advance(30.0)
    assert model.queue_depth(REF) == pytest.approx(60)  # (10 - 2 x 4) x 30 s
    assert cpu_seconds(model, "a") == pytest.approx(30 * 4 * 0.1), "busy workers use CPU for what they process"
    model.observe(REF, [ready("a"), ready("b"), ready("c"), ready("d")], now=30.0)
    model.advance(40.0)
    assert model.queue_depth(REF) == pytest.approx(0)  # drains at 6/s: 60 items in 10 s
    model.advance(100.0)
    assert model.queue_depth(REF) == 0
    assert samples(model)[("queue_depth", (("namespace", "shop"), ("queue", "web")))] == 0


def test_speed_and_offset_map_wall_time_to_trace_time() -> None:
    """At speed 10 a step at trace second 100 arrives 10 real seconds in; rates stay per real second."""
    model = LoadModel([Workload(REF, parse_steps("0:1,100:3"))], timeline=Timeline(1000.0, speed=10, offset=20))
    model.observe(REF, [ready("a")], now=1000.0)
    model.advance(1008.0)
    assert cpu_seconds(model, "a") == pytest.approx(8)
    model.advance(1010.0)
    assert cpu_seconds(model, "a") == pytest.approx(8 + 6)


def test_a_trace_is_interpolated_scaled_and_held_after_its_end(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("timestamp_seconds,value\n0,10\n60,30\n120,20\n")
    trace = read_trace(path)
    assert [trace(t) for t in (-5, 0, 30, 60, 90, 120, 500)] == [10, 10, 20, 30, 25, 20, 20]
    assert trace.scaled(peak=3.0)(60) == pytest.approx(3.0)


def test_the_shared_trace_format_reads(tmp_path: Path) -> None:
    """Columns are found by name; others are ignored."""
    path = tmp_path / "t.csv"
    path.write_text("value,note,timestamp_seconds\n5,a,0\n7,b,60\n")
    assert read_trace(path)(30) == 6


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "empty", id="empty file"),
        pytest.param("time,value\n0,1\n", "no column timestamp_seconds", id="a column missing"),
        pytest.param("timestamp_seconds,value\n", "no samples", id="only the header"),
        pytest.param("timestamp_seconds,value\n0,1\n0,2\n", "line 3: time 0.0 is not after 0.0", id="time repeats"),
        pytest.param("timestamp_seconds,value\n0,x\n", "line 2", id="not a number"),
        pytest.param("timestamp_seconds,value\n0,-1\n", "values >= 0", id="negative demand"),
        pytest.param("timestamp_seconds,value\n0,nan\n", "finite", id="NaN"),
    ],
)
def test_bad_traces_are_refused_naming_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(CurveError, match=message) as err:
        read_trace(path)
    assert str(path) in str(err.value)


DEFAULTS = {"cost": 1.0, "capacity": None, "cpu_capacity": None}


def test_a_workload_flag_with_options() -> None:
    got = parse_workload(
        "shop/StatefulSet/db:cpu,queue:capacity=5,cost=0.2,queue=orders", curve=constant(1), defaults=DEFAULTS
    )
    assert (got.ref, got.series, got.capacity, got.cost, got.queue_name) == (
        WorkloadRef("shop", "StatefulSet", "db"),
        frozenset({CPU, QUEUE}),
        5.0,
        0.2,
        "orders",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("web:cpu", "expected NS/KIND/NAME", id="no namespace or kind"),
        pytest.param("shop/CronJob/x:cpu", "kind 'CronJob'", id="a kind without pods to scale"),
        pytest.param("shop/Deployment/web:gpu", "series gpu", id="unknown series"),
        pytest.param("shop/Deployment/web", r"series \(none\)", id="no series"),
        pytest.param("shop/Deployment/web:queue", "a queue needs a capacity", id="queue without capacity"),
        pytest.param("shop/Deployment/web:cpu:speed=2", "option 'speed=2'", id="unknown option"),
        pytest.param("shop/Deployment/web:cpu:cost=-1", "cost -1.0 must be", id="negative cost"),
        pytest.param("shop/Deployment/web:cpu:capacity=x", "capacity: 'x' is not a number", id="not a number"),
    ],
)
def test_bad_workload_flags_are_refused(text: str, message: str) -> None:
    with pytest.raises(CurveError, match=message):
        parse_workload(text, curve=constant(1), defaults=DEFAULTS)


def test_pods_from_the_api_server_shape() -> None:
    pod = {
        "metadata": {"name": "web-1", "uid": "u1", "deletionTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": 1}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert pod_state(pod) == PodState(
        "web-1", "u1", running=True, ready=False, containers=(Container("app", 0.25, 1.0),)
    )


def test_a_clock_injected_into_the_generator_drives_the_counters() -> None:
    """The generator reads time only from its clock: no server is needed to advance it."""
    now = [100.0]
    clock: Callable[[], float] = lambda: now[0]  # noqa: E731 - a one-line clock
    generator = LoadGenerator([Workload(REF, constant(2.0))], api_url="http://127.0.0.1:1", clock=clock)
    generator.model.observe(REF, [ready("a"), ready("b")], now=100.0)
    now[0] = 112.0
    text = generator.exposition().decode()
    values = {
        s.labels.get("container"): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == "container_cpu_usage_seconds_total" and s.labels["pod"] == "a"
    }
    assert values == {"app": pytest.approx(12.0), "": pytest.approx(12.0)}
