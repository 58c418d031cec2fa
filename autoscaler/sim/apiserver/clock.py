"""Clocks for the emulator: the real one, and a fake one that tests move by hand.

Everything in the emulator that depends on time (creation timestamps, the pod lifecycle, ages in tables,
the audit log) reads `clock.now()`; nothing else reads the system clock, so a test with a `FakeClock`
decides exactly when pods start and become ready.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...


class RealClock:
    """The system clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that moves only when told to: `advance(seconds)` or `set(when)`."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._now = when


def timestamp(when: datetime) -> str:
    """RFC 3339 with whole seconds, as metav1.Time serialises: 2026-01-01T00:00:00Z."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_timestamp(when: datetime) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds (events.k8s.io eventTime)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
