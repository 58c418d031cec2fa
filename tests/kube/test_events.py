"""Events with the HPA's reasons, aggregated like client-go's recorder: the same event again is count + 1."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from autoscaler.core.events import EventReason, rescale_message
from autoscaler.core.types import ObjectReference
from autoscaler.kube.client import KubeClient
from autoscaler.kube.events import EventOutcome, EventRecorder, InvolvedObject
from tests.kube.conftest import NS, Setup


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _events(setup: Setup) -> list[dict[str, Any]]:
    return list(setup.get(f"/api/v1/namespaces/{NS}/events")["items"])


def test_an_event_is_created_then_aggregated(kube: KubeClient, setup: Setup, server: Any) -> None:
    clock = Clock()
    recorder = EventRecorder(kube, clock=clock, instance="replica-0")
    obj = InvolvedObject.autoscaler(NS, "web", uid="1234")
    message = rescale_message(4, "cpu resource utilization (percentage of request) above target")
    assert message.startswith("New size: 4; reason: ")

    assert recorder.normal(obj, EventReason.SUCCESSFUL_RESCALE, message) is EventOutcome.CREATED
    clock.now += timedelta(seconds=30)
    assert recorder.normal(obj, EventReason.SUCCESSFUL_RESCALE, message) is EventOutcome.AGGREGATED
    clock.now += timedelta(seconds=30)
    assert recorder.normal(obj, EventReason.SUCCESSFUL_RESCALE, message) is EventOutcome.AGGREGATED

    events = _events(setup)
    assert len(events) == 1
    event = events[0]
    assert event["count"] == 3
    assert event["reason"] == "SuccessfulRescale"
    assert event["type"] == "Normal"
    assert event["message"] == message
    assert event["source"]["component"] == "prometheus-autoscaler"
    assert event["involvedObject"]["kind"] == "PrometheusAutoscaler"
    assert event["involvedObject"]["name"] == "web"
    assert event["firstTimestamp"].startswith("2026-03-01T12:00:00")
    assert event["lastTimestamp"].startswith("2026-03-01T12:01:00")

    # Another message, type or object is another Event.
    assert recorder.warning(obj, EventReason.FAILED_GET_SCALE, "deployments/web not found") is EventOutcome.CREATED
    target = InvolvedObject.target(NS, ObjectReference(kind="Deployment", name="web", api_version="apps/v1"))
    assert recorder.normal(target, EventReason.SUCCESSFUL_RESCALE, message) is EventOutcome.CREATED
    assert len(_events(setup)) == 3
    ua = kube.settings.user_agent
    assert len(server.audit.records(verb="create", resource="events", user_agent=ua)) == 3
    assert len(server.audit.records(verb="patch", resource="events", user_agent=ua)) == 2


def test_an_expired_event_is_created_anew(kube: KubeClient, setup: Setup) -> None:
    recorder = EventRecorder(kube, clock=Clock())
    obj = InvolvedObject.autoscaler(NS, "web")
    recorder.warning(obj, EventReason.FAILED_RESCALE, "boom")
    (event,) = _events(setup)
    setup.delete(f"/api/v1/namespaces/{NS}/events/{event['metadata']['name']}")
    assert recorder.warning(obj, EventReason.FAILED_RESCALE, "boom") is EventOutcome.CREATED
    assert [e["count"] for e in _events(setup)] == [1]


def test_a_failing_api_does_not_fail_the_caller(kube: KubeClient, server: Any) -> None:
    server.faults.add(r"/events", status=500, times=1)
    recorder = EventRecorder(kube, clock=Clock())
    outcome = recorder.warning(InvolvedObject.autoscaler(NS, "web"), EventReason.FAILED_RESCALE, "x")
    assert outcome is EventOutcome.FAILED
