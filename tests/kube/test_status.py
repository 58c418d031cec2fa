"""The custom resource: status written only when changed, with a re-read on 409; watched across namespaces."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.core.state import behavior_state_from_json
from autoscaler.core.types import BehaviorState, Condition, Recommendation
from autoscaler.kube.client import KubeClient
from autoscaler.kube.status import AutoscalerCache, AutoscalerStatus, StatusWriter
from tests.kube.conftest import NS, Setup
from tests.kube.test_cache import eventually

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
PATH = f"/apis/autoscaler.dev/v1alpha1/namespaces/{NS}/prometheusautoscalers"


def _status(desired: int = 4) -> AutoscalerStatus:
    return AutoscalerStatus(
        current_replicas=3,
        desired_replicas=desired,
        last_scale_time=T0,
        current_metrics=({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 80}}},),
        conditions=(Condition("AbleToScale", "True", "SucceededRescale", "the HPA controller was able to update"),),
        observed_generation=1,
        behavior_state=BehaviorState(recommendations=(Recommendation(4, T0),)),
        reference="Deployment/web",
        targets="80%/60%",
    )


def test_status_is_written_only_when_it_changes(kube: KubeClient, setup: Setup, server: Any) -> None:
    setup.autoscaler("web")
    writer = StatusWriter(kube, clock=lambda: T0)
    assert writer.write_status(NS, "web", _status())
    stored = setup.get(f"{PATH}/web")["status"]
    assert stored["currentReplicas"] == 3
    assert stored["desiredReplicas"] == 4
    assert stored["lastScaleTime"] == "2026-03-01T12:00:00Z"
    assert stored["reference"] == "Deployment/web"
    assert stored["conditions"][0]["type"] == "AbleToScale"
    assert stored["currentMetrics"][0]["resource"]["name"] == "cpu"
    assert behavior_state_from_json(stored["behaviorState"]).recommendations == (Recommendation(4, T0),)

    assert not writer.write_status(NS, "web", _status())
    assert writer.write_status(NS, "web", _status(desired=5))
    updates = server.audit.records(verb="update", subresource="status", user_agent=kube.settings.user_agent)
    assert [r.code for r in updates] == [200, 200]


def test_a_stale_object_is_reread_on_409(kube: KubeClient, setup: Setup, server: Any) -> None:
    setup.autoscaler("web")
    stale = setup.get(f"{PATH}/web")
    setup.patch(f"{PATH}/web", {"spec": {"maxReplicas": 20}})
    assert StatusWriter(kube, clock=lambda: T0).write_status(NS, "web", _status(), current=stale)
    updates = server.audit.records(verb="update", subresource="status", user_agent=kube.settings.user_agent)
    assert [r.code for r in updates] == [409, 200]
    obj = setup.get(f"{PATH}/web")
    assert obj["spec"]["maxReplicas"] == 20
    assert obj["status"]["desiredReplicas"] == 4


def test_a_cached_copy_that_lags_the_last_write_is_not_trusted_with_if_changed_false(
    kube: KubeClient, setup: Setup, server: Any
) -> None:
    """The cache still shows desired 4 after the writer stored 5; writing 4 again must reach the server."""
    setup.autoscaler("web")
    writer = StatusWriter(kube, clock=lambda: T0)
    assert writer.write_status(NS, "web", _status(desired=4))
    lagging = setup.get(f"{PATH}/web")
    assert writer.write_status(NS, "web", _status(desired=5), current=lagging)
    assert not writer.write_status(NS, "web", _status(desired=4), current=lagging), "equal to the copy: skipped"
    assert setup.get(f"{PATH}/web")["status"]["desiredReplicas"] == 5
    assert writer.write_status(NS, "web", _status(desired=4), current=lagging, if_changed=False)
    assert setup.get(f"{PATH}/web")["status"]["desiredReplicas"] == 4


def test_the_custom_resource_is_watched_in_the_configured_namespaces(kube: KubeClient, setup: Setup) -> None:
    setup.autoscaler("web", ns="shop")
    setup.autoscaler("queue", ns="ops")
    setup.autoscaler("other", ns="elsewhere")
    some = AutoscalerCache(kube, namespaces=["shop", "ops"], watch_timeout_seconds=30)
    every = AutoscalerCache(kube, watch_timeout_seconds=30)
    some.start()
    every.start()
    try:
        assert some.wait_for_sync(5) and every.wait_for_sync(5)
        assert sorted(o["metadata"]["name"] for o in some.items()) == ["queue", "web"]
        assert sorted(o["metadata"]["name"] for o in every.items()) == ["other", "queue", "web"]
        setup.autoscaler("api", ns="shop")
        eventually(lambda: some.get("shop", "api") is not None)
        eventually(lambda: len(every.items()) == 4)
        assert some.get("elsewhere", "other") is None
    finally:
        some.stop()
        every.stop()


def test_the_cache_keeps_an_object_without_its_managed_fields() -> None:
    """managedFields (the API server's field ownership) are dropped; the rest, status included, is kept as is."""
    from autoscaler.kube.status import cached_object

    meta = {"name": "web", "namespace": NS, "resourceVersion": "7", "labels": {"a": "b"}}
    obj = {"spec": {"maxReplicas": 3}, "status": {"desiredReplicas": 2}}
    managed = [{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}]
    assert cached_object({**obj, "metadata": {**meta, "managedFields": managed}}) == {**obj, "metadata": meta}
    assert cached_object({**obj, "metadata": meta}) == {**obj, "metadata": meta}
    assert cached_object(obj) == obj


def test_the_cache_keeps_the_status_as_text_and_gives_a_fresh_copy_at_each_read() -> None:
    """The status is stored as compact JSON (the largest part of the object, read only at a target's first sight
    and at status writes): each read decodes it anew, so a reader that changes what it got changes nothing."""
    from autoscaler.kube.status import cached_object

    status = {"desiredReplicas": 2, "behaviorState": {"recommendations": [{"replicas": 3, "time": "t"}]}}
    cached = cached_object({"metadata": {"name": "web"}, "status": status})
    first = cached["status"]
    assert first == status and first is not status
    first["desiredReplicas"] = 99
    assert cached.get("status") == status and sorted(cached) == ["metadata", "status"] and len(cached) == 2
    bare = cached_object({"metadata": {"name": "web"}})
    assert "status" not in bare and bare.get("status") is None and len(bare) == 1
    assert bare.text("status") is None and bare.text("spec") is None


def test_the_cache_keeps_the_spec_as_text_too() -> None:
    """The spec is kept as compact JSON as well: read fresh at each access, compared and kept as text."""
    from autoscaler.kube.status import cached_object

    spec = {"maxReplicas": 3, "metrics": [{"type": "Resource"}]}
    cached = cached_object({"metadata": {"name": "web"}, "spec": spec, "status": {"desiredReplicas": 1}})
    assert cached.text("spec") == '{"maxReplicas":3,"metrics":[{"type":"Resource"}]}'
    first = cached["spec"]
    assert first == spec and first is not spec and first is not cached["spec"]
    assert "spec" in cached and "status" in cached and "kind" not in cached
    assert sorted(cached) == ["metadata", "spec", "status"] and len(cached) == 3
    with pytest.raises(KeyError, match="metadata: only spec, status are kept as text"):
        cached.text("metadata")
    assert cached_object({"metadata": {}, "status": None})["status"] is None


def test_a_newer_version_takes_the_older_ones_equal_texts() -> None:
    from autoscaler.kube.status import cached_object

    old = cached_object({"metadata": {"name": "web"}, "spec": {"maxReplicas": 3}, "status": {"desiredReplicas": 1}})
    new = cached_object({"metadata": {"name": "web"}, "spec": {"maxReplicas": 3}, "status": {"desiredReplicas": 2}})
    assert new.text("spec") is not old.text("spec")
    new.share_texts(old)
    assert new.text("spec") is old.text("spec")  # equal: one copy
    assert new.text("status") == '{"desiredReplicas":2}' and new["status"] == {"desiredReplicas": 2}  # not equal
