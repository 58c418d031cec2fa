"""RFC 3339 times as the status and the behaviour state write them, one per instant (kept formatted for reuse)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo

import pytest

from autoscaler.core.formats import format_time


class FoldedZone(tzinfo):
    """A zone whose clocks go back an hour: 01:30 happens twice, at UTC-4 (fold 0) and at UTC-5 (fold 1)."""

    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(hours=-5 if dt is not None and dt.fold else -4)

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(0)

    def tzname(self, dt: datetime | None) -> str:
        return "FOLD"


@pytest.mark.parametrize(
    ("when", "text"),
    [
        pytest.param(datetime(2026, 11, 1, 5, 30, tzinfo=UTC), "2026-11-01T05:30:00Z", id="utc"),
        pytest.param(datetime(2026, 11, 1, 5, 30, 0, 250000, tzinfo=UTC), "2026-11-01T05:30:00.25Z", id="fraction"),
        pytest.param(
            datetime(2026, 11, 1, 7, 30, tzinfo=timezone(timedelta(hours=2))), "2026-11-01T05:30:00Z", id="offset"
        ),
    ],
)
def test_times_are_written_in_utc(when: datetime, text: str) -> None:
    assert format_time(when) == text


def test_two_instants_one_local_time_apart_across_a_fold_are_two_texts() -> None:
    """Equal as Python compares them (same zone, fold ignored), an hour apart as instants: each its own text,
    whichever was formatted first."""
    first = datetime(2026, 11, 1, 1, 30, tzinfo=FoldedZone())
    second = first.replace(fold=1)
    assert first == second
    assert format_time(first) == "2026-11-01T05:30:00Z"
    assert format_time(second) == "2026-11-01T06:30:00Z"
