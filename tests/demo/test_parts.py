"""The demo driver's pure parts (its table, its timing) and its refusals of bad input, without the stack."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autoscaler.demo.report import MetricView, WorkloadView, short_name
from autoscaler.demo.scenario import CYCLE, LEAD, DemoClock, Scenario
from autoscaler.sim.load import Trace

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "short"),
    [
        pytest.param("cpu resource utilization (percentage of request)", "cpu", id="resource"),
        pytest.param("external metric queue_depth({queue=jobs})", "queue_depth", id="external-with-selector"),
        pytest.param("pods metric http_requests_per_second", "http_requests_per_second", id="pods"),
        pytest.param("", "?", id="empty"),
    ],
)
def test_short_metric_names(name: str, short: str) -> None:
    assert short_name(name) == short


@pytest.mark.parametrize(
    ("view", "pods", "metrics"),
    [
        pytest.param(WorkloadView(2, 2, None, ()), "2 (2 ready)", "-", id="before-the-first-decision"),
        pytest.param(WorkloadView(3, 2, 3, ()), "3 (2 ready)", "-", id="steady"),
        pytest.param(
            WorkloadView(4, 4, 7, (MetricView("cpu resource utilization", "Utilization", 133.4, 60),)),
            "4->7 (4 ready)",
            "cpu 133%/60%",
            id="moving-utilization",
        ),
        pytest.param(
            WorkloadView(0, 0, 1, (MetricView("external metric queue_depth", "AverageValue", None, 20),)),
            "0->1 (0 ready)",
            "queue_depth ?/20",
            id="no-reading-yet",
        ),
    ],
)
def test_table_cells(view: WorkloadView, pods: str, metrics: str) -> None:
    assert (view.pods_text(), view.metrics_text()) == (pods, metrics)


@pytest.mark.parametrize(
    ("duration", "lead", "cycle"),
    [
        pytest.param(120, LEAD * 120, CYCLE * 120, id="two-minutes"),
        pytest.param(60, LEAD * 60, CYCLE * 60, id="one-minute"),
        pytest.param(0, LEAD * 120, CYCLE * 120, id="until-ctrl-c-times-as-two-minutes"),
    ],
)
def test_the_excerpt_plays_over_its_share_of_the_duration(duration: float, lead: float, cycle: float) -> None:
    trace = Trace((0.0, 600.0, 1200.0), (10.0, 40.0, 20.0))
    scenario = Scenario(trace, duration=duration, clock=DemoClock())
    assert scenario.web_load_at(0) == pytest.approx(100)  # the first value (peak 40 scaled to 400)
    assert scenario.web_load_at(lead + cycle / 2) == pytest.approx(400)
    assert scenario.web_load_at(lead + cycle) == pytest.approx(200)
    assert scenario.web_load_at(lead + cycle + 30) == pytest.approx(200)  # the last value holds
    assert scenario.jobs_at(lead + cycle / 2) == pytest.approx(400 - 180)
    assert scenario.jobs_at(0) == 0


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        pytest.param(["--duration", "-1"], 2, "--duration -1: must be 0 (until Ctrl-C) or more seconds", id="negative"),
        pytest.param(["--config-dir", "nowhere"], 1, "nowhere/daemon.yaml: missing", id="no-config"),
        pytest.param(["--prometheus", "/nonexistent/prometheus"], 1, "not an executable file", id="no-prometheus"),
    ],
)
def test_bad_input_is_one_line_not_a_traceback(argv: list[str], status: int, message: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "autoscaler.demo", "--output", str(tmp_path / "out"), *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == status, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out" / "chart.png").exists()


@pytest.mark.parametrize("name", ["web.yaml", "worker.yaml"])
def test_a_refused_spec_stops_the_demo_before_it_starts(name: str, tmp_path: Path) -> None:
    """Either spec refused by `autoscaler check` stops the demo with the check's words; no part of it is skipped."""
    config = tmp_path / "config"
    shutil.copytree(REPO / "config" / "demo", config)
    spec = config / name
    spec.write_text(spec.read_text().replace("maxReplicas:", "maxReplica:"))
    result = subprocess.run(
        [sys.executable, "-m", "autoscaler.demo", "--config-dir", str(config), "--output", str(tmp_path / "out")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"make demo: `autoscaler check {spec}` refused it:" in result.stderr, result.stderr
    assert "maxReplica" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out").exists() and "starting:" not in result.stdout
