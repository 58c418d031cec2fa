"""The values that cross this layer's boundary: what the daemon asks (`ReadContext`, `MetricRequest`) and
the planned query (`Query`, `Answer`). Plain frozen dataclasses, no behaviour beyond small helpers.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, cast

from autoscaler.core.types import MetricSpec, ObjectReference, Pod
from autoscaler.spec.prometheus import PrometheusBinding

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What the daemon knows about one target at one tick.

    `pods` are the pods the target's scale selector matches (the core's `Pod`s, names and labels used
    here); `selector` is the scale's `status.selector` string; `now` is the evaluation time, timezone-aware,
    read once per tick from the daemon's clock and sent to Prometheus as `time=`.
    """

    namespace: str
    pods: tuple[Pod, ...]
    selector: str
    now: datetime
    sync_period_seconds: float = 15.0  # --horizontal-pod-autoscaler-sync-period default
    target: ObjectReference | None = None
    _sorted_names: tuple[str, ...] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.now.tzinfo is None or self.now.utcoffset() is None:
            raise ValueError("ReadContext.now must be timezone-aware")
        if self.sync_period_seconds <= 0:
            raise ValueError("ReadContext.sync_period_seconds must be positive")

    @property
    def pod_names(self) -> frozenset[str]:
        """The names of the target's pods."""
        return frozenset(pod.name for pod in self.pods)

    def sorted_pod_names(self) -> tuple[str, ...]:
        """The names of the target's pods, sorted: made once, so the per-pod readings of one target's metrics share
        one names column when each has a value for every pod."""
        names = self._sorted_names
        if names is None:
            names = tuple(sorted(pod.name for pod in self.pods))
            object.__setattr__(self, "_sorted_names", names)  # a cache, not state: equal however often it is made
        return names


@dataclass(frozen=True, slots=True)
class MetricRequest:
    """One metric of one target to read in a pass. `key` is the caller's handle (e.g. target and index)."""

    spec: MetricSpec
    context: ReadContext
    binding: PrometheusBinding | None = None
    key: Hashable = None

    @property
    def name(self) -> str:
        """A short name for messages: the metric name, or the resource (and container)."""
        spec = self.spec
        if spec.metric_name:
            return spec.metric_name
        return f"{spec.resource_name}/{spec.container}" if spec.container else spec.resource_name


@dataclass(frozen=True, slots=True)
class Query:
    """One instant query: the de-duplication key of a pass (same server, PromQL and time: sent once).

    `remembered_as` is the text the reader's failure memory keys this question by when `promql` changes from
    pass to pass (the lean sample-time form carries the time asked): the same in every pass, never compared."""

    server: str
    promql: str
    time: datetime
    remembered_as: str = field(default="", compare=False)

    @property
    def question(self) -> str:
        """The text this question is known by from pass to pass: in the failure memory and in error messages."""
        return self.remembered_as or self.promql


@dataclass(frozen=True, slots=True)
class Series:
    """One series of an instant vector: its labels, its value as Prometheus wrote it, and its time."""

    labels: Mapping[str, str]
    value: str
    timestamp: float  # seconds since the epoch


@dataclass(frozen=True, slots=True)
class SeriesTable:
    """An answer's series in columns: per series its label set (the mapping the JSON decoder made, kept as it
    is: copying it into other containers cost more CPU than any other step of reading an answer), its value
    text and its time. A wire answer is kept in this form only, and only until it is read."""

    labels: list[Mapping[str, str]]
    values: list[str]
    stamps: array[float]

    def __len__(self) -> int:
        return len(self.values)

    @classmethod
    def of(cls, series: Sequence[Series]) -> SeriesTable:
        """The table of some `Series`."""
        return cls(
            [one.labels for one in series], [one.value for one in series], array("d", (one.timestamp for one in series))
        )

    def series(self, row: int) -> Series:
        """Row `row` as a `Series`."""
        return Series(dict(self.labels[row]), self.values[row], self.stamps[row])


class Answer:
    """A successful instant-query answer: the result type and its series (a scalar is one unlabeled one).

    Built from `Series`, or from a `SeriesTable` (the wire reader's form), whose `series` are then made on
    first use. Indexes derived from an answer are computed once (`memo`) and shared by every metric that
    reads it (a namespace's answer serves all its targets: re-walking it per target would be quadratic).
    """

    __slots__ = ("_memo", "_series", "result_type", "table")

    def __init__(self, result_type: str, series: Sequence[Series] | None = None, *, table: SeriesTable | None = None):
        if (series is None) == (table is None):
            raise TypeError("Answer takes either series or a table")
        self.result_type = result_type  # vector | scalar | matrix | string
        self._series = tuple(series) if series is not None else None
        self.table: SeriesTable = table if table is not None else SeriesTable.of(self._series or ())
        self._memo: dict[Hashable, Any] = {}

    @property
    def series(self) -> tuple[Series, ...]:
        """Every series, in the answer's order."""
        if self._series is None:
            table = self.table
            self._series = tuple(table.series(row) for row in range(len(table)))
        return self._series

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Answer):
            return NotImplemented
        return (self.result_type, self.series) == (other.result_type, other.series)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Answer(result_type={self.result_type!r}, series={len(self.table)} series)"

    def memo(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """`compute()`, once per answer and key. Not thread-safe: answers are read on one thread."""
        if key not in self._memo:
            self._memo[key] = compute()
        return cast(_T, self._memo[key])
