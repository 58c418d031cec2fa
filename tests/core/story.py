"""A target driven tick by tick through the core with a fake clock, for the scale-to-zero and fallback stories.

Each tick is one reconcile 15 s after the last (the HPA's default sync period); the scale follows every decision,
the behaviour state and the conditions carry over, and `round_trip` sends the state through its JSON form, as a
restart of the daemon does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from autoscaler.core.decision import Decision, decide
from autoscaler.core.state import behavior_state_from_json, behavior_state_to_json
from autoscaler.core.types import (
    AutoscalerSpec,
    BehaviorState,
    Condition,
    ExternalReading,
    MetricInput,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    Pod,
    Scale,
    Settings,
)

START = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SYNC = timedelta(seconds=15)
# A queue worker: 10 messages per replica (a Value target on the whole backlog).
QUEUE = MetricSpec(
    MetricSourceType.EXTERNAL, MetricTarget(MetricTargetType.VALUE, value=10_000), metric_name="queue_depth"
)
# Messages in flight per pod (a per-replica metric).
INFLIGHT = MetricSpec(
    MetricSourceType.EXTERNAL, MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value=5_000), metric_name="inflight"
)


def queue(messages: float) -> ExternalReading:
    return ExternalReading(values=(round(messages * 1000),), timestamp=START)


@dataclass
class Story:
    spec: AutoscalerSpec
    replicas: int
    now: datetime = START
    state: BehaviorState = field(default_factory=BehaviorState)
    settings: Settings = field(default_factory=Settings)
    conditions: tuple[Condition, ...] = ()
    decisions: list[Decision] = field(default_factory=list)

    def pods(self) -> tuple[Pod, ...]:
        return tuple(
            Pod(f"worker-{i}", "Running", labels={"app": "worker"}, ready="True", start_time=START)
            for i in range(self.replicas)
        )

    def decide(self, *readings: MetricInput) -> Decision:
        """Decide at `now` without moving anything (to compare two states' decisions)."""
        return decide(
            spec=self.spec,
            scale=Scale(self.replicas, self.replicas, "app=worker"),
            pods=self.pods(),
            metrics=readings,
            state=self.state,
            settings=self.settings,
            now=self.now,
            conditions=self.conditions,
        )

    def tick(self, *readings: MetricInput) -> Decision:
        result = self.decide(*readings)
        self.decisions.append(result)
        self.state = result.state
        self.conditions = result.conditions
        assert result.desired_replicas is not None
        self.replicas = result.desired_replicas
        self.now += SYNC
        return result

    def ticks(self, count: int, *readings: MetricInput) -> list[int]:
        return [self.tick(*readings).desired_replicas or 0 for _ in range(count)]

    def round_trip(self) -> None:
        self.state = behavior_state_from_json(behavior_state_to_json(self.state))

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == type_), None)

    def events(self, since: int = 0) -> Sequence[tuple[str, str]]:
        return [(str(e.reason), e.message) for d in self.decisions[since:] for e in d.events]
