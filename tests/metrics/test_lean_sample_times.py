"""The lean sample-time query of per-pod metrics (docs/metrics.md, "Staleness"): Prometheus marks only the samples
older than a minute, and the reader sends the exact query (every sample marked) exactly where a decision could
differ: a failure it remembers from the last minute, a staleness budget under a minute, a CPU pod whose readiness
changed recently. Against the session's real Prometheus, through a proxy that logs what was asked."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from autoscaler.core.calculator import PodMetric, group_pods
from autoscaler.core.types import MetricSourceType, Pod, PodsReading, PodUsage, PodValue, ResourceReading, Settings
from autoscaler.metrics import MetricsError, MetricsReader, StaleDataError
from tests.metrics.conftest import Push
from tests.metrics.helpers import context, pod, request, spec
from tests.metrics.proxy import Fault, Proxy

PODS, RES = MetricSourceType.PODS, MetricSourceType.RESOURCE
Reader = Callable[..., MetricsReader]
LEAN = re.compile(r"\(timestamp\(.*\) < [0-9]+\.[0-9]{3}\), \"autoscaler_sample\"")


def _marked(proxy: Proxy, name: str) -> list[bool]:
    """For each query of `name` sent so far: True when it was the lean form."""
    return [LEAN.search(q) is not None for q in proxy.queries() if name in q]


def _sampled(push: Push, name: str, at: datetime, pods: dict[str, tuple[int, float]]) -> None:
    """One gauge `name` per pod of namespace `lean`, sampled once `seconds` before `at`: {pod: (seconds, value)}."""
    series: list[object] = []
    for one, (seconds, value) in pods.items():
        series += [{"__name__": name, "namespace": "lean", "pod": one}, [(at - timedelta(seconds=seconds), value)]]
    push(*series)


def test_fresh_samples_are_not_marked_old_ones_are(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    name = "lean_pods"
    _sampled(push, name, base_time, {"fresh": (20, 4), "older": (75, 6), "stale": (100, 9)})
    reader = make_reader(proxy.url)  # budget: 2 x 15 s + 60 s = 90 s
    ctx = context("lean", base_time, pod("fresh"), pod("older"), pod("stale"))
    reading = reader.read_one(request(spec(PODS, metric=name), ctx))
    # The fresh pod reads as sampled at the time asked; the older one keeps its own time; the stale one is
    # still refused (it reads as missing), as with every sample marked.
    assert reading == PodsReading(
        (PodValue("fresh", 4000, base_time, 60.0), PodValue("older", 6000, base_time - timedelta(seconds=75), 60.0))
    )
    assert _marked(proxy, name) == [True]
    [answer] = [r for r in proxy.requests if name in r.params.get("query", "")]
    assert answer.params["query"].count("autoscaler_sample") == 1


def test_a_budget_under_a_minute_asks_for_every_sample_time(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    name = "lean_short_budget"
    _sampled(push, name, base_time, {"a": (5, 1), "b": (40, 2)})
    reader = make_reader(proxy.url, settings={"stalenessSeconds": 30})
    reading = reader.read_one(request(spec(PODS, metric=name), context("lean", base_time, pod("a"), pod("b"))))
    assert reading == PodsReading((PodValue("a", 1000, base_time - timedelta(seconds=5), 60.0),))  # b: 40 s > 30 s
    assert _marked(proxy, name) == [False]
    # A target with the usual budget in the same namespace, in the same pass: the same question, asked once.
    proxy.clear()
    pods = context("lean", base_time, pod("a"), pod("b"))
    usual, short = (
        request(spec(PODS, metric=name), pods),
        request(spec(PODS, metric=name), pods, {"stalenessSeconds": 30}),
    )
    outcomes = make_reader(proxy.url).read([usual, short]).outcomes
    assert _marked(proxy, name) == [False]
    assert outcomes[0] == PodsReading(
        (
            PodValue("a", 1000, base_time - timedelta(seconds=5), 60.0),
            PodValue("b", 2000, base_time - timedelta(seconds=40), 60.0),
        )
    )
    assert outcomes[1] == reading


def test_a_failure_within_the_minute_asks_for_every_sample_time(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """A sample from before a failure 20 s ago can be 40 s old: within the minute the lean form leaves unmarked.
    The exact form is sent, and the pod is refused; a failure 80 s ago (budget 120 s) keeps the lean form, and
    the pod sampled 90 s ago, before it, is still refused (marked: older than a minute)."""
    name = "lean_outage"
    _sampled(push, name, base_time, {"after": (5, 4), "before": (40, 9), "long-before": (90, 7)})
    metric = spec(PODS, metric=name)
    pods = (pod("after"), pod("before"), pod("long-before"))
    for failed_ago, lean, kept in (
        (20, False, ["after"]),
        (80, True, ["after", "before"]),
    ):
        reader = make_reader(proxy.url, settings={"stalenessSeconds": 120})
        proxy.faults.append(Fault(status=503, body=b"restarting", repeat=True))
        failed = reader.read([request(metric, context("lean", base_time - timedelta(seconds=failed_ago), *pods))])
        assert isinstance(failed.outcomes[0], MetricsError)
        proxy.faults.clear()
        proxy.clear()
        reading = reader.read_one(request(metric, context("lean", base_time, *pods)))
        assert isinstance(reading, PodsReading)
        assert [item.pod for item in reading.items] == kept, failed_ago
        assert _marked(proxy, name) == [lean], failed_ago
        error = reader.read([request(metric, context("lean", base_time, pod("long-before")))]).outcomes[0]
        assert isinstance(error, StaleDataError) and error.failed_at is not None


def test_a_failure_of_the_lean_form_counts_for_a_target_asking_the_exact_one(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """The failure memory keys both forms by the exact one (the lean text changes with the time asked): a failure
    of a usual-budget target's lean query at T - 20 holds for a 30 s-budget target asking alone at T, whose pod
    sampled at T - 25 is from before it."""
    name = "lean_memory_shared"
    _sampled(push, name, base_time, {"after": (5, 4), "before": (25, 9)})
    pods = (pod("after"), pod("before"))
    reader = make_reader(proxy.url)
    proxy.faults.append(Fault(status=503, body=b"restarting", repeat=True))
    usual = request(spec(PODS, metric=name), context("lean", base_time - timedelta(seconds=20), *pods))
    assert isinstance(reader.read([usual]).outcomes[0], MetricsError)
    assert _marked(proxy, name)[-1]  # the lean form failed
    proxy.faults.clear()
    short = request(spec(PODS, metric=name), context("lean", base_time, *pods), {"stalenessSeconds": 30})
    reading = reader.read_one(short)
    assert reading == PodsReading((PodValue("after", 4000, base_time - timedelta(seconds=5), 60.0),))


def test_a_failure_of_the_exact_form_counts_for_the_lean_one(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """Both forms are one question: a failure remembered under either holds for both. Failed at T - 150 (lean),
    again at T - 100 (exact, since the first failure was within its minute); at T the budget (120 s) forgets
    the first, the second still refuses a pod sampled at T - 110."""
    name = "lean_two_outages"
    _sampled(push, name, base_time, {"after": (5, 4), "before": (110, 9)})
    metric = spec(PODS, metric=name)
    pods = (pod("after"), pod("before"))
    reader = make_reader(proxy.url, settings={"stalenessSeconds": 120})
    proxy.faults.append(Fault(status=503, body=b"restarting", repeat=True))
    for ago in (150, 100):
        failed = reader.read([request(metric, context("lean", base_time - timedelta(seconds=ago), *pods))])
        assert isinstance(failed.outcomes[0], MetricsError)
    assert _marked(proxy, name)[0] and not _marked(proxy, name)[-1]  # lean first, then the exact form
    proxy.faults.clear()
    proxy.clear()
    reading = reader.read_one(request(metric, context("lean", base_time, *pods)))
    assert reading == PodsReading((PodValue("after", 4000, base_time, 60.0),))
    assert _marked(proxy, name) == [True]


def test_a_cpu_pod_ready_within_the_minute_and_a_window_gets_its_own_sample_time(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """The HPA leaves out a pod in its CPU initialization period whose sample is older than its readiness change
    plus the metric window. Ready 90 s before the time asked, sampled 40 s before it: 40 s old is within the
    minute the lean form leaves unmarked, and read as the time asked the pod would count. The exact form is
    sent for that target, so its own time is read and the pod is left out, as the HPA leaves it out. A target
    whose pods changed readiness long enough ago gets the lean form, with the same decision as the exact one."""
    name = "container_cpu_usage_seconds_total"
    counter = [(base_time - timedelta(seconds=40 + 15 * i), 100 - 5 * i) for i in range(5)]
    for one in ("young-1", "young-2", "settled-1", "settled-2"):
        push({"__name__": name, "namespace": "lean-cpu", "pod": one, "container": "app"}, counter)
    settings = Settings()
    started = base_time - timedelta(seconds=120)  # within the 300 s CPU initialization period

    def ready(name: str, seconds_ago: int) -> Pod:
        since = base_time - timedelta(seconds=seconds_ago)
        return replace(pod(name, "app"), start_time=started, ready_transition=since)

    reader = make_reader(proxy.url)
    metric = spec(RES, resource="cpu")
    cases = {
        "young": ((ready("young-1", 90), ready("young-2", 200)), False, {"young-1"}),
        "settled": ((ready("settled-1", 121), ready("settled-2", 200)), True, set()),
    }
    for label, (pods, lean, unready) in cases.items():
        proxy.clear()
        reading = reader.read_one(request(metric, context("lean-cpu", base_time, *pods)))
        assert isinstance(reading, ResourceReading)
        assert _marked(proxy, name) == [lean], label
        times = {usage.pod: usage.timestamp for usage in reading.pods}
        own = base_time - timedelta(seconds=40)
        assert times == {p.name: (base_time if lean else own) for p in pods}, label
        metrics = {usage.pod: _pod_metric(usage) for usage in reading.pods}
        ready_count, left_out, _, _ = group_pods(pods, metrics, "cpu", settings=settings, now=base_time)
        assert left_out == unready, label
        # The same grouping as with every sample's own time (what the exact form would have read).
        exact = {p: m._replace(timestamp=own) for p, m in metrics.items()}
        assert group_pods(pods, exact, "cpu", settings=settings, now=base_time)[1] == unready, label
        assert ready_count == len(pods) - len(unready)
    # Both targets in one pass: one question per namespace and template, so both get the exact form.
    proxy.clear()
    both = reader.read([request(metric, context("lean-cpu", base_time, *pods)) for pods, _, _ in cases.values()])
    assert _marked(proxy, name) == [False]
    settled = both.outcomes[1]
    assert isinstance(settled, ResourceReading)
    assert {usage.timestamp for usage in settled.pods} == {base_time - timedelta(seconds=40)}


def _pod_metric(usage: PodUsage) -> PodMetric:
    return PodMetric(sum(c.usage["cpu"] for c in usage.containers), usage.timestamp, usage.window_seconds)


def test_an_error_names_the_question_the_same_every_tick(
    proxy: Proxy, make_reader: Reader, push: Push, base_time: datetime
) -> None:
    """A failed metric's message becomes a condition's and an Event's message: the lean text, which carries the
    time asked, must not make it change every tick (a status write and a new Event each time)."""
    reader = make_reader(proxy.url)
    metric = spec(PODS, metric="lean_never_written")
    messages = set()
    for seconds in (0, 15, 30):
        outcome = reader.read([request(metric, context("lean", base_time + timedelta(seconds=seconds), pod("a")))])
        error = outcome.outcomes[0]
        assert isinstance(error, MetricsError)
        messages.add(str(error))
    assert _marked(proxy, "lean_never_written") == [True, True, True]
    [message] = messages
    assert "timestamp(lean_never_written" in message and LEAN.search(message) is None
    proxy.faults.append(Fault(status=400, body=b'{"status":"error","errorType":"bad_data","error":"no"}'))
    error = reader.read([request(metric, context("lean", base_time, pod("a")))]).outcomes[0]
    assert isinstance(error, MetricsError) and LEAN.search(str(error)) is None
