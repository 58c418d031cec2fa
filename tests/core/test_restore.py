"""The conservative restore of a stored behaviour state (core/state.py `restore_conservatively`), as a table with
exact timestamps, and the property it exists for: with the daemon's write rule, a restored window never holds
less than the lost memory's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.behavior import stabilize_with_behaviors
from autoscaler.core.state import newest_recommendation_time, restore_conservatively
from autoscaler.core.types import (
    Behavior,
    BehaviorState,
    Recommendation,
    ScaleEvent,
    ScalingRules,
    Settings,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def recs(*items: tuple[int, float]) -> tuple[Recommendation, ...]:
    return tuple(Recommendation(replicas, at(seconds)) for replicas, seconds in items)


EVENTS = (ScaleEvent(2, at(-40), False),)


@pytest.mark.parametrize(
    ("stored", "refresh", "now", "expected"),
    [
        pytest.param(BehaviorState(), 60, at(35), BehaviorState(), id="never-reconciled-stays-none"),
        pytest.param(BehaviorState(()), 60, at(35), BehaviorState(()), id="empty-history-stays-empty"),
        pytest.param(
            BehaviorState(recs((8, -45), (5, -30), (5, -15))),
            60,
            at(35),
            BehaviorState(recs((8, 35), (5, -30), (5, 35))),
            id="restart-50s-after-the-save: each value's newest entry stamped at the restart",
        ),
        pytest.param(
            BehaviorState(recs((8, -45), (5, -30), (5, -15))),
            60,
            at(300),
            BehaviorState(recs((8, 45), (5, -30), (5, 45))),
            id="restart-after-the-refresh: stamped at saved_at + refresh, not later",
        ),
        pytest.param(
            BehaviorState(recs((8, -45), (5, -15))),
            60,
            at(45),
            BehaviorState(recs((8, 45), (5, 45))),
            id="restart-exactly-at-saved_at+refresh",
        ),
        pytest.param(
            BehaviorState(recs((8, -45), (5, -15))),
            0,
            at(35),
            BehaviorState(recs((8, -45), (5, -15))),
            id="refresh-0: every change was stored, nothing restamped",
        ),
        pytest.param(
            BehaviorState(recs((8, -45), (5, -15))),
            60,
            at(-20),
            BehaviorState(recs((8, -45), (5, -15))),
            id="restore-clock-behind-the-save: never moved back",
        ),
        pytest.param(
            BehaviorState(recs((8, -15), (8, -15))),
            60,
            at(0),
            BehaviorState(recs((8, -15), (8, 0))),
            id="equal-timestamps: the later entry is restamped",
        ),
        pytest.param(
            BehaviorState(recs((8, -295), (4, -15))),
            60,
            at(5),
            BehaviorState(recs((8, 5), (4, 5))),
            id="a value about to leave a 300 s window is held a whole window after the restore (safe, not the HPA)",
        ),
        pytest.param(
            BehaviorState(recs((3, -15)), EVENTS, EVENTS),
            60,
            at(10),
            BehaviorState(recs((3, 10)), EVENTS, EVENTS),
            id="scale-events-kept-as-stored (they are stored at once)",
        ),
    ],
)
def test_restore_conservatively(stored: BehaviorState, refresh: float, now: datetime, expected: BehaviorState) -> None:
    assert restore_conservatively(stored, refresh_seconds=refresh, now=now) == expected


def test_newest_recommendation_time() -> None:
    assert newest_recommendation_time(BehaviorState()) is None
    assert newest_recommendation_time(BehaviorState(())) is None
    assert newest_recommendation_time(BehaviorState(recs((4, -30), (9, 5), (4, -1)))) == at(5)


# --- the property ---------------------------------------------------------------------------------------------

SYNC = 15
SETTINGS = Settings()


def _window(state: BehaviorState, now: datetime, seconds: int) -> set[int]:
    cutoff = now - timedelta(seconds=seconds)
    return {r.replicas for r in state.recommendations or () if r.timestamp > cutoff}


@settings(max_examples=200, deadline=None)
@given(
    proposals=st.lists(st.integers(1, 6), min_size=2, max_size=40),
    up=st.sampled_from([0, 30, 60]),
    down=st.sampled_from([0, 60, 300]),
    refresh=st.sampled_from([0, 15, 60, 120]),
    restart_after=st.integers(1, 400),
)
def test_a_restored_window_holds_at_least_what_the_lost_memory_held(
    proposals: list[int], up: int, down: int, refresh: int, restart_after: int
) -> None:
    """Run the windows over proposals every 15 s, storing by the daemon's rule (at once when the set of recorded
    values changes, else `refresh` after the newest stored recommendation), lose the memory, restore at a later
    time, then compare every window over the next 400 s with the never-restarted memory."""
    behavior = Behavior(
        scale_up=ScalingRules(policies=(), stabilization_window_seconds=up),
        scale_down=ScalingRules(policies=(), stabilization_window_seconds=down),
    )
    memory = BehaviorState(())
    stored = memory
    for i, proposal in enumerate(proposals):
        now = at(i * SYNC)
        _, history = stabilize_with_behaviors(
            current_replicas=3,
            proposal=proposal,
            behavior=behavior,
            recommendations=memory.recommendations or (),
            settings=SETTINGS,
            now=now,
        )
        memory = BehaviorState(history)
        values = {r.replicas for r in history}
        saved_at = newest_recommendation_time(stored)
        if values != {r.replicas for r in stored.recommendations or ()} or (
            saved_at is None or now >= saved_at + timedelta(seconds=refresh)
        ):
            stored = memory
    last_tick = at((len(proposals) - 1) * SYNC)
    restart = last_tick + timedelta(seconds=restart_after)
    restored = restore_conservatively(stored, refresh_seconds=refresh, now=restart)
    for later in range(0, 400, 5):
        when = restart + timedelta(seconds=later)
        for window in {up, down}:
            lost = _window(memory, when, window)
            kept = _window(restored, when, window)
            assert lost <= kept, (when, window, lost, kept)
