"""The emulator fixtures of the Kubernetes layer's tests, for the daemon's resource source."""

from tests.kube.conftest import kube, server, setup  # noqa: F401  # fixtures, used by name
