"""The emulator's command (`python -m autoscaler.sim.apiserver`): serve until SIGTERM or SIGINT.

    python -m autoscaler.sim.apiserver --port 8001 --crd my-crd.yaml --seed objects.yaml

It prints its URL on the first line of stdout (for `kubectl --server=URL` or a client's host), loads the
project's own CRD unless `--crd` files are given, and pre-creates the objects of every `--seed` file.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from autoscaler.sim.apiserver.server import CRD_KIND, EmulatedApiServer, default_crds, load_manifests


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m autoscaler.sim.apiserver", description="Run the Kubernetes API emulator."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8001, help="port to listen on; 0 picks a free one (default: 8001)")
    parser.add_argument(
        "--crd",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a YAML file of CustomResourceDefinitions to serve (repeatable; default: the project's own)",
    )
    parser.add_argument(
        "--seed",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a YAML file of manifests to create at start (repeatable)",
    )
    parser.add_argument(
        "--start-delay-seconds",
        type=float,
        default=2.0,
        help="default time from a pod's creation to Running (default: 2)",
    )
    parser.add_argument(
        "--ready-delay-seconds", type=float, default=3.0, help="default time from Running to Ready (default: 3)"
    )
    return parser  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        crds = default_crds()
        if args.crd:
            crds = [d for f in args.crd for d in load_manifests(f.read_text()) if d.get("kind") == CRD_KIND]
        seed = [d for f in args.seed for d in load_manifests(f.read_text())]
        server = EmulatedApiServer(
            host=args.host,
            port=args.port,
            crds=crds,
            seed=seed,
            start_delay_seconds=args.start_delay_seconds,
            ready_delay_seconds=args.ready_delay_seconds,
        )
        server.start()
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(server.url, flush=True)
    try:
        stop.wait()
    finally:
        server.stop()
    return 0
