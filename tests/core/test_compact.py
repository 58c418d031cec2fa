"""Keeping only the newest recommendation of each count (core/state.py `compact_recommendations`): a table, and
the property the daemon relies on: the stabilization windows decide the same with and without it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.behavior import normalize_legacy, stabilize_with_behaviors
from autoscaler.core.state import compact_recommendations
from autoscaler.core.types import Behavior, BehaviorState, Recommendation, ScaleEvent, ScalingRules, Settings

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
EVENTS = (ScaleEvent(2, T0, False),)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def recs(*items: tuple[int, float]) -> tuple[Recommendation, ...]:
    return tuple(Recommendation(replicas, at(seconds)) for replicas, seconds in items)


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        pytest.param(BehaviorState(), BehaviorState(), id="never-reconciled-stays-none"),
        pytest.param(BehaviorState(()), BehaviorState(()), id="empty-stays-empty"),
        pytest.param(BehaviorState(recs((4, 0))), BehaviorState(recs((4, 0))), id="one-entry"),
        pytest.param(
            BehaviorState(recs((4, 0), (4, 1), (4, 2))), BehaviorState(recs((4, 2))), id="a-steady-target: one entry"
        ),
        pytest.param(
            BehaviorState(recs((4, 0), (8, 1), (4, 2), (5, 3), (8, -5))),
            BehaviorState(recs((8, 1), (4, 2), (5, 3))),
            id="newest-of-each-count-in-list-order (the list is not sorted by time: the HPA reuses old slots)",
        ),
        pytest.param(
            BehaviorState(recs((4, 2), (4, 2))), BehaviorState(recs((4, 2))), id="equal-timestamps: the later entry"
        ),
        pytest.param(
            BehaviorState(recs((3, 0), (3, 1)), EVENTS, EVENTS),
            BehaviorState(recs((3, 1)), EVENTS, EVENTS),
            id="scale-events-untouched",
        ),
    ],
)
def test_compact_recommendations(state: BehaviorState, expected: BehaviorState) -> None:
    assert compact_recommendations(state) == expected


def _values(history: tuple[Recommendation, ...], cutoff: datetime) -> set[int]:
    return {r.replicas for r in history if r.timestamp > cutoff}


SETTINGS = Settings()


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.tuples(st.integers(1, 8), st.integers(1, 40)), min_size=1, max_size=80),
    up=st.sampled_from([0, 15, 60, 180]),
    down=st.sampled_from([0, 15, 60, 300]),
    current=st.integers(1, 8),
    cutoffs=st.lists(st.floats(0, 1), min_size=1, max_size=10),
)
def test_the_windows_decide_the_same_with_and_without_compaction(
    steps: list[tuple[int, int]], up: int, down: int, current: int, cutoffs: list[float]
) -> None:
    """Proposals at random gaps (1-40 s) through both stabilization paths, one history kept whole (as the HPA keeps
    it), the other compacted after every step (as the daemon remembers and stores it): every step's result, reason
    and the counts in each window are equal, and at the end so are the counts newer than any cutoff a later
    decision can use (within the longest window of the last step: an entry older than every window is never read
    again, and the HPA's list may still hold a stale one until its slot is reused)."""
    behavior = Behavior(
        scale_up=ScalingRules(policies=(), stabilization_window_seconds=up),
        scale_down=ScalingRules(policies=(), stabilization_window_seconds=down),
    )
    legacy_settings = Settings(downscale_stabilization_window_seconds=down)
    whole: tuple[Recommendation, ...] = ()
    compact: tuple[Recommendation, ...] = ()
    whole_legacy: tuple[Recommendation, ...] = ()
    compact_legacy: tuple[Recommendation, ...] = ()
    now = T0
    for proposal, gap in steps:
        now += timedelta(seconds=gap)
        a, whole = stabilize_with_behaviors(
            current_replicas=current,
            proposal=proposal,
            behavior=behavior,
            recommendations=whole,
            settings=SETTINGS,
            now=now,
        )
        b, compact = stabilize_with_behaviors(
            current_replicas=current,
            proposal=proposal,
            behavior=behavior,
            recommendations=compact,
            settings=SETTINGS,
            now=now,
        )
        assert (a.stabilized, a.reason) == (b.stabilized, b.reason), now
        assert {r.replicas for r in a.scale_up_window} == {r.replicas for r in b.scale_up_window}
        assert {r.replicas for r in a.scale_down_window} == {r.replicas for r in b.scale_down_window}
        compact = compact_recommendations(BehaviorState(compact)).recommendations or ()

        c = normalize_legacy(
            current_replicas=current,
            proposal=proposal,
            min_replicas=1,
            max_replicas=8,
            recommendations=whole_legacy,
            settings=legacy_settings,
            now=now,
        )
        d = normalize_legacy(
            current_replicas=current,
            proposal=proposal,
            min_replicas=1,
            max_replicas=8,
            recommendations=compact_legacy,
            settings=legacy_settings,
            now=now,
        )
        assert (c.desired, c.stabilization.stabilized, c.stabilization.reason, c.limits.reason) == (
            d.desired,
            d.stabilization.stabilized,
            d.stabilization.reason,
            d.limits.reason,
        ), now
        whole_legacy = c.recommendations
        compact_legacy = compact_recommendations(BehaviorState(d.recommendations)).recommendations or ()

        assert len(compact) == len({r.replicas for r in compact})  # one entry per count
    for share in cutoffs:
        cutoff = now - timedelta(seconds=share * max(up, down))
        assert _values(whole, cutoff) == _values(compact, cutoff), cutoff
        cutoff = now - timedelta(seconds=share * down)
        assert _values(whole_legacy, cutoff) == _values(compact_legacy, cutoff), cutoff
