"""A queue worker scaled to zero and back by the real daemon, on the load model's `queue_depth` series scraped
by a real Prometheus: idle -> 0 after the cooldown, a backlog -> 0 to N, drained -> 0 again."""

from __future__ import annotations

import json
from typing import Any

from autoscaler.sim.load import Series, Workload, WorkloadRef
from tests.e2e.conftest import Demand, Stack, write_spec
from tests.e2e.stack import wait_for
from tests.sim.conftest import NS, workload

COOLDOWN_SECONDS = 3
ITEMS_PER_REPLICA = 10  # the External AverageValue target: backlog items per replica
PERCENT_100_PER_SECOND = {"type": "Percent", "value": 100, "periodSeconds": 1}


def queue_worker(stack: Stack, name: str, *, replicas: int, arrivals: float, capacity: float) -> Demand:
    """A Deployment consuming a queue: `arrivals` items/s join it, each ready pod takes `capacity` items/s."""
    stack.emulator.create(workload("Deployment", name, replicas=replicas))
    demand = Demand(arrivals)
    stack.generator.add(
        Workload(WorkloadRef(NS, "Deployment", name), demand, series=frozenset({Series.QUEUE}), capacity=capacity)
    )
    return demand


def queue_spec(name: str, **extra: Any) -> dict[str, Any]:
    """A PrometheusAutoscaler on the External metric queue_depth of the worker's queue (a raw query)."""
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 0,
            "maxReplicas": 5,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "queue_depth"},
                        "target": {"type": "AverageValue", "averageValue": str(ITEMS_PER_REPLICA)},
                    },
                    "prometheus": {"query": f'sum(queue_depth{{namespace="{NS}",queue="{name}"}})'},
                }
            ],
            "behavior": {
                "scaleDown": {"stabilizationWindowSeconds": 0, "policies": [PERCENT_100_PER_SECOND]},
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}],
                },
            },
            **extra,
        },
    }


def events(stack: Stack, name: str, reason: str) -> list[dict[str, Any]]:
    return [
        e
        for e in stack.emulator.list("v1", "Event", namespace=NS)
        if e["involvedObject"]["name"] == name and e["reason"] == reason
    ]


def stored_status(stack: Stack, name: str) -> dict[str, Any]:
    """The status document the daemon stored for a file spec (its ConfigMap)."""
    try:
        config_map = stack.emulator.get("v1", "ConfigMap", f"autoscaler-state.{NS}.{name}", namespace=NS)
    except Exception:  # not written yet
        return {}
    status = json.loads(config_map.get("data", {}).get("status", "{}"))
    assert isinstance(status, dict)
    return status


def condition(stack: Stack, name: str, type_: str) -> tuple[str, str] | None:
    found = [c for c in stored_status(stack, name).get("conditions", []) if c.get("type") == type_]
    return (found[0]["status"], found[0]["reason"]) if found else None


def test_a_queue_worker_goes_to_zero_wakes_on_a_backlog_and_returns_to_zero(stack: Stack) -> None:
    demand = queue_worker(stack, "zq", replicas=1, arrivals=0, capacity=20)
    write_spec(stack.tmp / "specs", "zq", queue_spec("zq", scaleToZero={"cooldownSeconds": COOLDOWN_SECONDS}))
    daemon, _ = stack.daemon("zq", stack.tmp / "specs")
    daemon.start()
    try:
        wait_for(lambda: stack.replicas("zq") == 0, deadline_seconds=20, what="idle: to zero", explain=daemon.tail)
        zeroed = wait_for(lambda: events(stack, "zq", "SuccessfulRescale"), deadline_seconds=5, what="the event")
        assert "scaled to zero: every metric at or below its activation threshold" in zeroed[-1]["message"]
        wait_for(
            lambda: condition(stack, "zq", "ScaledToZero") == ("True", "ScaledToZero"),
            deadline_seconds=5,
            what="ScaledToZero True in the stored status",
        )
        demand.value = 60  # 60 items/s into an unconsumed queue: a backlog
        wait_for(lambda: stack.replicas("zq") >= 1, deadline_seconds=15, what="woken from zero", explain=daemon.tail)
        wait_for(  # the Event follows the scale write of the same tick
            lambda: [e for e in events(stack, "zq", "SuccessfulRescale") if "activated from zero" in e["message"]],
            deadline_seconds=5,
            what="the activation's event",
        )
        wait_for(lambda: stack.replicas("zq") >= 2, deadline_seconds=15, what="scaled out on the backlog")
        wait_for(  # stored after the scale write of the same tick
            lambda: condition(stack, "zq", "ScaledToZero") == ("False", "NotScaledToZero"),
            deadline_seconds=5,
            what="ScaledToZero False after the scale-up",
        )
        demand.value = 0  # the workers drain the backlog, then the queue stays empty
        wait_for(lambda: stack.replicas("zq") == 0, deadline_seconds=30, what="back to zero", explain=daemon.tail)
        last = wait_for(  # the log line follows the tick's writes
            lambda: [d for d in daemon.events("decision", target=f"{NS}/zq") if d.get("rescale") and d["desired"] == 0],
            deadline_seconds=5,
            what="the decision to go to zero again",
        )[-1]
        assert f"(cooldown {COOLDOWN_SECONDS} s)" in last["summary"], last
    finally:
        daemon.terminate()
