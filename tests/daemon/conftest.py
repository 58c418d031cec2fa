"""The kube layer's emulator fixtures (server, setup, kube) and the metric layer's real Prometheus, shared."""

from tests.kube.conftest import kube, server, setup
from tests.metrics.conftest import base_time, prometheus, push

__all__ = ["base_time", "kube", "prometheus", "push", "server", "setup"]
