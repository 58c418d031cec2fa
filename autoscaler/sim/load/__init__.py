"""A load model for the emulator: replays a demand curve onto the ready pods of named workloads and serves
the per-pod series real exporters publish (cAdvisor's `container_cpu_usage_seconds_total`, a request counter,
a queue-depth gauge) on `/metrics`, for a real Prometheus to scrape.

Like the emulator it stands alone: it reads pods from the API server over HTTP and must not import the
autoscaler's own layers (kube, metrics, spec, daemon). docs/emulator.md ("The load model") has the formulas.
"""

from autoscaler.sim.load.command import main
from autoscaler.sim.load.curve import Curve, CurveError, Timeline, Trace, constant, parse_steps, read_trace, steps
from autoscaler.sim.load.exporter import LoadGenerator
from autoscaler.sim.load.model import Container, LoadModel, PodState, Series, Workload, WorkloadRef
from autoscaler.sim.load.pods import ApiPods, PodSourceError, pod_state

__all__ = [
    "ApiPods",
    "Container",
    "Curve",
    "CurveError",
    "LoadGenerator",
    "LoadModel",
    "PodSourceError",
    "PodState",
    "Series",
    "Timeline",
    "Trace",
    "Workload",
    "WorkloadRef",
    "constant",
    "main",
    "parse_steps",
    "pod_state",
    "read_trace",
    "steps",
]
