"""Shadow mode end to end: the real daemon beside an HPA whose status.desiredReplicas the test sets, with a real
Prometheus. /metrics and the stored status show both counts and their difference; the scale is never written."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Stack, metric_samples, spec_document, write_spec
from tests.e2e.stack import DaemonProcess, scale_writes, wait_for
from tests.manifests import hpa_manifest
from tests.sim.conftest import NS

NAME = "shadowed"


def shadow_series(daemon: DaemonProcess, address: str) -> dict[str, float]:
    """The target's shadow series: ours, theirs and the difference, as /metrics shows them now."""
    _, body = daemon.get(address, "/metrics")
    out = {
        lab["side"]: value
        for lab, value in metric_samples(body, "autoscaler_shadow_desired_replicas")
        if lab.get("name") == NAME
    }
    for lab, value in metric_samples(body, "autoscaler_shadow_difference_replicas"):
        if lab.get("name") == NAME:
            out["difference"] = value
    return out


def stored_shadow(stack: Stack) -> Any:
    """The shadow block of the file spec's stored status (its state ConfigMap in the daemon's namespace)."""
    try:
        config_map = stack.emulator.get("v1", "ConfigMap", f"autoscaler-state.{NS}.{NAME}", namespace="default")
    except Exception:  # not written yet
        return None
    return json.loads(config_map["data"]["status"]).get("shadow")


def test_shadow_mode_beside_an_hpa_shows_both_counts_and_never_writes(stack: Stack) -> None:
    demand = stack.deploy(NAME, replicas=2, load=60)  # 30 requests/s per pod against 10: ours is 6
    stack.emulator.create(hpa_manifest(NAME, target=NAME, namespace=NS))
    stack.emulator.patch_status("autoscaling/v2", "HorizontalPodAutoscaler", NAME, {"desiredReplicas": 3}, namespace=NS)
    write_spec(stack.tmp / "specs", NAME, spec_document(NAME, window=5, mode="shadow"))
    daemon, address = stack.daemon(NAME, stack.tmp / "specs")
    daemon.start()
    try:
        wait_for(
            lambda: shadow_series(daemon, address) == {"ours": 6, "theirs": 3, "difference": 3},
            deadline_seconds=30,
            what="ours 6, theirs 3, difference 3 on /metrics",
        )
        wait_for(
            lambda: (s := stored_shadow(stack)) is not None and (s.get("theirs"), s.get("difference")) == (3, 3),
            deadline_seconds=10,
            what="the stored status with theirs 3 and difference 3",
        )
        # The HPA changes its mind: the daemon's watch sees it, and the two agree.
        stack.emulator.patch_status(
            "autoscaling/v2", "HorizontalPodAutoscaler", NAME, {"desiredReplicas": 6}, namespace=NS
        )
        wait_for(
            lambda: shadow_series(daemon, address) == {"ours": 6, "theirs": 6, "difference": 0},
            deadline_seconds=10,
            what="agreement on /metrics",
        )
        wait_for(lambda: (stored_shadow(stack) or {}).get("difference") == 0, deadline_seconds=10, what="stored 0")
        stored = stored_shadow(stack)
        assert stored["desiredReplicas"] == 6 and stored["source"] == "HorizontalPodAutoscaler shadowed"
        assert daemon.alive(), daemon.tail()
    finally:
        demand.value = 0
        daemon.terminate()
    assert scale_writes(stack.emulator.audit.records(name=NAME, namespace=NS)) == []
    assert stack.replicas(NAME) == 2
    decisions = daemon.events("decision", target=f"{NS}/{NAME}")
    assert decisions and all(d["dry_run"] and not d["wrote"] for d in decisions)
