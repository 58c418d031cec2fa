"""Bounded retries for Kubernetes requests: 5xx, timeouts and dropped connections, and 429 with Retry-After.

A `RetryBudget` states stop, wait and retry explicitly (never tenacity's retry-forever default). Conflicts
(409) are not retried here: a stale write must be re-read and decided again by the caller (see
`autoscaler.kube.scale`). Permanent errors (404, 403, 4xx validation) are never retried. `sleep` is
injectable so tests assert on the waits instead of spending them. This module must not know any resource.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import structlog
import tenacity

from autoscaler.kube.errors import Unavailable

log = structlog.get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryBudget:
    """Keep the whole budget well below the sync period: the next tick is the retry for anything longer."""

    attempts: int = 4
    max_delay_seconds: float = 10.0
    # Exponential backoff with jitter between attempts: initial * 2**n + U(0, jitter), capped at max.
    initial_wait_seconds: float = 0.2
    max_wait_seconds: float = 2.0
    jitter_seconds: float = 0.2
    # A Retry-After longer than this is not waited for: the error surfaces and the next tick retries.
    max_retry_after_seconds: float = 5.0


class _Wait(tenacity.wait.wait_base):
    """Retry-After when the server sent one, otherwise jittered exponential backoff."""

    def __init__(self, budget: RetryBudget) -> None:
        self._backoff = tenacity.wait_exponential_jitter(
            multiplier=budget.initial_wait_seconds,
            max=budget.max_wait_seconds,
            jitter=budget.jitter_seconds,
        )

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        err = outcome.exception() if outcome is not None else None
        if isinstance(err, Unavailable) and err.retry_after_seconds is not None:
            return err.retry_after_seconds
        return float(self._backoff(retry_state))


def _retryable(budget: RetryBudget) -> Callable[[BaseException], bool]:
    def retryable(err: BaseException) -> bool:
        if not isinstance(err, Unavailable):
            return False
        return err.retry_after_seconds is None or err.retry_after_seconds <= budget.max_retry_after_seconds

    return retryable


def _log_retry(retry_state: tenacity.RetryCallState) -> None:
    outcome = retry_state.outcome
    err = outcome.exception() if outcome is not None else None
    next_action = retry_state.next_action
    log.warning(
        "kube_request_retrying",
        attempt=retry_state.attempt_number,
        wait_seconds=next_action.sleep if next_action is not None else None,
        error=str(err),
        status=getattr(err, "status", None),
    )


def call_with_retries(
    fn: Callable[[], T],
    *,
    budget: RetryBudget,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call `fn`, retrying `Unavailable` within `budget`; the last error is re-raised as it was."""
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(budget.attempts) | tenacity.stop_after_delay(budget.max_delay_seconds),
        wait=_Wait(budget),
        retry=tenacity.retry_if_exception(_retryable(budget)),
        before_sleep=_log_retry,
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(fn)
    finally:
        # tenacity's state for the call holds the retrying object in a reference cycle (its actions are lambdas
        # over it): broken here, so the call's objects go with their last reference, not at the collector's
        # next pass (paused while a tick reads metrics and decides).
        retrying.iter_state.reset()
