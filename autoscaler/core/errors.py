"""The core's own small error tree (standard library only).

A `MetricComputationError` is what the replica calculator raises for one metric: the HPA turns it into a
condition and an event and goes on with the other metrics. It is never raised past `decide`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autoscaler.core.calculator import PodGroups


class CoreError(Exception):
    """Base class of every error the core raises."""


class InvalidSpecError(CoreError):
    """A value that the core cannot work with (a spec or setting that validation should have refused)."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class MetricComputationError(CoreError):
    """Computing one metric's proposal failed; `message` reads as the HPA's error text does.

    `pods` is how the calculator had grouped the target's pods when it failed (None when it failed before
    grouping them), so that "held: no ready pod has a sample" explains itself.
    """

    def __init__(self, message: str, *, pods: PodGroups | None = None, returned: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pods = pods
        # What upstream's computeStatusFor* function returns when it is not the message of its condition
        # and event (it wraps the calculator's error only in what it returns).
        self.returned = returned

    def wrapped(self, prefix: str) -> MetricComputationError:
        """The same failure under the caller's prefix, as upstream wraps errors with fmt.Errorf."""
        return MetricComputationError(f"{prefix}: {self.message}", pods=self.pods)
