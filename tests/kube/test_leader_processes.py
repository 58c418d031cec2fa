"""Leader election between two real processes against the emulator: one writer at a time, by time alone.

Each contender writes marker Events while it believes it leads; the emulator's audit log orders every write,
so "never two leaders" means: once the new leader's first marker is in, the old leader writes none.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kube.conftest import NS, Setup

ROOT = Path(__file__).resolve().parents[2]
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/prometheus-autoscaler"
LEASE_DURATION = 2.0


def wait_for(check: Callable[[], bool], *, timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        time.sleep(0.02)


class Contenders:
    def __init__(self, url: str) -> None:
        self.url = url
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, identity: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.kube.leader_contender", self.url, identity],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"{identity} ready"
        self.procs[identity] = proc
        return proc

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def contenders(server: Any) -> Iterator[Contenders]:
    c = Contenders(server.url)
    try:
        yield c
    finally:
        c.stop_all()


def holder(setup: Setup) -> str:
    try:
        return str(setup.get(LEASE)["spec"].get("holderIdentity") or "")
    except AssertionError:
        return ""


def markers(server: Any) -> list[str]:
    """The identity behind each successful marker write, in the order the server took them."""
    out = []
    for record in server.audit.records(verb="create", resource="events"):
        if "marker/" in record.user_agent and record.code == 201:
            out.append(record.user_agent.rsplit("marker/", 1)[1])
    return out


def marker_times(server: Any, identity: str) -> list[Any]:
    return [
        r.time
        for r in server.audit.records(verb="create", resource="events")
        if r.user_agent.endswith(f"marker/{identity}") and r.code == 201
    ]


def lease_gets(server: Any, identity: str) -> int:
    return sum(
        1 for r in server.audit.records(verb="get", resource="leases") if r.user_agent.endswith(f"contender/{identity}")
    )


def assert_one_handoff(order: list[str], first: str, second: str, *, in_flight: int = 0) -> None:
    """All of `first`'s markers come before any of `second`'s: the two never wrote in overlapping time; but for
    `in_flight` writes the old leader had already decided to send when it was frozen."""
    assert first in order and second in order, order
    late = order[order.index(second) :].count(first)
    assert late <= in_flight, f"the old leader wrote {late} marker(s) after the new one: {order}"


def test_a_partitioned_leader_stops_writing_before_the_other_takes_over(
    server: Any, setup: Setup, contenders: Contenders
) -> None:
    contenders.start("a")
    wait_for(lambda: holder(setup) == "a", what="a leads")
    b = contenders.start("b")
    wait_for(lambda: lease_gets(server, "b") >= 10, what="b contends")
    assert holder(setup) == "a", "b must not take a lease that a keeps renewing"
    assert "b" not in markers(server)

    os.kill(contenders.procs["a"].pid, signal.SIGUSR1)  # a can no longer renew; its markers still get through
    wait_for(lambda: holder(setup) == "b", what="b takes over")
    wait_for(lambda: markers(server).count("b") >= 10, what="b writes")
    assert_one_handoff(markers(server), "a", "b")
    assert b.poll() is None
    # The fence leaves lease duration - renew deadline (0.5 s) between the two; allow for scheduling.
    gap = (min(marker_times(server, "b")) - max(marker_times(server, "a"))).total_seconds()
    assert gap > 0.2, f"only {gap:.3f} s between the old leader's last write and the new leader's first"


def test_a_stopped_leader_is_replaced_and_stays_quiet_when_it_resumes(
    server: Any, setup: Setup, contenders: Contenders
) -> None:
    a = contenders.start("a")
    wait_for(lambda: holder(setup) == "a", what="a leads")
    contenders.start("b")
    wait_for(lambda: "a" in markers(server), what="a writes")
    os.kill(a.pid, signal.SIGSTOP)
    wait_for(lambda: holder(setup) == "b", what="b takes over")
    wait_for(lambda: "b" in markers(server), what="b writes")
    gets_before = lease_gets(server, "a")
    os.kill(a.pid, signal.SIGCONT)
    # a resumes: it must look at the lease (and find b there) before anything else, writing no marker.
    wait_for(lambda: lease_gets(server, "a") >= gets_before + 5, what="a resumes")
    wait_for(lambda: markers(server).count("b") >= 10, what="b keeps writing")
    assert holder(setup) == "b"
    # A process frozen between its last look at the clock and its request (SIGSTOP lands anywhere) sends that one
    # request when it thaws: no lease by time alone can stop it (client-go's leader election says the same), the
    # target's resourceVersion does (docs/daemon.md). What the fence must hold: nothing more after it resumes.
    assert_one_handoff(markers(server), "a", "b", in_flight=1)
    late = markers(server)
    wait_for(lambda: lease_gets(server, "a") >= gets_before + 15, what="a keeps watching the lease")
    assert markers(server)[: len(late)] == late and "a" not in markers(server)[len(late) :]


def test_sigterm_releases_the_lease_for_an_immediate_takeover(
    server: Any, setup: Setup, contenders: Contenders
) -> None:
    a = contenders.start("a")
    wait_for(lambda: holder(setup) == "a", what="a leads")
    contenders.start("b")
    wait_for(lambda: lease_gets(server, "b") >= 3, what="b contends")
    started = time.monotonic()
    a.terminate()
    wait_for(lambda: holder(setup) == "b", what="b takes over")
    elapsed = time.monotonic() - started
    assert a.wait(10) == 0
    # Without the release b would wait a whole lease duration after a's last renew.
    assert elapsed < LEASE_DURATION, f"takeover took {elapsed:.2f} s"
    releases = [
        r
        for r in server.audit.records(verb="update", resource="leases")
        if r.user_agent.endswith("contender/a") and r.code == 200
    ]
    assert releases, "a released its lease with an update"
    wait_for(lambda: "b" in markers(server), what="b writes")
    assert_one_handoff(markers(server), "a", "b")
