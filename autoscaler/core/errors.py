"""The core's own small error tree (standard library only).

A `MetricComputationError` is what the replica calculator raises for one metric: the HPA turns it into a
condition and an event and goes on with the other metrics. It is never raised past `decide`.
"""

from __future__ import annotations


class CoreError(Exception):
    """Base class of every error the core raises."""


class InvalidSpecError(CoreError):
    """A value that the core cannot work with (a spec or setting that validation should have refused)."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class MetricComputationError(CoreError):
    """Computing one metric's proposal failed; `message` reads as the HPA's error text does."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
