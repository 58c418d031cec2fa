"""The daemon's metrics: every metric in docs/daemon.md's table is scraped, named by the conventions; the log line."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from structlog.testing import capture_logs

from autoscaler.core.decision import failed_rescale
from autoscaler.daemon.model import TickReport
from autoscaler.daemon.observe import Observer
from tests.daemon.fakes import outcome_for, shipped_snapshot, target

DOC = Path(__file__).resolve().parents[2] / "docs" / "daemon.md"
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def documented() -> dict[str, str]:
    """Metric name -> its type, from the Metrics table of docs/daemon.md."""
    section = DOC.read_text().split("### Metrics", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `(autoscaler_[a-z_]+)` \| (\w+) \|", section, flags=re.M)
    return dict(rows)


def scrape(observer: Observer) -> dict[str, str]:
    text = observer.exposition()[0].decode()
    # prometheus_client adds a `<name>_created` gauge per counter and histogram (the series' start time).
    return {
        f.name: f.type for f in text_string_to_metric_families(text) if f.samples and not f.name.endswith("_created")
    }


def errors_counted(observer: Observer) -> dict[str, float]:
    """`autoscaler_errors_total` by type, as scraped."""
    return {
        s.labels["type"]: s.value
        for f in text_string_to_metric_families(observer.exposition()[0].decode())
        if f.name == "autoscaler_errors"
        for s in f.samples
        if s.name == "autoscaler_errors_total"
    }


def shadow_snapshot(theirs: int | None, error: str = "") -> dict[str, Any]:
    """The shipped snapshot decided in shadow mode beside an HPA that wants `theirs`."""
    reading: dict[str, Any] = {"source": "HorizontalPodAutoscaler worker", "observedAt": "2026-03-01T12:00:00Z"}
    if theirs is not None:
        reading["desiredReplicas"] = theirs
    if error:
        reading["error"] = error
    return {**shipped_snapshot(), "shadow": reading, "dryRun": True}


def busy_observer() -> Observer:
    observer = Observer()
    web = target("web")
    failed = outcome_for(target("api"), error_type="ScaleReadError")
    shadowed = outcome_for(target("worker"), snapshot=shadow_snapshot(2))
    report = TickReport(started=T0, outcomes=(outcome_for(web), failed, shadowed), seconds=0.2, metric_queries=3)
    observer.report_tick(report, ended_at=T0.timestamp())
    observer.tick_done(role="leader", ended_at=T0.timestamp())
    observer.skipped_tick("overrun")
    observer.set_leader(True)
    observer.set_specs("file", {"valid": 2, "invalid": 0})
    observer.on_query("main", 0.05, "ok")
    observer.error("spec_invalid")
    return observer


def test_every_documented_metric_is_scraped_with_its_type() -> None:
    docs = documented()
    assert len(docs) >= 15
    scraped = scrape(busy_observer())
    # The parser names counters without _total, histograms without _bucket/_sum/_count.
    names = {(name + "_total" if kind == "counter" else name): kind for name, kind in scraped.items()}
    assert names == docs


def test_names_follow_the_conventions() -> None:
    for name, kind in documented().items():
        assert re.fullmatch(r"autoscaler_[a-z][a-z0-9_]*", name)
        assert name.endswith("_total") == (kind == "counter"), name
        if kind == "histogram":
            assert name.endswith("_seconds"), name


def test_the_series_of_a_target_are_removed_with_it() -> None:
    observer = busy_observer()
    observer.forget(outcome_for(target("web")).key)
    text = observer.exposition()[0].decode()
    assert 'name="web"' not in text and 'name="api"' in text


def test_the_decision_log_line() -> None:
    observer = Observer()
    with capture_logs() as logs:
        observer.report_outcome(outcome_for(target("web")), evaluated_at=T0.timestamp())
    (line,) = [entry for entry in logs if entry["event"] == "decision"]
    assert line["target"] == "shop/web" and line["origin"] == "file"
    assert (line["current"], line["desired"], line["rescale"], line["wrote"]) == (3, 5, True, True)
    assert line["reason"] == "SucceededRescale"
    assert line["summary"] == "scale 3 -> 5: metrics propose 5"
    assert line["metrics"] == ["cpu resource utilization (percentage of request)=90%/60%→5"]
    assert "error" not in line


def _snapshot(**changes: object) -> dict[str, object]:
    data = shipped_snapshot()
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("snapshot", "error_type", "expected_type", "expected_error"),
    [
        pytest.param(None, "", "", "", id="a decision without error: info, no error keys"),
        pytest.param(
            _snapshot(scale={"error": 'deployments.apps "web" not found'}), "", "scale",
            'unable to get the target\'s current scale: deployments.apps "web" not found',
            id="FailedGetScale: scale",
        ),
        pytest.param(
            _snapshot(controllers=["shop/web", "shop/other"]), "", "selector", "controlled by multiple HPAs",
            id="AmbiguousSelector: selector",
        ),
        pytest.param(
            shipped_snapshot("partial-failure-holds.json"), "", "metrics", "invalid metrics",
            id="a failed metric: metrics",
        ),
        pytest.param(None, "kube", "kube", "boom", id="the outcome's own error type wins"),
    ],
)  # fmt: skip
def test_a_failing_target_is_a_warning_an_error_and_counted(
    snapshot: dict[str, Any] | None, error_type: str, expected_type: str, expected_error: str
) -> None:
    observer = Observer()
    outcome = outcome_for(target("web"), snapshot=snapshot, error_type=error_type)
    with capture_logs() as logs:
        observer.report_tick(TickReport(started=T0, outcomes=(outcome,), seconds=0.1), ended_at=T0.timestamp())
    (line,) = [entry for entry in logs if entry["event"] == "decision"]
    (finished,) = [entry for entry in logs if entry["event"] == "tick_finished"]
    counted = errors_counted(observer)
    if not expected_type:
        assert line["log_level"] == "info" and "error" not in line and "error_type" not in line
        assert finished["errors"] == 0 and counted == {}
        return
    assert line["log_level"] == "warning"
    assert line["error_type"] == expected_type and expected_error in line["error"]
    assert finished["errors"] == 1
    assert counted == {expected_type: 1.0}


def test_a_failed_write_beside_a_failed_metric_counts_both() -> None:
    """The tick's own error (here a status write's) names the line; the decision's failed metric still counts."""
    observer = Observer()
    outcome = outcome_for(target("web"), snapshot=shipped_snapshot("partial-failure-holds.json"), error_type="kube")
    with capture_logs() as logs:
        observer.report_tick(TickReport(started=T0, outcomes=(outcome,), seconds=0.1), ended_at=T0.timestamp())
    (line,) = [entry for entry in logs if entry["event"] == "decision"]
    assert line["error_type"] == "kube" and "Prometheus query returned no data" in str(line["metrics"])
    counted = errors_counted(observer)
    assert counted == {"kube": 1.0, "metrics": 1.0}


def test_a_failed_scale_write_counts_once() -> None:
    """A failed scale write is the decision's error too (FailedUpdateScale), but one error, counted as the
    tick's own."""
    observer = Observer()
    outcome = outcome_for(target("web"), error_type="kube")
    assert outcome.decision is not None
    decision = failed_rescale(
        outcome.decision,
        "409 conflict",
        reference="Deployment/web",
        state=outcome.decision.state,
        conditions=outcome.decision.conditions,
        previous_desired_replicas=None,
        last_scale_time=None,
        now=T0,
    )
    assert decision.error is not None
    observer.report_tick(
        TickReport(started=T0, outcomes=(replace(outcome, decision=decision),), seconds=0.1), ended_at=T0.timestamp()
    )
    counted = errors_counted(observer)
    assert counted == {"kube": 1.0}


def test_shadow_mode_exports_both_counts_and_their_difference() -> None:
    observer = Observer()
    outcome = outcome_for(target("worker"), snapshot=shadow_snapshot(2))
    assert outcome.decision is not None and outcome.decision.shadow is not None
    ours = outcome.decision.desired_replicas
    assert ours is not None and ours != 2
    with capture_logs() as logs:
        observer.report_outcome(outcome, evaluated_at=T0.timestamp())
    samples = {
        (s.name, s.labels.get("side", "")): s.value
        for f in text_string_to_metric_families(observer.exposition()[0].decode())
        for s in f.samples
        if s.name.startswith("autoscaler_shadow_")
    }
    assert samples == {
        ("autoscaler_shadow_desired_replicas", "ours"): ours,
        ("autoscaler_shadow_desired_replicas", "theirs"): 2,
        ("autoscaler_shadow_difference_replicas", ""): ours - 2,
    }
    (line,) = [entry for entry in logs if entry["event"] == "decision"]
    assert line["shadow"] == {"source": "HorizontalPodAutoscaler worker", "theirs": 2, "difference": ours - 2}
    # Theirs unreadable: no count of theirs, no difference, an error counted.
    observer.report_outcome(outcome_for(target("worker"), snapshot=shadow_snapshot(None, "gone")), evaluated_at=0)
    text = observer.exposition()[0].decode()
    assert 'side="theirs"' not in text and "autoscaler_shadow_difference_replicas{" not in text
    assert 'autoscaler_errors_total{type="shadow"} 1.0' in text
    observer.forget(outcome.key)
    assert "autoscaler_shadow_desired_replicas{" not in observer.exposition()[0].decode()


def test_one_series_per_label_set_and_writes_counted_from_zero() -> None:
    """Two metrics with the same name and type export one series each of value and target (Prometheus refuses a
    scrape with a repeated label set); the scale-writes counter is 0 from the first evaluation, then counts."""
    snapshot = shipped_snapshot()
    metrics = snapshot["autoscaler"]["spec"]["metrics"]
    snapshot["autoscaler"]["spec"]["metrics"] = [metrics[0], metrics[0]]
    snapshot["metrics"] = [snapshot["metrics"][0], snapshot["metrics"][0]]
    observer = Observer()
    web = target("web")
    observer.report_outcome(replace(outcome_for(web, snapshot=snapshot), wrote_scale=False), evaluated_at=0)
    text = observer.exposition()[0].decode()
    values = [line for line in text.splitlines() if line.startswith("autoscaler_target_metric_value{")]
    assert len(values) == 1 and len(set(values)) == 1, values
    assert 'autoscaler_scale_writes_total{name="web",namespace="shop"} 0.0' in text
    for _ in range(2):
        observer.report_outcome(replace(outcome_for(web), wrote_scale=True), evaluated_at=1)
    assert 'autoscaler_scale_writes_total{name="web",namespace="shop"} 2.0' in observer.exposition()[0].decode()
