"""A Kubernetes API server emulator: the subset of kube-apiserver the autoscaler uses, over real HTTP.

Start one with `EmulatedApiServer` (a context manager) or `python -m autoscaler.sim.apiserver`. It serves
discovery, apps/v1 workloads with /scale, pods with label selectors, events, leases and custom resources
from CRDs, with resourceVersion semantics, watches, server-side tables for kubectl, a pod lifecycle model,
a fault injector and an audit log. docs/emulator.md lists what it implements and where it differs.
It must not import the autoscaler's own layers (kube, metrics, daemon): it stands in for the cluster.
"""

from autoscaler.sim.apiserver.audit import AuditLog, AuditRecord
from autoscaler.sim.apiserver.clock import Clock, FakeClock, RealClock
from autoscaler.sim.apiserver.command import main
from autoscaler.sim.apiserver.errors import ApiError
from autoscaler.sim.apiserver.faults import Fault, FaultInjector
from autoscaler.sim.apiserver.lifecycle import PodLifecycle
from autoscaler.sim.apiserver.pods import READY_DELAY_ANNOTATION, START_DELAY_ANNOTATION, TERMINATION_ANNOTATION
from autoscaler.sim.apiserver.server import EmulatedApiServer, default_crds, load_manifests

__all__ = [
    "READY_DELAY_ANNOTATION",
    "START_DELAY_ANNOTATION",
    "TERMINATION_ANNOTATION",
    "ApiError",
    "AuditLog",
    "AuditRecord",
    "Clock",
    "EmulatedApiServer",
    "FakeClock",
    "Fault",
    "FaultInjector",
    "PodLifecycle",
    "RealClock",
    "default_crds",
    "load_manifests",
    "main",
]
