"""The simulation model of docs/performance.md ("The model, in full"), driving the real `core.decision.decide`.

Time is an integer number of seconds from the trace's start, advanced in `step` increments. At each step, in
this order: pods move on in their life cycle (Pending -> Running at write + `pending`, Ready at write +
`ready`), Prometheus scrapes (at multiples of `scrape`), the autoscaler decides (at multiples of `sync` from
`sync` on) and its scale write takes effect (new pods Pending; removed pods gone at once), then the step's
demand, capacity and pods are added to the scores (rectangle rule: the value at the step's start for the
whole step).
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from autoscaler.core import types as core
from autoscaler.core.decision import Decision, decide
from autoscaler.spec.errors import SpecError
from autoscaler.spec.hpa import AutoscalerSpec, to_core
from autoscaler.spec.snapshot_out import DecisionInputs
from autoscaler.spec.validation import load_spec

Scenario = Literal["cpu", "rps"]
# The largest demand per second the model takes: a pod's reading (demand per pod) and the rps target are sent to
# the core in milli-units, which must fit a 64-bit integer (9.2e15 units) with room for the sums.
MAX_RATE = 1e15
# The most pods the oracle may need (its counts are summed over every step of a week).
MAX_PODS = 1e12
SCENARIOS: tuple[Scenario, ...] = ("cpu", "rps")

# The simulated cluster's clock at t = 0 (any instant would do: decisions depend on differences only).
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
APP = "web"
SELECTOR = f"app={APP}"
CONTAINER = "app"
RPS_METRIC = "requests_per_second"


@dataclass(frozen=True, slots=True)
class Model:
    """Every parameter of the model (docs/performance.md, "The model, in full"), with its values there as defaults."""

    step: int = 5  # seconds between two points of the simulation
    scrape: int = 15  # Prometheus scrape interval
    window: int = 60  # the rate window the autoscaler sees: the mean of the last window/scrape scrapes
    sync: int = 15  # the autoscaler's sync period; the first decision at t = sync
    pending: int = 15  # a new pod is Pending for this long after the scale write
    ready: int = 45  # and Ready this long after the write
    capacity_divisor: float = 30.0  # C = p99(L) / capacity_divisor
    capacity: float | None = None  # C itself, overriding the divisor
    target_share: float = 0.7  # rps target (AverageValue target_share x C) and the oracle's pod load
    target_utilization: int = 70  # cpu target (Utilization, percent)
    request_millicores: int = 1000  # each pod's CPU request (capacity C)
    max_days: float = 7.0  # the longest span of trace simulated, from its start

    def check(self) -> None:
        """Raise ValueError naming the parameter that makes no model."""
        for name in ("step", "scrape", "window", "sync", "request_millicores", "target_utilization"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name}: must be positive, not {getattr(self, name)}")
        for name in ("scrape", "sync"):
            if getattr(self, name) % self.step:
                raise ValueError(f"{name}: {getattr(self, name)} s is not a multiple of the step ({self.step} s)")
        if self.window % self.scrape:
            raise ValueError(f"window: {self.window} s is not a multiple of the scrape interval ({self.scrape} s)")
        if not 0 <= self.pending <= self.ready:
            raise ValueError(f"pending/ready: need 0 <= pending ({self.pending}) <= ready ({self.ready})")
        if self.capacity is not None and not (math.isfinite(self.capacity) and self.capacity > 0):
            raise ValueError(f"capacity: must be a positive number, not {self.capacity}")
        if not (math.isfinite(self.capacity_divisor) and self.capacity_divisor > 0):
            raise ValueError(f"capacity_divisor: must be a positive number, not {self.capacity_divisor}")
        if not 0 < self.target_share <= 1:
            raise ValueError(f"target_share: must be in (0, 1], not {self.target_share}")
        if not self.max_days > 0:
            raise ValueError(f"max_days: must be positive, not {self.max_days}")


class ScenarioSpecError(ValueError):
    """The user's spec with the scenario's metric in place of its own is not a valid spec (`field` names why)."""

    def __init__(self, message: str, *, scenario: str, field: str) -> None:
        super().__init__(message)
        self.scenario = scenario
        self.field = field


def scenario_spec(
    base: AutoscalerSpec | None, scenario: Scenario, *, target_milli: int, model: Model
) -> AutoscalerSpec:
    """The spec simulated: the user's (min, max, behavior, mode and its parameters) with the scenario's metric.

    Without a spec: the HPA's defaults with minReplicas 1 and maxReplicas 100. The result is validated as a
    user's spec is (ScenarioSpecError naming the field: e.g. minReplicas 0 needs an Object or External metric,
    and the scenario's is not one).
    """

    if scenario == "cpu":
        metric: dict[str, Any] = {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": model.target_utilization},
            },
        }
    else:
        metric = {
            "type": "Pods",
            "pods": {
                "metric": {"name": RPS_METRIC},
                "target": {"type": "AverageValue", "averageValue": f"{target_milli}m"},
            },
        }
    if base is None:
        data: dict[str, Any] = {"minReplicas": 1, "maxReplicas": 100}
    else:
        data = base.model_dump(mode="json", by_alias=True, exclude_unset=True)
        # The scenario owns the metric; the simulation owns the sync period and writes every decision.
        for key in ("metrics", "dryRun", "syncPeriodSeconds", "scaleTargetRef"):
            data.pop(key, None)
    data["scaleTargetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": APP}
    data["metrics"] = [metric]
    try:
        return load_spec(data, scale_to_zero=False, path="spec")
    except SpecError as err:
        raise ScenarioSpecError(
            f"with the {scenario} scenario's metric in place of the spec's: {err}", scenario=scenario, field=err.path
        ) from err


@dataclass(frozen=True, slots=True)
class Scores:
    """The three scores of a run (docs/performance.md): unserved share, cost vs the oracle, scale writes per day."""

    unserved: float
    cost: float
    events_per_day: float


@dataclass(frozen=True, slots=True)
class Series:
    """What happened at every decision time: for the chart and for JSON output."""

    times: list[int] = field(default_factory=list)
    demand: list[float] = field(default_factory=list)
    ready_capacity: list[float] = field(default_factory=list)
    replicas: list[int] = field(default_factory=list)
    unserved: list[float] = field(default_factory=list)
    oracle: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Result:
    """One run: the scores, the oracle's, how the run was set up, and the series."""

    scenario: Scenario
    capacity: float
    seconds: int
    decisions: int
    writes: int
    scores: Scores
    oracle: Scores
    series: Series
    fallbacks: int = 0  # decisions of a non-HPA mode that fell back to the HPA's answer
    mode_decisions: int = 0  # decisions the mode made (fallbacks included)


@dataclass(slots=True)
class _Pods:
    """The target's pods in creation order (removal takes the newest first): when each runs and is ready."""

    names: list[str]
    written: list[float]  # when the scale write that made the pod happened; -inf for the pods at t = 0
    running_at: list[float]
    ready_at: list[float]
    serial: int = 0
    cache: dict[tuple[str, int], core.Pod] = field(default_factory=dict)

    def ready(self, t: int) -> int:
        return bisect.bisect_right(self.ready_at, t)

    def running(self, t: int) -> int:
        return bisect.bisect_right(self.running_at, t)

    def add(self, count: int, *, written: int, model: Model) -> None:
        for _ in range(count):
            self.serial += 1
            self.names.append(f"{APP}-{self.serial}")
            self.written.append(written)
            self.running_at.append(written + model.pending)
            self.ready_at.append(written + model.ready)

    def remove(self, count: int) -> None:
        for _ in range(count):
            name = self.names.pop()
            self.written.pop()
            self.running_at.pop()
            self.ready_at.pop()
            for phase in range(3):
                self.cache.pop((name, phase), None)

    def pod(self, index: int, t: int) -> core.Pod:
        """The pod as the API shows it at t (0 Pending, 1 Running not ready, 2 Ready), built once per phase."""
        name = self.names[index]
        running, ready = self.running_at[index], self.ready_at[index]
        phase = 2 if ready <= t else 1 if running <= t else 0
        key = (name, phase)
        pod = self.cache.get(key)
        if pod is None:
            pod = _pod(name, phase, written=self.written[index], running=running, ready=ready)
            self.cache[key] = pod
        return pod


_CONTAINERS = (core.Container(CONTAINER, {"cpu": 1000}),)


def _at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def _pod(name: str, phase: int, *, written: float, running: float, ready: float) -> core.Pod:
    """Pending: Ready False since the write, no start time; Running: started, Ready False since the start;
    then Ready True since `ready`."""
    labels = {"app": APP}
    if math.isinf(written):  # created and ready long ago
        long_ago = EPOCH - timedelta(days=1)
        return core.Pod(
            name, "Running", labels, "True", long_ago, long_ago, containers=_CONTAINERS, namespace="default"
        )
    if phase == 0:
        return core.Pod(
            name, "Pending", labels, "False", _at(written), None, containers=_CONTAINERS, namespace="default"
        )
    if phase == 1:
        return core.Pod(
            name, "Running", labels, "False", _at(running), _at(running), containers=_CONTAINERS, namespace="default"
        )
    return core.Pod(
        name, "Running", labels, "True", _at(ready), _at(running), containers=_CONTAINERS, namespace="default"
    )


def capacity_of(rates: Sequence[float], model: Model) -> float:
    """C: the model's capacity per pod (p99 of the demand's points over the window / the divisor)."""
    from autoscaler.simulate.trace import percentile

    if model.capacity is not None:
        return model.capacity
    p99 = percentile(rates, 99)
    if p99 <= 0:
        raise ValueError("the trace's p99 is 0: no capacity can be derived from it (give --capacity)")
    return p99 / model.capacity_divisor


def oracle_count(demand: float, *, capacity: float, model: Model, min_replicas: int) -> int:
    """The oracle's pods for a demand: max(min, ceil(L / (target_share x C)))."""
    return max(min_replicas, math.ceil(demand / (model.target_share * capacity)))


Observer = Callable[[DecisionInputs, Decision], None]


def simulate(
    demand: Sequence[float],
    *,
    capacity: float,
    spec_model: AutoscalerSpec,
    scenario: Scenario,
    model: Model,
    settings: core.Settings,
    observer: Observer | None = None,
    keep_series: bool = True,
    carry: Callable[[core.BehaviorState], core.BehaviorState] | None = None,
) -> Result:
    """Run the model over `demand` (per second, one value per step from t = 0) and score it.

    `carry` maps the behaviour state from one decision to the next (the daemon's store and restore, in tests).
    """
    spec = to_core(spec_model)
    step = model.step
    min_replicas = spec.min_replicas
    # The oracle's count for L(0), within the spec's bounds: a workload cannot have started above maxReplicas.
    first_oracle = oracle_count(demand[0], capacity=capacity, model=model, min_replicas=min_replicas)
    start = min(first_oracle, spec.max_replicas)
    pods = _Pods(names=[], written=[], running_at=[], ready_at=[])
    for _ in range(start):
        pods.serial += 1
        pods.names.append(f"{APP}-{pods.serial}")
        pods.written.append(-math.inf)
        pods.running_at.append(-math.inf)
        pods.ready_at.append(-math.inf)
    scrapes: deque[tuple[float, float]] = deque(maxlen=model.window // model.scrape)
    state = core.BehaviorState()
    conditions: tuple[core.Condition, ...] = ()
    last_scale_time: datetime | None = None
    previous_desired: int | None = None
    series = Series()
    served_sum = demand_sum = unserved_sum = pods_sum = oracle_sum = 0.0
    writes = decisions = fallbacks = mode_decisions = oracle_changes = 0
    previous_oracle = first_oracle  # the oracle is not bounded by maxReplicas
    cpu = scenario == "cpu"
    for k, load in enumerate(demand):
        t = k * step
        ready = pods.ready(t)
        if t % model.scrape == 0:
            if ready:
                scrapes.append((min(load, ready * capacity) / (ready * capacity), load / ready))
            else:
                scrapes.append((1.0, load))
        if t >= model.sync and t % model.sync == 0:
            # The 60 s window: the mean of the last scrapes; a ready pod reports it in milli-units (cpu:
            # utilisation x its 1-core request, in millicores; rps: demand per ready pod).
            column = 0 if cpu else 1
            value = round(sum(s[column] for s in scrapes) / len(scrapes) * 1000)
            now = _at(t)
            current = len(pods.names)
            pod_values = [pods.pod(i, t) for i in range(current)]
            running = pods.running(t)
            reading: core.MetricInput
            if cpu:
                reading = core.ResourceReading(
                    tuple(
                        core.PodUsage(
                            pod_values[i].name,
                            now,
                            float(model.window),
                            (core.ContainerUsage(CONTAINER, {"cpu": value if i < ready else 0}),),
                        )
                        for i in range(running)
                    )
                )
            else:
                reading = core.PodsReading(
                    tuple(
                        core.PodValue(pod_values[i].name, value if i < ready else 0, now, float(model.window))
                        for i in range(running)
                    )
                )
            scale = core.Scale(current, current, SELECTOR)
            decision = decide(
                spec=spec,
                scale=scale,
                pods=pod_values,
                metrics=(reading,),
                state=state,
                settings=settings,
                now=now,
                conditions=conditions,
                last_scale_time=last_scale_time,
                previous_desired_replicas=previous_desired,
            )
            if observer is not None:
                observer(
                    DecisionInputs(
                        name=APP,
                        namespace="default",
                        spec_model=spec_model,
                        scale=scale,
                        pods=tuple(pod_values),
                        metrics=(reading,),
                        state=state,
                        settings=settings,
                        now=now,
                        conditions=conditions,
                        last_scale_time=last_scale_time,
                        previous_desired_replicas=previous_desired,
                    ),
                    decision,
                )
            decisions += 1
            forecast = decision.forecast
            if forecast is not None:
                mode_decisions += 1
                fallbacks += 1 if forecast.fallback else 0
            state = decision.state if carry is None else carry(decision.state)
            conditions = decision.conditions
            last_scale_time = decision.status.last_scale_time
            previous_desired = decision.status.desired_replicas
            if decision.rescale and decision.desired_replicas is not None:
                writes += 1
                desired = decision.desired_replicas
                if desired > current:
                    pods.add(desired - current, written=t, model=model)
                else:
                    pods.remove(current - desired)
                ready = pods.ready(t)
        total = len(pods.names)
        served = min(load, ready * capacity)
        oracle = oracle_count(load, capacity=capacity, model=model, min_replicas=min_replicas)
        if oracle != previous_oracle:
            oracle_changes += 1
            previous_oracle = oracle
        demand_sum += load
        served_sum += served
        unserved_sum += load - served
        pods_sum += total
        oracle_sum += oracle
        if keep_series and t % model.sync == 0:
            series.times.append(t)
            series.demand.append(load)
            series.ready_capacity.append(ready * capacity)
            series.replicas.append(total)
            series.unserved.append(load - served)
            series.oracle.append(oracle)
    seconds = len(demand) * step
    days = seconds / 86400
    scores = Scores(
        unserved=unserved_sum / demand_sum if demand_sum > 0 else 0.0,
        cost=pods_sum / oracle_sum if oracle_sum > 0 else 0.0,
        events_per_day=writes / days,
    )
    return Result(
        scenario=scenario,
        capacity=capacity,
        seconds=seconds,
        decisions=decisions,
        writes=writes,
        scores=scores,
        oracle=Scores(unserved=0.0, cost=1.0, events_per_day=oracle_changes / days),
        series=series,
        fallbacks=fallbacks,
        mode_decisions=mode_decisions,
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """A trace made ready for the model: demand per step (per second) and the capacity C."""

    demand: list[float]
    capacity: float


def prepare(times: Sequence[float], rates: Sequence[float], *, model: Model) -> Prepared:
    """The demand over the model's window (at most `max_days` from the start) and C from its points."""
    from autoscaler.simulate.trace import sample

    end = min(times[-1], model.max_days * 86400)
    if end < model.sync:
        raise ValueError(f"the trace spans {end:g} s: shorter than one sync period ({model.sync} s)")
    inside = [r for t, r in zip(times, rates, strict=True) if t <= end]
    for when, rate in zip(times, rates, strict=False):
        if rate > MAX_RATE:
            raise ValueError(
                f"the demand at {when:g} s, {rate:g}/s, is more than the model takes ({MAX_RATE:g}/s: its readings and "
                "targets are 64-bit milli-units); scale the trace's values down"
            )
    capacity = capacity_of(inside, model)
    if capacity > MAX_RATE:
        raise ValueError(f"C = {capacity:g}/s per pod is more than the model takes ({MAX_RATE:g}/s)")
    peak = max(inside) / (model.target_share * capacity)
    if peak > MAX_PODS:
        raise ValueError(
            f"C = {capacity:g}/s per pod: the oracle would run {peak:.3g} pods at the demand's peak, more than the "
            f"model counts ({MAX_PODS:g}); give a larger capacity"
        )
    return Prepared(sample(times, rates, step=model.step, end=end), capacity)


def target_milli(capacity: float, model: Model) -> int:
    """The rps scenario's AverageValue target, target_share x C, in milli-units (at least 1)."""
    return max(1, round(model.target_share * capacity * 1000))
