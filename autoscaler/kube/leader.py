"""Leader election on a coordination.k8s.io/v1 Lease: acquire, renew, release, and a time-based fence.

Kubernetes has no server-side fence, so the guarantee is by time, as client-go's leaderelection gives it
(docs/leader-election.md has the argument in full):

- a leader counts its lease from the moment it *sent* its last successful renew (monotonic clock) and
  `is_leader()` turns False the instant `renew_deadline` has passed since then, renewed or not;
- a contender may take the lease over only after it has seen the same lease record unchanged for
  `lease_duration` on its own monotonic clock, counted from *after* its read returned;
- `lease_duration > renew_deadline`, so the old leader stops writing before anyone else can start.

A released lease (empty holderIdentity) is taken at once. This module writes its own loop instead of using
`kubernetes.leaderelection`, which calls sys.exit() on bad settings, blocks forever and never releases.
It must not do the work the leader is elected for: callers check `is_leader()` right before each write.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog

from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import Conflict, KubeError, NotFound, RequestContext

log = structlog.get_logger(__name__)

# client-go's JitterFactor: a contender waits retry_period * (1 + U(0, 1.2)) between tries.
JITTER_FACTOR = 1.2
MIN_RETRY_SECONDS = 0.1  # the shortest wait between two attempts of a leader whose renewals fail


class LeaderElectionConfigError(ValueError):
    """Durations that cannot give the time-based guarantee."""


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """Defaults are client-go's (and kube-controller-manager's): 15 s / 10 s / 2 s."""

    namespace: str
    name: str
    identity: str
    lease_duration_seconds: float = 15.0
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0

    def __post_init__(self) -> None:
        if not self.identity:
            raise LeaderElectionConfigError("identity must not be empty")
        if not self.lease_duration_seconds > self.renew_deadline_seconds:
            raise LeaderElectionConfigError("lease_duration_seconds must be greater than renew_deadline_seconds")
        if not self.renew_deadline_seconds > JITTER_FACTOR * self.retry_period_seconds:
            raise LeaderElectionConfigError(
                f"renew_deadline_seconds must be greater than {JITTER_FACTOR} x retry_period_seconds"
            )
        if self.retry_period_seconds <= 0:
            raise LeaderElectionConfigError("retry_period_seconds must be positive")


def _micro_time(when: datetime) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds, UTC."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _record(lease: dict[str, Any]) -> tuple[str, Any, Any, Any, Any]:
    """What identifies one lease record; a change means its holder is alive (or someone else took it)."""
    spec = lease.get("spec") or {}
    return (
        str(spec.get("holderIdentity") or ""),
        spec.get("renewTime"),
        spec.get("acquireTime"),
        spec.get("leaseTransitions"),
        spec.get("leaseDurationSeconds"),
    )


def _acquisition(lease: dict[str, Any]) -> tuple[Any, Any, Any]:
    """What identifies one leadership of a lease: a renew keeps it; a takeover or a re-create changes it."""
    spec = lease.get("spec") or {}
    return ((lease.get("metadata") or {}).get("uid"), spec.get("acquireTime"), spec.get("leaseTransitions"))


class LeaderElector:
    """One contender for one Lease. `run()` loops until stopped; `is_leader()` is safe from any thread."""

    def __init__(
        self,
        kube: KubeClient,
        config: LeaderElectionConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
    ) -> None:
        self._kube = kube
        self.config = config
        self._clock = clock
        self._wall = wall_clock
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._lock = threading.Lock()
        # The monotonic time at which the last successful acquire/renew request was sent; None: not leader.
        self._renewed_at: float | None = None
        self._observed: tuple[str, Any, Any, Any, Any] | None = None
        self._observed_at = 0.0
        self._was_leader = False
        self._epoch = 0  # acquisitions so far: a new one each time our write starts a new acquisition key
        self._acquired: tuple[Any, Any, Any] | None = None  # the acquisition key of our last successful write
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- the fence -----------------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """True only while the last successful renew was sent less than `renew_deadline` ago."""
        with self._lock:
            renewed_at = self._renewed_at
        return renewed_at is not None and self._clock() - renewed_at < self.config.renew_deadline_seconds

    @property
    def epoch(self) -> int:
        """How many leaderships this contender has had: one more each time a successful write of the lease
        carries another acquisition (uid, acquireTime, leaseTransitions) than its previous successful write.
        A change means another contender may have led in between. A renew of the lease still naming this
        contender with the acquisition of its last write, even one after the renew deadline passed (not
        leading for a while), is the same epoch: nobody can have led while the lease named it."""
        with self._lock:
            return self._epoch

    def leader_until(self) -> float | None:
        """The monotonic time at which `is_leader()` turns False unless renewed; None when not leading."""
        with self._lock:
            renewed_at = self._renewed_at
        return None if renewed_at is None else renewed_at + self.config.renew_deadline_seconds

    # --- one attempt -------------------------------------------------------------------------------

    def _context(self, verb: str) -> RequestContext:
        return RequestContext(
            verb=verb,
            resource="leases",
            group="coordination.k8s.io",
            namespace=self.config.namespace,
            name=self.config.name,
        )

    def _timeout(self) -> tuple[float, float]:
        # A renew that hangs must not outlive the renew deadline by much; safety does not depend on it.
        half = max(self.config.renew_deadline_seconds / 2, 0.1)
        return (min(self._kube.settings.connect_timeout_seconds, half), half)

    def _get(self) -> dict[str, Any]:
        return self._kube.request_json(
            self._kube.coordination.read_namespaced_lease,
            self.config.name,
            self.config.namespace,
            context=self._context("get"),
            timeout=self._timeout(),
        )

    def _spec(self, *, acquire_time: str, transitions: int, holder: str, duration: int) -> dict[str, Any]:
        return {
            "holderIdentity": holder,
            "leaseDurationSeconds": duration,
            "acquireTime": acquire_time,
            "renewTime": _micro_time(self._wall()),
            "leaseTransitions": transitions,
        }

    def _duration_field(self) -> int:
        # leaseDurationSeconds is an integer in the API; round up so others never wait less than we assume.
        return max(1, int(-(-self.config.lease_duration_seconds // 1)))

    def try_acquire_or_renew(self) -> bool:
        """One attempt: create the lease, renew ours, or take over a released or expired one."""
        sent_at = self._clock()
        try:
            lease = self._get()
        except NotFound:
            now = _micro_time(self._wall())
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.config.name, "namespace": self.config.namespace},
                "spec": self._spec(
                    acquire_time=now, transitions=0, holder=self.config.identity, duration=self._duration_field()
                ),
            }
            try:
                created = self._kube.request_json(
                    self._kube.coordination.create_namespaced_lease,
                    self.config.namespace,
                    body,
                    context=self._context("create"),
                    timeout=self._timeout(),
                )
            except Conflict:
                return False  # Someone else created it first.
            self._became_holder(created, sent_at)
            return True
        observed_at = self._clock()
        record = _record(lease)
        with self._lock:
            if record != self._observed:
                self._observed = record
                self._observed_at = observed_at
            seen_since = self._observed_at
        holder = record[0]
        spec = lease.get("spec") or {}
        if holder and holder != self.config.identity:
            duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration_seconds)
            if self._clock() < seen_since + duration:
                self._lost()
                return False  # Held by another contender whose lease has not expired on our clock.
        if holder == self.config.identity:
            acquire_time = str(spec.get("acquireTime") or _micro_time(self._wall()))
            transitions = int(spec.get("leaseTransitions") or 0)
        else:
            acquire_time = _micro_time(self._wall())
            transitions = int(spec.get("leaseTransitions") or 0) + 1
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.config.name,
                "namespace": self.config.namespace,
                "resourceVersion": (lease.get("metadata") or {}).get("resourceVersion"),
            },
            "spec": self._spec(
                acquire_time=acquire_time,
                transitions=transitions,
                holder=self.config.identity,
                duration=self._duration_field(),
            ),
        }
        try:
            updated = self._kube.request_json(
                self._kube.coordination.replace_namespaced_lease,
                self.config.name,
                self.config.namespace,
                body,
                context=self._context("update"),
                timeout=self._timeout(),
            )
        except Conflict:
            return False  # The lease changed under us: someone renewed or took it. Look again next time.
        self._became_holder(updated, sent_at)
        return True

    def _became_holder(self, lease: dict[str, Any], sent_at: float) -> None:
        acquisition = _acquisition(lease)
        with self._lock:
            # Any takeover moves the acquisition: another holder's sets a new acquireTime and one more
            # leaseTransitions, a re-created Lease has a new uid. Comparing with our own last successful write
            # (not with what we meant to write) also catches a takeover of ours whose answer was lost (the server
            # applied it, we saw a timeout) after another holder led: our next renew carries that takeover's
            # acquisition, not the one of our last write.
            if acquisition != self._acquired:
                self._epoch += 1
                self._acquired = acquisition
            self._renewed_at = sent_at
            self._observed = _record(lease)
            self._observed_at = sent_at

    def _lost(self) -> None:
        with self._lock:
            self._renewed_at = None

    # --- release -------------------------------------------------------------------------------------

    def release(self) -> bool:
        """Stop leading at once, then hand the lease back (empty holder) so another replica takes over now."""
        with self._lock:
            self._renewed_at = None  # Stop writing before the lease is given up.
            ever_held = self._observed is not None and self._observed[0] == self.config.identity
        if not ever_held:
            return False
        # Even past our own renew deadline the lease may still name us: hand it back all the same. The write
        # carries the resourceVersion read, so it cannot undo a takeover that happened in between.
        try:
            lease = self._get()
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.config.identity:
                return False
            now = _micro_time(self._wall())
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": self.config.name,
                    "namespace": self.config.namespace,
                    "resourceVersion": (lease.get("metadata") or {}).get("resourceVersion"),
                },
                "spec": {
                    "holderIdentity": "",
                    "leaseDurationSeconds": 1,
                    "acquireTime": now,
                    "renewTime": now,
                    "leaseTransitions": int(spec.get("leaseTransitions") or 0),
                },
            }
            self._kube.request_json(
                self._kube.coordination.replace_namespaced_lease,
                self.config.name,
                self.config.namespace,
                body,
                context=self._context("update"),
                timeout=self._timeout(),
            )
        except KubeError as err:
            log.warning("leader_release_failed", lease=self.config.name, error=str(err))
            return False
        log.info("leader_released", lease=self.config.name, identity=self.config.identity)
        return True

    # --- the loop ------------------------------------------------------------------------------------

    def _notify(self) -> None:
        leading = self.is_leader()
        if leading == self._was_leader:
            return
        self._was_leader = leading
        log.info(
            "leader_started" if leading else "leader_stopped", lease=self.config.name, identity=self.config.identity
        )
        callback = self._on_started if leading else self._on_stopped
        if callback is not None:
            callback()

    def run(self, stop: threading.Event | None = None, *, release_on_stop: bool = True) -> None:
        """Try to acquire, then renew every retry period, until `stop` is set; then release the lease."""
        stop = stop or self._stop
        try:
            while not stop.is_set():
                try:
                    self.try_acquire_or_renew()
                except KubeError as err:
                    log.warning("leader_renew_failed", lease=self.config.name, error=str(err))
                self._notify()
                stop.wait(self.next_wait())
        finally:
            if release_on_stop:
                self.release()
            self._notify()

    def next_wait(self) -> float:
        """How long `run` waits before its next attempt: the retry period (with jitter while not leading), and
        while leading at most half the time left before the fence closes, so a renew comes before the deadline can
        pass; renewals that keep failing near it are still spaced (at most ten a second), not halved towards zero."""
        period = self.config.retry_period_seconds
        if not self.is_leader():
            return period * (1 + random.uniform(0, JITTER_FACTOR))
        until = self.leader_until()
        if until is None:
            return period
        return max(min(period, max(0.0, until - self._clock()) / 2), min(period, MIN_RETRY_SECONDS))

    def start(self) -> None:
        """Run the loop on a daemon thread."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name=f"leader-{self.config.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and release the lease; returns once the thread has ended (or timeout)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
