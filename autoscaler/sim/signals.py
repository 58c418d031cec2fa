"""Waiting for SIGTERM or SIGINT: how the emulator's commands (the API server, the load model) run until stopped."""

from __future__ import annotations

import signal
import threading
from types import FrameType


def wait_for_stop_signal() -> None:
    """Block until SIGTERM or SIGINT arrives (call from the main thread)."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stop.wait()
