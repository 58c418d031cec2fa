"""The retry budget: Retry-After honoured, jittered backoff otherwise, bounded attempts, no retry of 4xx."""

from __future__ import annotations

import pytest

from autoscaler.kube.errors import Conflict, InvalidRequest, Unavailable
from autoscaler.kube.retry import RetryBudget, call_with_retries
from tests.garbage import cyclic_garbage


class Flaky:
    """Fails with the given errors in turn, then answers "ok"."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def test_retry_after_is_waited_and_backoff_is_bounded() -> None:
    sleeps: list[float] = []
    fn = Flaky(Unavailable("busy", status=429, retry_after_seconds=3), Unavailable("boom", status=500))
    budget = RetryBudget(attempts=4, max_wait_seconds=2.0, max_retry_after_seconds=5)
    assert call_with_retries(fn, budget=budget, sleep=sleeps.append) == "ok"
    assert fn.calls == 3
    assert sleeps[0] == 3
    assert 0 < sleeps[1] <= 2.0


def test_beyond_the_budget_the_last_error_surfaces() -> None:
    sleeps: list[float] = []
    fn = Flaky(*[Unavailable("boom", status=500) for _ in range(5)])
    with pytest.raises(Unavailable):
        call_with_retries(fn, budget=RetryBudget(attempts=3), sleep=sleeps.append)
    assert fn.calls == 3
    assert len(sleeps) == 2


@pytest.mark.parametrize(
    "err",
    [
        pytest.param(InvalidRequest("bad", status=422), id="validation error"),
        pytest.param(Conflict("stale"), id="conflict is the caller's to re-read"),
        pytest.param(Unavailable("busy", status=429, retry_after_seconds=60), id="Retry-After beyond the budget"),
    ],
)
def test_not_retried(err: Exception) -> None:
    sleeps: list[float] = []
    fn = Flaky(err)
    with pytest.raises(type(err)):
        call_with_retries(fn, budget=RetryBudget(), sleep=sleeps.append)
    assert fn.calls == 1
    assert sleeps == []


@pytest.mark.parametrize(
    "failures",
    [
        pytest.param(0, id="answered at once"),
        pytest.param(1, id="answered after a retry"),
    ],
)
def test_a_call_that_answers_leaves_no_reference_cycle(failures: int) -> None:
    """tenacity's retrying object sits in a reference cycle while it runs; a call that answers breaks it when
    done, so what it made goes with its last reference, not at the collector's next pass (paused during a tick's
    reading). (A call that fails leaves its error's traceback, whose frames hold it, as any caught error does.)"""

    def call() -> None:
        # The errors are made here: one made outside would keep its traceback, and the cycle, reachable.
        fn = Flaky(*[Unavailable("boom", status=500) for _ in range(failures)])
        assert call_with_retries(fn, budget=RetryBudget(attempts=3), sleep=lambda _: None) == "ok"

    assert cyclic_garbage(call, module="tenacity") == []
