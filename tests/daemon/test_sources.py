"""Spec sources: files hot-reloaded (a broken version keeps the last good one), and the custom resource."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from autoscaler.daemon.model import Origin, TargetKey
from autoscaler.daemon.sources import FileSource, ResourceSource, SpecProblem, TargetDefaults, merge
from autoscaler.kube.client import KubeClient
from autoscaler.kube.status import AutoscalerCache, CachedObject
from tests.daemon.fakes import spec_object, target
from tests.kube.conftest import NS, Setup
from tests.kube.test_cache import eventually

DEFAULTS = TargetDefaults(sync_period_seconds=15.0)


class Problems(list[SpecProblem]):
    def __call__(self, problem: SpecProblem) -> None:
        self.append(problem)


def write(path: Path, *objects: dict[str, Any], text: str | None = None, tick: list[int] | None = None) -> None:
    """Write a spec file and move its mtime forward, so a rewrite within one clock tick is still seen."""
    path.write_text(text if text is not None else yaml.safe_dump_all(objects))
    stamp = 1_700_000_000 + (tick.pop() if tick else 0)
    os.utime(path, (stamp, stamp))


def keys(targets: list[Any]) -> list[str]:
    return [str(t.key) for t in targets]


def max_replicas(targets: list[Any], name: str) -> int:
    return next(t.autoscaler.spec.max_replicas for t in targets if t.key.name == name)


def test_a_broken_file_keeps_its_last_good_version_until_fixed(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    write(path, spec_object("web", max_replicas=10))
    problems = Problems()
    source = FileSource([str(path)], defaults=DEFAULTS, on_problem=problems)
    assert keys(source.refresh()) == ["shop/web"]
    assert source.refresh()[0].source == f"{path}: document 1"

    write(path, text="apiVersion: autoscaler.dev/v1alpha1\nkind: [broken", tick=[1])
    assert keys(source.refresh()) == ["shop/web"]
    assert max_replicas(source.refresh(), "web") == 10
    assert len(problems) == 1, "reported once, not on every tick"
    assert problems[0].source == str(path) and "YAML" in problems[0].message
    assert source.counts() == {"valid": 1, "invalid": 1}

    invalid = spec_object("web", max_replicas=10)
    invalid["spec"]["maxReplicas"] = 0
    write(path, invalid, tick=[2])
    assert max_replicas(source.refresh(), "web") == 10
    assert "spec.maxReplicas" in problems[-1].message

    write(path, spec_object("web", max_replicas=20), tick=[3])
    assert max_replicas(source.refresh(), "web") == 20
    assert source.counts() == {"valid": 1, "invalid": 0}


def test_files_in_a_directory_come_and_go(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", spec_object("a"))
    (tmp_path / "notes.txt").write_text("not a spec")
    source = FileSource([str(tmp_path)], defaults=DEFAULTS)
    assert keys(source.refresh()) == ["shop/a"]
    write(tmp_path / "b.yml", spec_object("b", namespace="ops"))
    assert keys(source.refresh()) == ["ops/b", "shop/a"]
    (tmp_path / "a.yaml").unlink()
    assert keys(source.refresh()) == ["ops/b"]


def test_an_unchanged_file_is_not_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    write(path, spec_object("web"))
    source = FileSource([str(path)], defaults=DEFAULTS)
    first = source.refresh()[0]
    assert source.refresh()[0] is first
    os.utime(path, (1_800_000_000, 1_800_000_000))  # touched, same content: the hash says unchanged
    assert source.refresh()[0] is first


def test_a_missing_path_is_reported_once(tmp_path: Path) -> None:
    problems = Problems()
    source = FileSource([str(tmp_path / "nope.yaml")], defaults=DEFAULTS, on_problem=problems)
    assert source.refresh() == [] and source.refresh() == []
    assert [p.kind for p in problems] == ["spec_file_unreadable"]


def test_the_spec_or_the_daemon_gives_the_sync_period_and_dry_run(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    write(path, spec_object("web"))
    (t,) = FileSource([str(path)], defaults=TargetDefaults(sync_period_seconds=30.0, dry_run=True)).refresh()
    assert t.sync_period_seconds == 30.0
    assert t.dry_run is True
    assert t.origin == Origin.FILE


def test_the_custom_resource_wins_a_clash_with_a_file() -> None:
    from_file = replace(target("web", origin=Origin.FILE), source="specs/web.yaml: document 1")
    from_cluster = replace(target("web", origin=Origin.RESOURCE), source="PrometheusAutoscaler shop/web")
    other = target("api", origin=Origin.FILE)
    merged, duplicates = merge([[from_cluster], [from_file, other]])
    assert [(str(t.key), t.origin) for t in merged] == [("shop/api", Origin.FILE), ("shop/web", Origin.RESOURCE)]
    assert [(str(d.key), d.kept, d.ignored) for d in duplicates] == [
        ("shop/web", "PrometheusAutoscaler shop/web", "specs/web.yaml: document 1")
    ]
    merged, duplicates = merge([[from_file], [from_cluster]])
    assert [t.origin for t in merged] == [Origin.RESOURCE]
    assert duplicates[0].ignored == "specs/web.yaml: document 1"


PATH = f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers"


def test_resource_source_reads_the_cluster_and_reports_an_invalid_object(kube: KubeClient, setup: Setup) -> None:
    setup.post(PATH, {**spec_object("web"), "metadata": {"name": "web", "namespace": NS, "labels": {"team": "a"}}})
    setup.post(PATH, {**spec_object("api"), "metadata": {"name": "api", "namespace": NS, "labels": {"team": "b"}}})
    bad = spec_object("broken")
    # Accepted by the API server's schema (an unknown metric source type is not), refused by the spec rules.
    bad["spec"]["metrics"][0]["resource"]["target"] = {"type": "Utilization"}
    bad["metadata"]["labels"] = {"team": "a"}
    setup.post(PATH, bad)
    cache = AutoscalerCache(kube, namespaces=[NS])
    cache.start()
    try:
        assert cache.wait_for_sync(10)
        problems = Problems()
        source = ResourceSource(cache, defaults=DEFAULTS, label_selector="team=a", on_problem=problems)
        targets = source.refresh()
        assert keys(targets) == [f"{NS}/web"], "api is not selected; broken is reported and skipped"
        (web,) = targets
        assert web.origin == Origin.RESOURCE and web.uid and web.stored is not None
        assert web.source == f"PrometheusAutoscaler {NS}/web"  # named in snapshots, plan and log lines
        assert [p.key for p in problems] == [TargetKey(NS, "broken")]
        assert problems[0].source == f"PrometheusAutoscaler {NS}/broken"
        assert "averageUtilization" in problems[0].message and problems[0].obj is not None
        source.refresh()
        assert len(problems) == 1, "the same resourceVersion is reported once"

        setup.patch(f"{PATH}/web", {"spec": {"maxReplicas": 7}})
        eventually(lambda: max_replicas(source.refresh(), "web") == 7)
        setup.delete(f"{PATH}/web")
        eventually(lambda: source.refresh() == [])
        assert source.counts() == {"valid": 0, "invalid": 1}
    finally:
        cache.stop()


def test_a_missing_spec_path_counts_as_invalid_until_it_appears(tmp_path: Path) -> None:
    present, absent = tmp_path / "web.yaml", tmp_path / "api.yaml"
    write(present, spec_object("web"))
    problems = Problems()
    source = FileSource([str(present), str(absent)], defaults=DEFAULTS, on_problem=problems)
    assert keys(source.refresh()) == ["shop/web"]
    assert source.counts() == {"valid": 1, "invalid": 1}
    assert [p.kind for p in problems] == ["spec_file_unreadable"]
    write(absent, spec_object("api"))
    assert keys(source.refresh()) == ["shop/api", "shop/web"]
    assert source.counts() == {"valid": 2, "invalid": 0}


def test_a_status_write_keeps_the_parsed_spec_and_stores_the_new_object(kube: KubeClient, setup: Setup) -> None:
    """The daemon's own status writes change an object's resourceVersion every refresh: its spec is not parsed
    again (the same Autoscaler value), but the target carries the new object (status and resourceVersion,
    for the next status write's comparison); a spec change is parsed again."""
    from autoscaler.kube.status import AutoscalerStatus, StatusWriter

    setup.post(PATH, spec_object("web"))
    cache = AutoscalerCache(kube, namespaces=[NS])
    cache.start()
    try:
        assert cache.wait_for_sync(10)
        source = ResourceSource(cache, defaults=DEFAULTS)
        (first,) = source.refresh()
        assert first.stored is not None and "status" not in first.stored
        # the spec's document is the cache's own text of it, not a copy; the model is made from it on demand
        assert isinstance(first.stored, CachedObject)
        assert first.autoscaler.document is first.stored.text("spec") and first.autoscaler.kept_model is None
        assert first.autoscaler.model.max_replicas == first.stored["spec"]["maxReplicas"]
        version = first.stored["metadata"]["resourceVersion"]
        assert StatusWriter(kube).write_status(NS, "web", AutoscalerStatus(current_replicas=2, desired_replicas=3))

        def written() -> bool:
            (now,) = source.refresh()
            return now.stored is not None and now.stored["metadata"]["resourceVersion"] != version

        eventually(written)
        (second,) = source.refresh()
        assert second.autoscaler is first.autoscaler, "the spec was not parsed again"
        assert second.stored is not None and second.stored["status"]["desiredReplicas"] == 3
        assert (second.uid, second.generation) == (first.uid, first.generation)

        setup.patch(f"{PATH}/web", {"spec": {"maxReplicas": 7}})
        eventually(lambda: max_replicas(source.refresh(), "web") == 7)
        (third,) = source.refresh()
        assert third.autoscaler is not first.autoscaler
        assert third.stored is not None and third.stored["status"]["desiredReplicas"] == 3
    finally:
        cache.stop()
