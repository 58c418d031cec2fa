"""A leader-election contender process for tests/kube/test_leader_processes.py (not a test module).

`python -m tests.kube.leader_contender URL IDENTITY` runs `LeaderElector.run` with lease 2 s / renew 1.5 s /
retry 0.2 s and, while `is_leader()` is true, creates a marker Event every 20 ms through a second client
(User-Agent `...marker/IDENTITY`), so the emulator's audit log shows when each process believed it led.
SIGUSR1 cuts this process off from the Lease only (its lease client points at a closed port, its marker
client still reaches the server: a partition that the fence must cover); SIGTERM stops and releases.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from types import FrameType

from autoscaler.kube.client import USER_AGENT, ClientSettings, connect
from autoscaler.kube.events import EventRecorder, InvolvedObject
from autoscaler.kube.leader import LeaderElectionConfig, LeaderElector

NAMESPACE = "shop"
LEASE = "prometheus-autoscaler"


def main(url: str, identity: str) -> int:
    settings = ClientSettings(
        server=url, user_agent=f"{USER_AGENT} contender/{identity}", connect_timeout_seconds=0.5, read_timeout_seconds=1
    )
    lease_client = connect(settings)
    marker_client = connect(
        ClientSettings(server=url, user_agent=f"{USER_AGENT} marker/{identity}", read_timeout_seconds=1)
    )
    config = LeaderElectionConfig(
        namespace=NAMESPACE,
        name=LEASE,
        identity=identity,
        lease_duration_seconds=2.0,
        renew_deadline_seconds=1.5,
        retry_period_seconds=0.2,
    )
    elector = LeaderElector(lease_client, config)
    stop = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    def on_partition(signum: int, frame: FrameType | None) -> None:
        # Nothing listens on port 1: every lease request now fails at once, like a partition.
        lease_client.api_client.configuration.host = "http://127.0.0.1:1"

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGUSR1, on_partition)

    loop = threading.Thread(target=elector.run, args=(stop,), daemon=True)
    loop.start()
    recorder = EventRecorder(marker_client, component="leader-test")
    lease = InvolvedObject("coordination.k8s.io/v1", "Lease", LEASE, NAMESPACE)
    seq = 0
    print(f"{identity} ready", flush=True)
    while not stop.is_set():
        if elector.is_leader():
            seq += 1
            recorder.normal(lease, "LeaderMarker", f"{identity} {seq}")  # best effort: never raises
        time.sleep(0.02)
    loop.join(5)
    print(f"{identity} stopped after {seq} markers", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
