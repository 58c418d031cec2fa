"""The custom resource: status written only when changed, with a re-read on 409; watched across namespaces."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.core.state import behavior_state_from_json
from autoscaler.core.types import BehaviorState, Condition, Recommendation
from autoscaler.kube.client import KubeClient
from autoscaler.kube.errors import Conflict
from autoscaler.kube.status import AutoscalerCache, AutoscalerStatus, StatusWriter, status_to_json, unpack_status
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


def test_a_cached_copy_that_lags_the_last_write_is_not_trusted_by_write_document(
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
    assert writer.write_document(NS, "web", status_to_json(_status(desired=4), previous=None, now=T0), current=lagging)
    assert setup.get(f"{PATH}/web")["status"]["desiredReplicas"] == 4


def test_a_document_is_written_as_given_and_again_after_a_409(kube: KubeClient, setup: Setup, server: Any) -> None:
    """The daemon's path: the document it planned is stored unchanged (its transition times too), whatever the
    cached copy holds; a stale copy costs a re-read and the same document again."""
    setup.autoscaler("web")
    writer = StatusWriter(kube, clock=lambda: T0)
    assert writer.write_status(NS, "web", _status(desired=4))
    stale = setup.get(f"{PATH}/web")
    setup.patch(f"{PATH}/web", {"spec": {"maxReplicas": 20}})
    document = {
        "currentReplicas": 3,
        "desiredReplicas": 6,
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "reason": "ReadyForNewScale",
                "message": "recommended size matches current size",
                "lastTransitionTime": "2026-02-01T00:00:00Z",
            }
        ],
    }
    writer.write_document(NS, "web", document, current=stale)
    updates = server.audit.records(verb="update", subresource="status", user_agent=kube.settings.user_agent)
    assert [r.code for r in updates] == [200, 409, 200]
    obj = setup.get(f"{PATH}/web")
    assert obj["status"] == document
    assert obj["spec"]["maxReplicas"] == 20

    # A cached copy that already holds the document proves nothing (it may lag a write): written all the same.
    writer.write_document(NS, "web", document, current=obj)
    updates = server.audit.records(verb="update", subresource="status", user_agent=kube.settings.user_agent)
    assert [r.code for r in updates] == [200, 409, 200, 200]


def test_a_document_write_stops_when_the_fence_closes_after_a_409(kube: KubeClient, setup: Setup, server: Any) -> None:
    """A replica that lost the lease while its write met a 409 writes nothing on the re-read."""
    setup.autoscaler("web")
    stale = setup.get(f"{PATH}/web")
    setup.patch(f"{PATH}/web", {"spec": {"maxReplicas": 20}})
    asked: list[bool] = []

    def may_write() -> bool:
        asked.append(not asked)  # the lease held for the first attempt only
        return asked[-1]

    written = StatusWriter(kube).write_document(NS, "web", {"currentReplicas": 1}, current=stale, may_write=may_write)
    assert not written and asked == [True, False]
    updates = server.audit.records(verb="update", subresource="status", user_agent=kube.settings.user_agent)
    assert [r.code for r in updates] == [409]
    assert "status" not in setup.get(f"{PATH}/web")


def test_a_document_write_gives_up_after_its_conflicts(kube: KubeClient, setup: Setup, server: Any) -> None:
    """More 409s than `max_conflicts` re-reads: the Conflict is raised, nothing else written."""
    setup.autoscaler("web")
    stale = setup.get(f"{PATH}/web")
    setup.patch(f"{PATH}/web", {"spec": {"maxReplicas": 20}})
    with pytest.raises(Conflict):
        StatusWriter(kube, max_conflicts=0).write_document(NS, "web", {"currentReplicas": 1}, current=stale)
    updates = server.audit.records(verb="update", subresource="status", user_agent=kube.settings.user_agent)
    assert [r.code for r in updates] == [409]
    assert "status" not in setup.get(f"{PATH}/web")


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


def test_the_cache_keeps_the_status_packed_and_gives_a_fresh_copy_at_each_read() -> None:
    """The status is stored as compact JSON packed (the largest part of the object, read only at a target's first
    sight and at status writes): each read decodes it anew, so a reader that changes what it got changes nothing."""
    from autoscaler.kube.status import cached_object

    status = {"desiredReplicas": 2, "behaviorState": {"recommendations": [{"replicas": 3, "time": "t"}]}}
    cached = cached_object({"metadata": {"name": "web"}, "status": status})
    first = cached["status"]
    assert first == status and first is not status
    first["desiredReplicas"] = 99
    assert cached.get("status") == status and sorted(cached) == ["metadata", "status"] and len(cached) == 2
    packed = cached.packed_status()
    assert isinstance(packed, bytes) and unpack_status(packed) == cached.text("status") == json.dumps(
        status, separators=(",", ":")
    )
    bare = cached_object({"metadata": {"name": "web"}})
    assert "status" not in bare and bare.get("status") is None and len(bare) == 1
    assert bare.text("status") is None and bare.text("spec") is None and bare.packed_status() is None


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
    assert new.packed_status() != old.packed_status()
    again = cached_object({"metadata": {"name": "web"}, "status": {"desiredReplicas": 2}})
    assert again.packed_status() == new.packed_status() and again.packed_status() is not new.packed_status()
    again.share_texts(new)
    assert again.packed_status() is new.packed_status()  # equal: one copy


# A status as the daemon writes it for a Deployment scaled on CPU and a Pods metric.
DAEMON_STATUS = {
    "currentReplicas": 12,
    "desiredReplicas": 14,
    "currentMetrics": [
        {"type": "Resource",
         "resource": {"name": "cpu", "current": {"averageValue": "731m", "averageUtilization": 73}}},
        {"type": "Pods", "pods": {"metric": {"name": "checkout_requests"}, "current": {"averageValue": "41200m"}}},
    ],
    "conditions": [
        {"type": "AbleToScale", "status": "True", "reason": "SucceededRescale",
         "message": "the HPA controller was able to update the target scale to 14",
         "lastTransitionTime": "2026-11-02T09:14:05Z"},
        {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
         "message": "the HPA was able to successfully calculate a replica count from pods metric checkout_requests",
         "lastTransitionTime": "2026-10-30T17:01:44Z"},
        {"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange",
         "message": "the desired count is within the acceptable range", "lastTransitionTime": "2026-10-30T17:01:44Z"},
    ],
    "lastScaleTime": "2026-11-02T09:14:05Z",
    "observedGeneration": 3,
    "behaviorState": {
        "recommendations": [{"replicas": 14, "timestamp": "2026-11-02T09:14:05.120431Z"},
                            {"replicas": 12, "timestamp": "2026-11-02T09:13:50.118211Z"}],
        "scaleUpEvents": [{"replicas": 2, "timestamp": "2026-11-02T09:14:05.120431Z"}],
        "scaleDownEvents": [],
    },
    "reference": "Deployment/checkout",
    "targets": "cpu: 73%/70%, 41200m/40 (avg)",
}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(json.dumps(DAEMON_STATUS, separators=(",", ":")), id="a-daemon-status"),
        pytest.param("{}", id="empty"),
        pytest.param("null", id="null"),
        pytest.param('{"message":"d\u00e9j\u00e0 vu \u2603","x":"' + "a" * 70000 + '"}', id="unicode-and-long"),
    ],
)
def test_a_status_packs_and_unpacks_to_the_same_text(text: str) -> None:
    from autoscaler.kube.status import pack_status, unpack_status

    packed = pack_status(text)
    assert unpack_status(packed) == text and pack_status(text) == packed  # deterministic: equal texts, equal bytes


def test_a_daemon_status_packs_to_a_quarter_of_its_text_at_most() -> None:
    """What the cache and every target's memory keep: ~1.2 KiB of status text in a quarter of that or less (~0.2
    KiB with this zlib; ~9 MiB less at 10,000 targets, docs/performance.md)."""
    from autoscaler.kube.status import pack_status

    text = json.dumps(DAEMON_STATUS, separators=(",", ":"))
    assert len(text) > 1200 and len(pack_status(text)) < len(text) / 4
