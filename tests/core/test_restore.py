"""The conservative restore of a stored behaviour state (core/state.py `restore_conservatively`), as a table with
exact timestamps, and the property it exists for: with the daemon's write rule, a restored window never holds
less than the lost memory's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.behavior import stabilize_with_behaviors
from autoscaler.core.state import newest_recommendation_time, refresh_due, refresh_offset, restore_conservatively
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
# The table's target refreshes at 45 s past each minute: for its saves at 11:59:45, a refresh period later.
OFFSET = timedelta(seconds=45)


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
    assert restore_conservatively(stored, refresh_seconds=refresh, offset=OFFSET, now=now) == expected


@pytest.mark.parametrize(
    ("offset", "now", "expected"),
    [
        pytest.param(0, at(35), recs((8, 0), (5, 0)), id="refresh-due-15s-after-the-save: stamped at the due time"),
        pytest.param(50, at(35), recs((8, -10), (5, -10)), id="refresh-due-5s-after-the-save"),
        pytest.param(45, at(35), recs((8, 35), (5, 35)), id="refresh-due-a-whole-period-after: stamped at the restart"),
        pytest.param(
            45, at(-15), recs((8, -45), (5, -15)), id="restart-at-the-save: nothing restamped (never moved back)"
        ),
        pytest.param(
            44.999999,
            at(300),
            recs((8, 44.999999), (5, 44.999999)),
            id="microsecond-offset: due a microsecond before saved_at + refresh",
        ),
    ],
)
def test_restore_uses_the_targets_own_refresh_time(
    offset: float, now: datetime, expected: tuple[Recommendation, ...]
) -> None:
    stored = BehaviorState(recs((8, -45), (5, -15)))
    restored = restore_conservatively(stored, refresh_seconds=60, offset=timedelta(seconds=offset), now=now)
    assert restored.recommendations == expected


@pytest.mark.parametrize(
    ("saved_at", "refresh", "offset", "expected"),
    [
        pytest.param(at(-15), 60, 45, at(45), id="a-save-on-the-target's-slot: the next slot, a period later"),
        pytest.param(at(-15), 60, 0, at(0), id="the-next-minute"),
        pytest.param(at(-14.5), 60, 45, at(45), id="a-save-just-after-the-slot: almost a period later"),
        pytest.param(at(-15.5), 60, 45, at(-15), id="a-save-just-before-the-slot: half a second later"),
        pytest.param(at(7), 15, 5, at(20), id="a-15s-period"),
        pytest.param(at(7), 0, 0, at(7), id="refresh-0: due at once"),
    ],
)
def test_refresh_due(saved_at: datetime, refresh: float, offset: float, expected: datetime) -> None:
    due = refresh_due(saved_at, refresh_seconds=refresh, offset=timedelta(seconds=offset))
    assert due == expected
    assert refresh == 0 or saved_at < due <= saved_at + timedelta(seconds=refresh)


def test_refresh_offset_is_stable_and_spread_over_the_period() -> None:
    """The same key gets the same offset in every process (not Python's randomized `hash`), in [0, period); 10,000
    targets fall in each of 10 tenths of the period about equally (1,000 ± 15 %)."""
    assert refresh_offset("shop/api", 60) == timedelta(microseconds=refresh_offset_micros("shop/api", 60))
    assert refresh_offset("shop/api", 0) == timedelta(0)
    tenths = [0] * 10
    for i in range(10_000):
        offset = refresh_offset(f"ns-{i % 50}/app-{i}", 60)
        assert timedelta(0) <= offset < timedelta(seconds=60)
        tenths[int(offset / timedelta(seconds=6))] += 1
    assert all(850 <= count <= 1150 for count in tenths), tenths


def refresh_offset_micros(key: str, refresh: float) -> int:
    """The offset computed independently of the module: blake2b's 8-byte digest of the key, modulo the period."""
    import hashlib

    return int(hashlib.blake2b(key.encode(), digest_size=8).hexdigest(), 16) % round(refresh * 1_000_000)


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
    place=st.floats(0, 1, exclude_max=True),
    restart_after=st.integers(1, 400),
)
def test_a_restored_window_holds_at_least_what_the_lost_memory_held(
    proposals: list[int], up: int, down: int, refresh: int, place: float, restart_after: int
) -> None:
    """Run the windows over proposals every 15 s, storing by the daemon's rule (at once when the set of recorded
    values changes, else at the target's next refresh after the newest stored recommendation, its offset `place`
    of the period), lose the memory, restore at a later time, then compare every window over the next 400 s with
    the never-restarted memory."""
    offset = timedelta(seconds=refresh * place)
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
            saved_at is None or now >= refresh_due(saved_at, refresh_seconds=refresh, offset=offset)
        ):
            stored = memory
    last_tick = at((len(proposals) - 1) * SYNC)
    restart = last_tick + timedelta(seconds=restart_after)
    restored = restore_conservatively(stored, refresh_seconds=refresh, offset=offset, now=restart)
    for later in range(0, 400, 5):
        when = restart + timedelta(seconds=later)
        for window in {up, down}:
            lost = _window(memory, when, window)
            kept = _window(restored, when, window)
            assert lost <= kept, (when, window, lost, kept)
