"""Leader election on a Lease, one process, with injected monotonic clocks: the time-based fence."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.kube.client import KubeClient
from autoscaler.kube.leader import LeaderElectionConfig, LeaderElectionConfigError, LeaderElector
from tests.kube.conftest import NS, Setup
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


def test_the_epoch_counts_acquisitions_and_regains_after_the_deadline(kube: KubeClient, setup: Setup) -> None:
    clock = Mono()
    a = LeaderElector(kube, config("a"), clock=clock)
    assert a.epoch == 0
    assert a.try_acquire_or_renew() and a.epoch == 1
    clock.advance(5)
    assert a.try_acquire_or_renew() and a.epoch == 1, "a renew in time is the same leadership"
    clock.advance(10.5)  # past the renew deadline: not leading for a moment, though nobody else took the lease
    assert a.try_acquire_or_renew() and a.epoch == 2
    a.release()
    assert a.try_acquire_or_renew() and a.epoch == 3


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
