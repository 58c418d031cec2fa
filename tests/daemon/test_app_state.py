"""A file spec removed while the daemon leads takes its state ConfigMap with it (emulator, real spec files)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from autoscaler.daemon.app import Daemon
from autoscaler.daemon.model import Origin
from autoscaler.daemon.observe import Observer
from autoscaler.daemon.recorder import FlightRecorder
from autoscaler.daemon.sources import FileSource, TargetDefaults
from autoscaler.kube.client import KubeClient
from autoscaler.kube.state import ConfigMapStateStore, state_name
from tests.daemon.fakes import FakeReconciler, StaticSource, spec_object, target
from tests.kube.conftest import NS, Setup

STATE_NS = "ops"
DEFAULTS = TargetDefaults(sync_period_seconds=15.0, dry_run=False, scale_to_zero=False)


class Elector:
    def __init__(self, leading: bool) -> None:
        self.leading = leading
        self.epoch = 1

    def is_leader(self) -> bool:
        return self.leading

    def start(self) -> None:
        pass

    def stop(self, timeout: float = 5.0) -> None:
        pass


def stored(setup: Setup) -> set[str]:
    items = setup.get(f"/api/v1/namespaces/{STATE_NS}/configmaps")["items"]
    return {cm["metadata"]["name"] for cm in items}


def write(path: Path, *names: str) -> None:
    path.write_text(yaml.safe_dump_all([spec_object(n, namespace=NS) for n in names]))


@pytest.mark.parametrize(
    ("change", "leading", "kept"),
    [
        pytest.param("delete the file", True, {"api"}, id="file deleted while leading: its state goes"),
        pytest.param(
            "remove a document", True, {"extra", "api"}, id="a document removed while leading: its state goes"
        ),
        pytest.param("break the file", True, {"web", "extra", "api"}, id="a broken file keeps its last good version"),
        pytest.param("delete the file", False, {"web", "extra", "api"}, id="a standby deletes nothing"),
    ],
)
def test_a_removed_file_spec_deletes_its_state(
    kube: KubeClient, setup: Setup, tmp_path: Path, change: str, leading: bool, kept: set[str]
) -> None:
    write(tmp_path / "web.yaml", "web", "extra")
    write(tmp_path / "api.yaml", "api")
    states = ConfigMapStateStore(kube, namespace=STATE_NS)
    for name in ("web", "extra", "api"):
        states.save(NS, name, {"desiredReplicas": 2})
    daemon = Daemon(
        reconciler=FakeReconciler(), sources=[FileSource([str(tmp_path)], defaults=DEFAULTS)], observer=Observer(),
        recorder=FlightRecorder(3), tick_seconds=1.0, shutdown_grace_seconds=1.0, elector=Elector(leading),
        states=states,
    )  # fmt: skip
    daemon.tick()
    if change == "delete the file":
        (tmp_path / "web.yaml").unlink()
    elif change == "remove a document":
        write(tmp_path / "web.yaml", "extra")
    else:
        (tmp_path / "web.yaml").write_text("spec: [unclosed\n")
    daemon.tick()
    assert stored(setup) == {state_name(NS, n) for n in kept}


def test_a_removed_custom_resource_keeps_its_stored_status_alone(kube: KubeClient, setup: Setup) -> None:
    states = ConfigMapStateStore(kube, namespace=STATE_NS)
    states.save(NS, "web", {"desiredReplicas": 2})
    source = StaticSource([target("web", namespace=NS, origin=Origin.RESOURCE)], origin=Origin.RESOURCE)
    daemon = Daemon(
        reconciler=FakeReconciler(), sources=[source], observer=Observer(), recorder=FlightRecorder(3),
        tick_seconds=1.0, shutdown_grace_seconds=1.0, states=states,
    )  # fmt: skip
    daemon.tick()
    source.targets = []
    daemon.tick()
    assert stored(setup) == {state_name(NS, "web")}
