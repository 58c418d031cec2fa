"""Readings made from columns (what the metric sources make: no object per pod) are the readings made from
items: equal, printed, pickled and read by the calculator alike; and immutable."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.calculator import pods_pod_metrics, resource_pod_metrics
from autoscaler.core.errors import MetricComputationError
from autoscaler.core.types import ContainerUsage, PodsReading, PodUsage, PodValue, ResourceReading, Settings

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
INT64 = 2**63 - 1

_pod = st.tuples(
    st.sampled_from(["app", "side", ""]),
    st.sampled_from([T0, T0 - timedelta(seconds=15)]),
    st.sampled_from([30.0, 60.0]),
    st.one_of(st.integers(min_value=-INT64 - 1, max_value=INT64), st.integers(min_value=2**63, max_value=2**70)),
)


def _resource(resource: str, pods: list[tuple[str, datetime, float, int]]) -> tuple[ResourceReading, ResourceReading]:
    """The same reading made from columns and from items."""
    names = [f"p{i}" for i in range(len(pods))]
    columns = ResourceReading.from_columns(
        resource=resource,
        names=names,
        containers=[c for c, _, _, _ in pods],
        stamps=[t for _, t, _, _ in pods],
        windows=[w for _, _, w, _ in pods],
        values=[v for _, _, _, v in pods],
    )
    items = ResourceReading(
        pods=tuple(
            PodUsage(name, t, w, (ContainerUsage(c, {resource: v}),))
            for name, (c, t, w, v) in zip(names, pods, strict=True)
        )
    )
    return columns, items


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["cpu", "memory"]), st.lists(_pod, max_size=6), st.sampled_from(["", "app", "side", "none"]))
def test_resource_columns_read_as_their_items(
    resource: str, pods: list[tuple[str, datetime, float, int]], container: str
) -> None:
    columns, items = _resource(resource, pods)
    assert columns == items and items == columns
    assert repr(columns) == repr(items)
    assert pickle.loads(pickle.dumps(columns)) == items
    for asked in ("cpu", "memory"):
        if not pods:
            for reading in (columns, items):
                with pytest.raises(MetricComputationError, match="no metrics returned from resource metrics API"):
                    resource_pod_metrics(reading, asked, container)
        else:
            assert resource_pod_metrics(columns, asked, container) == resource_pod_metrics(items, asked, container)


@settings(max_examples=200, deadline=None)
@given(st.lists(_pod, max_size=6))
def test_pods_columns_read_as_their_items(pods: list[tuple[str, datetime, float, int]]) -> None:
    names = [f"p{i}" for i in range(len(pods))]
    columns = PodsReading.from_columns(
        names=names, stamps=[t for _, t, _, _ in pods], windows=[w for _, _, w, _ in pods], values=[v for *_, v in pods]
    )
    items = PodsReading(tuple(PodValue(n, v, t, w) for n, (_, t, w, v) in zip(names, pods, strict=True)))
    assert columns == items and hash(columns) == hash(items)
    assert repr(columns) == repr(items)
    assert pickle.loads(pickle.dumps(columns)) == items
    if pods:
        assert pods_pod_metrics(columns) == pods_pod_metrics(items)
    else:
        with pytest.raises(MetricComputationError, match="no metrics returned from custom metrics API"):
            pods_pod_metrics(columns)


def test_readings_are_immutable() -> None:
    reading = PodsReading.from_columns(names=["a"], stamps=[T0], windows=[60.0], values=[1])
    with pytest.raises(AttributeError, match="PodsReading is immutable: cannot set '_items'"):
        reading._items = ()
    with pytest.raises(AttributeError, match="ResourceReading is immutable: cannot set 'pods'"):
        ResourceReading(()).pods = ()  # type: ignore[misc]


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="reading columns differ in length: 2 names, 1 stamps, 1 windows, 1 values"):
        PodsReading.from_columns(names=["a", "b"], stamps=[T0], windows=[60.0], values=[1])
    with pytest.raises(ValueError, match="reading columns differ in length: 1 names, 2 containers"):
        ResourceReading.from_columns(
            resource="cpu", names=["a"], containers=["x", "y"], stamps=[T0], windows=[60.0], values=[1]
        )


def test_a_column_of_equal_entries_is_kept_once() -> None:
    """One query's answer gives every pod the same sample time, window and (often) container name: each is kept
    as one value, and read back as the column it was."""
    ten = [f"p{i}" for i in range(10)]
    uniform = ResourceReading.from_columns(
        resource="cpu", names=ten, containers=["app"] * 10, stamps=[T0] * 10, windows=[60.0] * 10, values=range(10)
    )
    resource, table, containers = uniform.one_container_columns() or ("", None, ())
    assert table is not None and resource == "cpu"
    assert (table._stamps, table._windows, uniform._containers) == (T0, 60.0, "app")  # one value each
    assert (table.stamps, table.windows, containers) == ((T0,) * 10, (60.0,) * 10, ("app",) * 10)
    later = T0 + timedelta(seconds=15)
    mixed = PodsReading.from_columns(names=["a", "b"], stamps=[T0, later], windows=[60.0, 60.0], values=[1, 2])
    table = mixed.columns()
    assert table is not None and table._stamps == (T0, later) and table._windows == 60.0
    assert mixed.items == (PodValue("a", 1, T0, 60.0), PodValue("b", 2, later, 60.0))


def test_the_ready_group_is_the_readings_names_column() -> None:
    """Every pod ready and measured (the common case): a metric's ready group is its reading's names column, the
    same tuple, not a copy of it (one names tuple per target instead of three: docs/performance.md)."""
    from autoscaler.core.calculator import Calculation, Tolerances, plain_metric_replicas
    from autoscaler.core.types import Pod

    names = tuple(f"p{i}" for i in range(4))
    pods = [Pod(name, "Running", ready="True", start_time=T0 - timedelta(hours=1)) for name in reversed(names)]

    def calculate(measured: tuple[str, ...]) -> Calculation:
        n = len(measured)
        reading = PodsReading.from_columns(names=measured, stamps=[T0] * n, windows=[60.0] * n, values=[500] * n)
        return plain_metric_replicas(
            current_replicas=4,
            target_usage=250,
            resource="",
            metrics=pods_pod_metrics(reading),
            pods=pods,
            tolerances=Tolerances(0.1, 0.1),
            settings=Settings(),
            now=T0,
        )

    result = calculate(names)
    assert result.replicas == 8 and result.pods is not None
    assert result.pods.ready == names and result.pods.ready is names
    result = calculate(names[:3])
    assert result.pods is not None and result.pods.ready == names[:3] and result.pods.missing == ("p3",)
