"""A smoke run of bench/throughput.py (N = 20, 2 ticks, one naive pass, one churn run), so the benchmark
cannot rot: the real daemon process, a backfilled Prometheus and the emulator, as the benchmark runs them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench import throughput

TARGETS = 20  # in 20 namespaces (one per target below 50)


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("throughput")
    argv = ["--targets", str(TARGETS), "--churn", str(TARGETS), "--ticks", "2", "--naive-ticks", "1"]
    assert throughput.main([*argv, "--logs", str(out), "--json", str(out / "figures.json")]) == 0
    return {row["mode"]: row for row in json.loads((out / "figures.json").read_text())}


@pytest.mark.parametrize(
    ("mode", "field", "expected"),
    [
        pytest.param("dry-run", "ticks", 2, id="dry-run-measures-the-ticks-asked"),
        pytest.param("dry-run", "tick_errors", 0, id="dry-run-every-target-evaluated"),
        pytest.param("dry-run", "daemon_queries_per_tick", 2 * TARGETS, id="dry-run-one-query-per-template-namespace"),
        pytest.param("dry-run", "decisions", {"hold": 3 * TARGETS}, id="dry-run-steady-targets-hold"),
        pytest.param("churn", "tick_errors", 0, id="churn-every-target-evaluated"),
    ],
)
def test_figures(rows: dict[str, dict[str, Any]], mode: str, field: str, expected: object) -> None:
    assert rows[mode][field] == expected, rows[mode]


def test_requests_are_counted_at_prometheus_and_the_emulator(rows: dict[str, dict[str, Any]]) -> None:
    steady = rows["dry-run"]
    # Counted at the server, so a tick's boundary can shift a request; never more than two ticks' worth.
    assert 0 < steady["prometheus_requests_per_tick"] <= 2 * 2 * TARGETS, steady
    # Steady targets in dry-run: their status was written on the first (warm-up) tick and is refreshed only
    # once per state.refreshSeconds (60 s, longer than the run), each at its own time in the period: the measured
    # ticks cost status writes only, and at most one per target in all.
    calls = steady["kube_calls_by_kind_per_tick"]
    assert set(calls) <= {"update prometheusautoscalers/status"}, steady
    assert sum(calls.values()) * steady["ticks"] <= TARGETS, steady
    assert steady["daemon_peak_rss_mib"] > 0 and steady["tick_p50_seconds"] > 0, steady


def test_naive_mode_sends_a_query_per_metric_and_a_list_per_target(rows: dict[str, dict[str, Any]]) -> None:
    naive = rows["dry-run"]["naive"]
    assert naive["prometheus_requests_per_tick"] == 2 * TARGETS and naive["kube_calls_per_tick"] == TARGETS, naive


def test_churn_writes_a_scale_for_every_target_every_tick(rows: dict[str, dict[str, Any]]) -> None:
    churn = rows["churn"]
    assert churn["kube_calls_by_kind_per_tick"].get("update deployments/scale", 0) >= TARGETS, churn
    assert churn["decisions"].get("rescale", 0) == 3 * TARGETS, churn
