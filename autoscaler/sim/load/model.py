"""The load model: a demand curve per workload, spread over its ready pods, integrated into the series real
exporters publish (cAdvisor's CPU counter, a per-pod request counter, a queue-depth gauge).

Per workload and per instant, with `L` the curve's demand (load units per second, times `weight`) and `R`
the ready pods: a ready pod's capacity in load units per second is `min(capacity, min over its containers
of cpu_cap(c) / (cost * share(c)))`, where a container's CPU share is its part of the pod's CPU requests
(equal parts when none has one) and `cpu_cap` its CPU limit (else `cpu_capacity`, else unbounded).
- serve mode (no `queue` series): each ready pod gets `L / R` and serves `min(L / R, its capacity)`; the
  rest is dropped (`R = 0`: all of it is unserved).
- queue mode: arrivals `L` join the queue; the ready pods take from it at most their capacities; the queue
  never goes below 0.
A pod's containers use `served * cost * share(c)` cores; a running pod that is not ready serves nothing
(its counters exist and stand still); a pending pod has no series. Counters grow per wall-clock second,
integrated in sub-steps of at most `max_step` seconds at the sub-step's midpoint demand.

No I/O, no clock reads: `now` is a parameter (epoch seconds).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from autoscaler.sim.load.curve import Curve, CurveError, Timeline

KINDS = {"Deployment": "deployments", "StatefulSet": "statefulsets", "ReplicaSet": "replicasets"}


class Series(StrEnum):
    CPU = "cpu"
    RPS = "rps"
    QUEUE = "queue"


@dataclass(frozen=True, slots=True)
class WorkloadRef:
    namespace: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"


@dataclass(frozen=True, slots=True)
class Workload:
    """One workload under load: which series it exports and what one unit of load costs a pod."""

    ref: WorkloadRef
    curve: Curve
    series: frozenset[Series] = frozenset({Series.CPU})
    weight: float = 1.0  # multiplies the curve, so workloads can share one curve at different sizes
    cost: float = 1.0  # CPU cores one unit of load per second uses (core-seconds per request)
    capacity: float | None = None  # load units per second one ready pod serves at most; None: unbounded
    cpu_capacity: float | None = None  # cores a container without a CPU limit can use; None: unbounded
    queue: str = ""  # the queue label (default: the workload's name)

    def __post_init__(self) -> None:
        if self.ref.kind not in KINDS:
            raise CurveError(f"{self.ref}: kind {self.ref.kind!r} is not one of {', '.join(KINDS)}")
        if not self.series:
            raise CurveError(f"{self.ref}: no series (cpu, rps, queue)")
        for name in ("weight", "cost"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise CurveError(f"{self.ref}: {name} {value} must be a finite number >= 0")
        for name in ("capacity", "cpu_capacity"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise CurveError(f"{self.ref}: {name} {value} must be a finite number > 0")
        if Series.QUEUE in self.series and self.capacity is None:
            raise CurveError(f"{self.ref}: a queue needs a capacity (items per second one pod processes)")

    @property
    def queue_name(self) -> str:
        return self.queue or self.ref.name


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    request_cores: float | None = None
    limit_cores: float | None = None


@dataclass(frozen=True, slots=True)
class PodState:
    """A pod as the model needs it: running (its containers started) and ready are separate facts."""

    name: str
    uid: str
    running: bool
    ready: bool
    containers: tuple[Container, ...] = (Container("app"),)


@dataclass(slots=True)
class _PodCounters:
    pod: PodState
    cpu_seconds: dict[str, float]
    requests: float = 0.0
    dropped: float = 0.0


@dataclass(slots=True)
class _WorkloadState:
    workload: Workload
    pods: dict[str, _PodCounters] = field(default_factory=dict)  # by uid
    queue_depth: float = 0.0
    demand: float = 0.0
    unserved: float = 0.0


def shares(pod: PodState) -> dict[str, float]:
    """Each container's part of the pod's CPU: its part of the CPU requests, equal parts when none has one."""
    requested = {c.name: c.request_cores or 0.0 for c in pod.containers}
    total = sum(requested.values())
    if total <= 0:
        return {c.name: 1.0 / len(pod.containers) for c in pod.containers}
    return {name: value / total for name, value in requested.items()}


def pod_capacity(workload: Workload, pod: PodState) -> float:
    """Load units per second the pod can serve: its own capacity, or what its CPU caps allow."""
    limit = workload.capacity if workload.capacity is not None else math.inf
    if workload.cost > 0:
        for container in pod.containers:
            cap = container.limit_cores if container.limit_cores is not None else workload.cpu_capacity
            share = shares(pod)[container.name]
            if cap is not None and share > 0:
                limit = min(limit, cap / (workload.cost * share))
    return limit


class LoadModel:
    """The state of every workload's pods and queue, advanced in time by `advance(now)`."""

    def __init__(self, workloads: Iterable[Workload], *, timeline: Timeline, max_step: float = 0.25) -> None:
        self.timeline = timeline
        self.max_step = max_step
        self._states: dict[WorkloadRef, _WorkloadState] = {}
        self._last: float | None = None
        for workload in workloads:
            self.add(workload)

    @property
    def workloads(self) -> tuple[Workload, ...]:
        return tuple(state.workload for state in self._states.values())

    def add(self, workload: Workload) -> None:
        if workload.ref in self._states:
            raise CurveError(f"{workload.ref}: already under load")
        self._states[workload.ref] = _WorkloadState(workload)

    def remove(self, ref: WorkloadRef) -> None:
        self._states.pop(ref, None)

    def observe(self, ref: WorkloadRef, pods: Sequence[PodState], *, now: float) -> None:
        """The workload's pods as listed at `now`: time up to now runs with the previous pods."""
        self.advance(now)
        state = self._states[ref]
        seen = {}
        for pod in pods:
            if not pod.running:
                continue  # pending: no container, no series
            kept = state.pods.get(pod.uid)
            counters = kept or _PodCounters(pod, {c.name: 0.0 for c in pod.containers})
            counters.pod = pod
            for container in pod.containers:
                counters.cpu_seconds.setdefault(container.name, 0.0)
            seen[pod.uid] = counters
        state.pods = seen

    def advance(self, now: float) -> None:
        if self._last is None or now <= self._last:
            self._last = now if self._last is None else self._last
            return
        start, span = self._last, now - self._last
        count = max(1, math.ceil(span / self.max_step))
        step = span / count
        for k in range(count):
            at = self.timeline.trace_time(start + (k + 0.5) * step)
            for state in self._states.values():
                self._step(state, at, step)
        self._last = now

    def _step(self, state: _WorkloadState, trace_time: float, dt: float) -> None:
        workload = state.workload
        demand = workload.curve(trace_time) * workload.weight
        if not math.isfinite(demand) or demand < 0:
            raise CurveError(f"{workload.ref}: the curve gave {demand} at trace time {trace_time:.3f} s")
        state.demand = demand
        ready = [c for c in state.pods.values() if c.pod.ready]
        capacities = [pod_capacity(workload, c.pod) for c in ready]
        served: list[float] = []
        if Series.QUEUE in workload.series:
            state.queue_depth += demand * dt
            total = sum(capacities)
            taken = min(state.queue_depth, total * dt)
            state.queue_depth -= taken
            served = [taken / dt * cap / total for cap in capacities] if total > 0 else []
        elif ready:
            each = demand / len(ready)
            served = [min(each, cap) for cap in capacities]
            for counters, rate in zip(ready, served, strict=True):
                counters.dropped += (each - rate) * dt
                state.unserved += (each - rate) * dt
        else:
            state.unserved += demand * dt
        for counters, rate in zip(ready, served, strict=True):
            counters.requests += rate * dt
            for name, share in shares(counters.pod).items():
                counters.cpu_seconds[name] += rate * workload.cost * share * dt

    def ready_pods(self, ref: WorkloadRef) -> int:
        return sum(1 for c in self._states[ref].pods.values() if c.pod.ready)

    def queue_depth(self, ref: WorkloadRef) -> float:
        return self._states[ref].queue_depth

    def families(self) -> list[Metric]:
        """The exposition: every series of every workload, as real exporters shape them."""
        cpu = CounterMetricFamily(
            "container_cpu_usage_seconds_total",
            "Cumulative cpu time consumed in seconds (cAdvisor's shape; container=\"\" is the pod's cgroup).",
            labels=["namespace", "pod", "container"],
        )
        requests = CounterMetricFamily(
            "http_requests_total", "Requests served by the pod.", labels=["namespace", "pod"]
        )
        dropped = CounterMetricFamily(
            "http_requests_dropped_total", "Requests the pod got beyond its capacity.", labels=["namespace", "pod"]
        )
        queue = GaugeMetricFamily("queue_depth", "Items waiting in the queue.", labels=["namespace", "queue"])
        workload_labels = ["namespace", "kind", "name"]
        demand = GaugeMetricFamily(
            "load_model_demand", "The curve's demand now, load units per second.", labels=workload_labels
        )
        ready = GaugeMetricFamily("load_model_ready_pods", "Ready pods sharing the load.", labels=workload_labels)
        unserved = CounterMetricFamily(
            "load_model_unserved_total", "Load units not served (dropped, or no ready pod).", labels=workload_labels
        )
        for ref, state in self._states.items():
            wl = [ref.namespace, ref.kind, ref.name]
            demand.add_metric(wl, state.demand)
            ready.add_metric(wl, self.ready_pods(ref))
            unserved.add_metric(wl, state.unserved)
            series = state.workload.series
            if Series.QUEUE in series:
                queue.add_metric([ref.namespace, state.workload.queue_name], state.queue_depth)
            for counters in state.pods.values():
                pod = [ref.namespace, counters.pod.name]
                if Series.CPU in series:
                    for name, seconds in counters.cpu_seconds.items():
                        cpu.add_metric([*pod, name], seconds)
                    cpu.add_metric([*pod, ""], sum(counters.cpu_seconds.values()))
                if Series.RPS in series:
                    requests.add_metric(pod, counters.requests)
                    dropped.add_metric(pod, counters.dropped)
        return [cpu, requests, dropped, queue, demand, ready, unserved]
