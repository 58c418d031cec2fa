"""Leader election on a Lease, one process, with injected monotonic clocks: the time-based fence."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import Unavailable
from autoscaler.kube.leader import LeaderElectionConfig, LeaderElectionConfigError, LeaderElector
from tests.kube.conftest import NS, Setup, client_for
from tests.kube.test_cache import eventually

LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/prometheus-autoscaler"


class Mono:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def config(identity: str) -> LeaderElectionConfig:
    return LeaderElectionConfig(namespace=NS, name="prometheus-autoscaler", identity=identity)


def test_acquire_renew_and_the_renew_deadline(kube: KubeClient, setup: Setup) -> None:
    clock = Mono()
    a = LeaderElector(kube, config("a"), clock=clock)
    assert not a.is_leader()
    assert a.try_acquire_or_renew()
    assert a.is_leader()
    lease = setup.get(LEASE)["spec"]
    assert lease["holderIdentity"] == "a"
    assert lease["leaseDurationSeconds"] == 15
    clock.advance(9.9)
    assert a.is_leader()
    clock.advance(0.2)
    assert not a.is_leader(), "past the renew deadline a leader stops, renewed or not"
    assert a.try_acquire_or_renew()
    assert a.is_leader()
    assert setup.get(LEASE)["spec"]["leaseTransitions"] == 0


def test_the_epoch_counts_takeovers_not_regains_of_its_own_lease(kube: KubeClient, setup: Setup) -> None:
    clock_a, clock_b = Mono(), Mono()
    a = LeaderElector(kube, config("a"), clock=clock_a)
    b = LeaderElector(kube, config("b"), clock=clock_b)
    assert a.epoch == 0
    assert a.try_acquire_or_renew() and a.epoch == 1
    clock_a.advance(5)
    assert a.try_acquire_or_renew() and a.epoch == 1, "a renew in time is the same leadership"
    clock_a.advance(10.5)  # past the renew deadline: not leading for a moment, but the lease still names a
    assert not a.is_leader()
    assert a.try_acquire_or_renew() and a.is_leader() and a.epoch == 1, "nobody can have led in between"
    a.release()  # the lease names nobody: taking it again is a new leadership
    assert a.try_acquire_or_renew() and a.epoch == 2
    assert not b.try_acquire_or_renew()  # b sees a's lease, and waits a lease duration on its own clock
    clock_a.advance(10.5)  # a stops renewing
    clock_b.advance(15.1)
    assert b.try_acquire_or_renew() and b.epoch == 1
    assert not a.try_acquire_or_renew()  # a sees b's lease, and waits in turn; b stops renewing
    clock_a.advance(15.1)
    assert a.try_acquire_or_renew() and a.epoch == 3, "taken from another holder: it may have written"


class LoseAnswer:
    """Wraps a client's request_json: the next request of `verb` reaches the server and is applied, then its
    answer is lost (a read timeout), as a dropped connection after the server's commit would do."""

    def __init__(self, kube: KubeClient) -> None:
        self.real = kube.request_json
        self.verb: str | None = None
        kube.request_json = self  # type: ignore[method-assign]

    def __call__(self, method: Any, *args: Any, context: Any, **kwargs: Any) -> Any:
        answer = self.real(method, *args, context=context, **kwargs)
        if context.verb == self.verb:
            self.verb = None
            raise Unavailable("read timed out after the server applied the request", context=context)
        return answer


@contextmanager
def two_contenders(
    kube: KubeClient, setup: Setup
) -> Iterator[tuple[LeaderElector, LeaderElector, Mono, Mono, LoseAnswer]]:
    """a (whose answers `LoseAnswer` can drop) and b on a client of its own, each on its own clock."""
    clock_a, clock_b = Mono(), Mono()
    lose = LoseAnswer(kube)
    other = client_for(setup.url)
    try:
        yield (
            LeaderElector(kube, config("a"), clock=clock_a),
            LeaderElector(other, config("b"), clock=clock_b),
            clock_a,
            clock_b,
            lose,
        )
    finally:
        other.close()


def test_a_takeover_whose_answer_was_lost_is_a_new_epoch(kube: KubeClient, setup: Setup) -> None:
    """b led between a's loss and a's regain; a's takeover was applied but a never saw the answer, so a's next
    attempt reads a lease naming a and renews it. That is still a new leadership: b may have written."""
    with two_contenders(kube, setup) as (a, b, clock_a, clock_b, lose):
        assert a.try_acquire_or_renew() and a.epoch == 1
        assert not b.try_acquire_or_renew()
        clock_a.advance(10.5)  # a's renewals fail
        clock_b.advance(15.1)
        assert b.try_acquire_or_renew() and b.is_leader()  # b takes over, and may write
        assert not a.try_acquire_or_renew()
        clock_b.advance(10.5)  # b stops renewing
        clock_a.advance(15.1)
        lose.verb = "update"
        with pytest.raises(Unavailable):
            a.try_acquire_or_renew()  # a's takeover is applied, its answer lost
        assert setup.get(LEASE)["spec"]["holderIdentity"] == "a" and not a.is_leader()
        assert a.try_acquire_or_renew() and a.is_leader()  # a plain renew of the lease naming a ...
        assert a.epoch == 2, "... carrying another acquisition than a's last write: b led in between"
        clock_a.advance(5)
        assert a.try_acquire_or_renew() and a.epoch == 2


def test_a_re_created_lease_whose_answer_was_lost_is_a_new_epoch(kube: KubeClient, setup: Setup) -> None:
    with two_contenders(kube, setup) as (a, b, clock_a, _, lose):
        assert a.try_acquire_or_renew() and a.epoch == 1
        created = setup.get(LEASE)["spec"]["acquireTime"]
        clock_a.advance(10.5)  # a's renewals fail for a while
        setup.delete(LEASE)  # deleted (an operator, a namespace clean-up): b creates it and leads
        assert b.try_acquire_or_renew() and b.is_leader()
        setup.delete(LEASE)
        lose.verb = "create"
        with pytest.raises(Unavailable):
            a.try_acquire_or_renew()  # a creates it again; the answer is lost
        lease = setup.get(LEASE)["spec"]
        assert lease["holderIdentity"] == "a" and lease["leaseTransitions"] == 0
        assert a.try_acquire_or_renew() and a.is_leader()
        assert a.epoch == 2, ("a new Lease object (uid) is a new leadership", created)


def test_the_wait_before_the_next_attempt(kube: KubeClient, setup: Setup) -> None:
    """Leading: the retry period (2 s), then at most half the time left before the fence (10 s renew deadline)
    closes, but never under 0.1 s however close it is; not leading: the period with up to 120 % jitter."""
    clock = Mono()
    a = LeaderElector(kube, config("a"), clock=clock)
    assert 2.0 <= a.next_wait() <= 2.0 * 2.2
    assert a.try_acquire_or_renew()
    assert a.next_wait() == 2.0
    clock.advance(7)  # 3 s left
    assert a.next_wait() == 1.5
    clock.advance(2.9)  # 0.1 s left: renewals failing since
    assert a.next_wait() == 0.1
    clock.advance(0.09)
    assert a.next_wait() == 0.1, "spaced, not halved towards zero"


def test_a_contender_waits_a_lease_duration_on_its_own_clock(kube: KubeClient, setup: Setup) -> None:
    clock_a, clock_b = Mono(), Mono()
    a = LeaderElector(kube, config("a"), clock=clock_a)
    b = LeaderElector(kube, config("b"), clock=clock_b)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    clock_b.advance(14.9)
    assert not b.try_acquire_or_renew()
    # a has been stopped all along: its own fence fell 5 s before b may take over.
    clock_a.advance(10.0)
    assert not a.is_leader()
    clock_b.advance(0.2)
    assert b.try_acquire_or_renew()
    assert b.is_leader()
    spec = setup.get(LEASE)["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
    # a wakes up: it cannot renew a lease someone else holds.
    assert not a.try_acquire_or_renew()
    assert not a.is_leader()


def test_renewals_restart_the_contender_s_wait(kube: KubeClient) -> None:
    clock_a, clock_b = Mono(), Mono()
    a = LeaderElector(kube, config("a"), clock=clock_a)
    b = LeaderElector(kube, config("b"), clock=clock_b)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    clock_b.advance(10)
    clock_a.advance(2)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # sees a changed record: the wait starts again
    clock_b.advance(14)
    assert not b.try_acquire_or_renew()
    assert a.is_leader()


def test_release_gives_an_immediate_takeover(kube: KubeClient, setup: Setup) -> None:
    a = LeaderElector(kube, config("a"), clock=Mono())
    b = LeaderElector(kube, config("b"), clock=Mono())
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release()
    assert not a.is_leader()
    assert setup.get(LEASE)["spec"]["holderIdentity"] == ""
    assert b.try_acquire_or_renew()
    assert b.is_leader()


def test_two_racing_takeovers_make_one_leader(kube: KubeClient, server: Any) -> None:
    a = LeaderElector(kube, config("a"), clock=Mono())
    assert a.try_acquire_or_renew()
    assert a.release()
    b = LeaderElector(kube, config("b"), clock=Mono())
    # b's write meets a 409, as if c had written first.
    server.faults.add(r"/leases/prometheus-autoscaler$", method="PUT", status=409, times=1)
    assert not b.try_acquire_or_renew()
    assert not b.is_leader()


def test_the_loop_leads_and_releases_on_stop(kube: KubeClient, setup: Setup) -> None:
    cfg = LeaderElectionConfig(
        namespace=NS,
        name="prometheus-autoscaler",
        identity="loop",
        lease_duration_seconds=2,
        renew_deadline_seconds=1.5,
        retry_period_seconds=0.2,
    )
    started: list[str] = []
    elector = LeaderElector(kube, cfg, on_started_leading=lambda: started.append("start"))
    elector.start()
    try:
        eventually(elector.is_leader)
        assert started == ["start"]
    finally:
        elector.stop()
    assert not elector.is_leader()
    assert setup.get(LEASE)["spec"]["holderIdentity"] == ""


@pytest.mark.parametrize(
    ("lease", "renew", "retry"),
    [
        pytest.param(10, 10, 2, id="lease duration not above renew deadline"),
        pytest.param(15, 2, 2, id="renew deadline not above 1.2 x retry period"),
        pytest.param(15, 10, 0, id="no retry period"),
    ],
)
def test_unsafe_durations_are_refused(lease: float, renew: float, retry: float) -> None:
    with pytest.raises(LeaderElectionConfigError):
        LeaderElectionConfig(
            namespace=NS,
            name="x",
            identity="a",
            lease_duration_seconds=lease,
            renew_deadline_seconds=renew,
            retry_period_seconds=retry,
        )


def test_a_leader_past_its_deadline_still_hands_the_lease_back(kube: KubeClient, setup: Setup) -> None:
    clock = Mono()
    a = LeaderElector(kube, config("a"), clock=clock)
    never = LeaderElector(kube, config("never"), clock=Mono())
    assert a.try_acquire_or_renew()
    clock.advance(11)
    assert not a.is_leader()
    assert not never.release(), "a contender that never held the lease has nothing to release"
    assert a.release()
    assert setup.get(LEASE)["spec"]["holderIdentity"] == ""
