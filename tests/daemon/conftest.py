"""The kube layer's emulator fixtures (server, setup, kube), shared with the daemon's tests."""

from tests.kube.conftest import kube, server, setup

__all__ = ["kube", "server", "setup"]
