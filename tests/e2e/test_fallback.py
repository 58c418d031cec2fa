"""Prometheus stopped for longer than the fallback's threshold: the real daemon applies the configured fallback,
says so (FallbackActive condition, FallbackStarted Event, autoscaler_target_fallback_active), and Prometheus's
return ends it (FallbackEnded, the condition False)."""

from __future__ import annotations

from tests.e2e.conftest import Stack, utc_now, write_spec
from tests.e2e.stack import wait_for
from tests.e2e.test_failures import metric
from tests.e2e.test_zero import condition, events, queue_spec, queue_worker


def test_prometheus_down_brings_scale_up_only_to_the_fallback_count_and_its_return_ends_it(stack: Stack) -> None:
    queue_worker(stack, "fb", replicas=1, arrivals=0, capacity=20)  # an empty queue: 1 replica (minReplicas)
    spec = queue_spec(
        "fb",
        minReplicas=1,
        fallback={"failureThreshold": 2, "action": "scaleUpOnly", "replicas": 3, "recoverySeconds": 4},
    )
    write_spec(stack.tmp / "specs", "fb", spec)
    daemon, address = stack.daemon("fb", stack.tmp / "specs")
    daemon.start()
    try:
        wait_for(
            lambda: condition(stack, "fb", "FallbackActive") == ("False", "MetricsReadable"),
            deadline_seconds=20,
            what="a first decision with readable metrics",
            explain=daemon.tail,
        )
        assert stack.replicas("fb") == 1
        stack.prometheus.stop()
        down_at = utc_now()
        wait_for(lambda: stack.replicas("fb") == 3, deadline_seconds=20, what="the fallback count", explain=daemon.tail)
        started = wait_for(lambda: events(stack, "fb", "FallbackStarted"), deadline_seconds=5, what="FallbackStarted")
        assert started[0]["type"] == "Warning"
        assert "fallback scaleUpOnly for metric 0 (queue_depth)" in started[0]["message"], started
        wait_for(
            lambda: condition(stack, "fb", "FallbackActive") == ("True", "FallbackScaleUpOnly"),
            deadline_seconds=5,
            what="FallbackActive True in the stored status",
        )
        wait_for(
            lambda: metric(daemon, address, "autoscaler_target_fallback_active", name="fb") == 1,
            deadline_seconds=5,
            what="autoscaler_target_fallback_active 1",
        )
        decided = wait_for(
            lambda: [d for d in daemon.events("decision", target="default/fb") if d.get("rescale")],
            deadline_seconds=5,
            what="the decision's log line",
        )
        assert "fallback scaleUpOnly: at least 3" in decided[-1]["summary"], decided
        assert not events(stack, "fb", "FallbackEnded")

        stack.prometheus.start()
        up_at = utc_now()
        ended = wait_for(
            lambda: events(stack, "fb", "FallbackEnded"), deadline_seconds=20, what="FallbackEnded", explain=daemon.tail
        )
        assert ended[0]["type"] == "Normal" and "readable again" in ended[0]["message"]
        wait_for(
            lambda: condition(stack, "fb", "FallbackActive") == ("False", "MetricsReadable"),
            deadline_seconds=5,
            what="FallbackActive False again",
        )
        wait_for(
            lambda: metric(daemon, address, "autoscaler_target_fallback_active", name="fb") == 0,
            deadline_seconds=5,
            what="autoscaler_target_fallback_active 0",
        )
        # The first readings after the outage do not scale down for recoverySeconds (4 s here)...
        wait_for(
            lambda: [
                d
                for d in daemon.events("decision", target="default/fb")
                if "no scale-down after the fallback" in d.get("summary", "")
            ],
            deadline_seconds=10,
            what="the recovery hold",
            explain=daemon.tail,
        )
        # ... then, readable again, the empty queue takes the worker back to minReplicas.
        wait_for(lambda: stack.replicas("fb") == 1, deadline_seconds=20, what="back to 1 on the readable metric")
        assert down_at < up_at
    finally:
        if stack.prometheus.process is None:
            stack.prometheus.start()
        daemon.terminate()
