"""`autoscaler backtest` against a real Prometheus loaded by backfill (promtool tsdb create-blocks-from openmetrics):
the same simulation as `autoscaler simulate` on the same points, the real replicas beside, and its errors."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from autoscaler.cli import main
from autoscaler.simulate import backtest
from tests.metrics import server

MINUTES = 240


def _demand(minute: int) -> float:
    """Requests per second: a swell with a sudden surge in the third hour."""
    level = 20 + 10 * math.sin(minute / 30)
    return round(level * (3 if 130 <= minute < 150 else 1), 3)


@pytest.fixture(scope="module")
def start() -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=MINUTES + 60)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory, start: datetime) -> Iterator[str]:
    """A Prometheus holding `demand`, `replicas` and two `split` series, written as blocks before it starts."""
    promtool, binary = server.find_binary("promtool"), server.find_binary("prometheus")
    if promtool is None or binary is None:
        pytest.fail("no prometheus/promtool binary: run scripts/install-prometheus.sh (make deps)", pytrace=False)
    root = tmp_path_factory.mktemp("backtest")
    lines = ["# TYPE demand gauge", "# TYPE replicas gauge", "# TYPE split gauge"]
    for minute in range(MINUTES):
        stamp = int(start.timestamp()) + 60 * minute
        lines.append(f'demand{{app="web"}} {_demand(minute)} {stamp}')
        lines.append(f'replicas{{app="web"}} {10 + minute // 60} {stamp}')
        lines += [f'split{{app="a"}} 1 {stamp}', f'split{{app="b"}} 2 {stamp}']
    data = root / "series.om"
    data.write_text("\n".join(lines) + "\n# EOF\n")
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(data), str(root / "tsdb")],
        check=True,
        capture_output=True,
    )
    (root / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\n")
    port = server.free_port()
    argv = [
        binary,
        f"--config.file={root / 'prometheus.yml'}",
        f"--web.listen-address=127.0.0.1:{port}",
        f"--storage.tsdb.path={root / 'tsdb'}",
    ]
    process, url = server.spawn(
        "prometheus", argv, port=port, log_path=root / "log", ready=server.answers("/-/ready"), deadline_seconds=60
    )
    running = server.PrometheusServer(process, url, root / "log")
    yield url
    running.stop()


def _cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _range(start: datetime) -> list[str]:
    end = start + timedelta(minutes=MINUTES - 1)
    return ["--start", start.isoformat(), "--end", end.isoformat(), "--query-step", "60"]


@pytest.mark.parametrize("scenario", ["cpu", "rps"])
def test_the_same_simulation_as_simulate_on_the_same_points(
    prometheus: str, start: datetime, tmp_path: Path, scenario: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _cli(
        "backtest", "--prometheus", prometheus, "--query", 'sum(demand{app="web"})', *_range(start),
        "--scenario", scenario, "-o", "json", capsys=capsys,
    )  # fmt: skip
    assert (status, err) == (0, "")
    backtest = json.loads(out)
    trace = tmp_path / "same.csv"
    trace.write_text("timestamp_seconds,value\n" + "".join(f"{60 * m},{_demand(m)}\n" for m in range(MINUTES)))
    status, out, _ = _cli(
        "simulate", "--trace", str(trace), "--per-second-factor", "none", "--scenario", scenario, "-o", "json",
        capsys=capsys,
    )  # fmt: skip
    simulated = json.loads(out)
    assert status == 0
    for key in ("scores", "oracle", "decisions", "scaleWrites", "capacityPerPod"):
        assert backtest[key] == simulated[key], key
    assert backtest["scores"]["unserved"] > 0  # the surge was not served at once: the run is not trivial


def test_the_real_replicas_are_scored_and_drawn(
    prometheus: str, start: datetime, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "backtest.png"
    status, out, _ = _cli(
        "backtest", "--prometheus", prometheus, "--query", 'sum(demand{app="web"})', *_range(start),
        "--replicas-query", 'max(replicas{app="web"})', "--chart", str(chart), "-o", "json", capsys=capsys,
    )  # fmt: skip
    assert status == 0
    document = json.loads(out)
    # 10, 11, 12 and 13 replicas, an hour each (the last minute of the range held to its end).
    assert document["actual"]["meanReplicas"] == pytest.approx(11.5, abs=0.02)
    assert document["actual"]["cost"] > 0
    assert chart.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("query", "url", "message"),
    [
        pytest.param("split", None, "--query: the query returned 2 series", id="two-series"),
        pytest.param("nothing_here", None, "--query: the query returned 0 series", id="no-series"),
        pytest.param("sum(", None, "--query: Prometheus refused the query (HTTP 400)", id="bad-promql"),
        pytest.param(
            "demand", "http://127.0.0.1:{port}", "did not answer: [Errno 111] Connection refused", id="unreachable"
        ),
        pytest.param(
            "demand",
            "{prometheus}/elsewhere",
            "Prometheus refused the query (HTTP 404) (is the URL the server's base URL?): 404 page not found",
            id="not-the-base-url",
        ),
    ],
)
def test_an_unusable_answer_is_named(
    prometheus: str, start: datetime, query: str, url: str | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = prometheus if url is None else url.format(port=server.free_port(), prometheus=prometheus)
    status, out, err = _cli(
        "backtest", "--prometheus", target, "--query", query, *_range(start), "--timeout", "5", capsys=capsys
    )
    assert (status, out) == (1, "")
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1 and "HTTPConnectionPool" not in err and "<" not in err, err


def test_a_range_of_more_points_than_prometheus_answers_is_asked_in_pieces(
    prometheus: str, start: datetime, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nine days at a 60 s step are 12,960 points, more than the 11,000 Prometheus answers for one query; the
    data lies in the last of them. Asked in pieces: the same run as over the data's own range. Its snapshots replay."""
    folder = tmp_path / "snaps"
    wide = ["--start", (start - timedelta(days=8)).isoformat(), "--end", (start + timedelta(days=1)).isoformat()]
    query = ["backtest", "--prometheus", prometheus, "--query", 'sum(demand{app="web"})', "-o", "json"]
    status, out, err = _cli(*query, *wide, "--snapshots", str(folder), capsys=capsys)
    assert (status, err) == (0, "")
    one_piece = ["--start", start.isoformat(), "--end", (start + timedelta(days=1)).isoformat()]
    status, narrow, _ = _cli(*query, *one_piece, capsys=capsys)
    assert status == 0
    for key in ("scores", "oracle", "decisions", "scaleWrites", "capacityPerPod"):
        assert json.loads(out)[key] == json.loads(narrow)[key], key
    files = sorted(folder.glob("*.json"))
    assert len(files) == json.loads(out)["scaleWrites"] > 0
    assert main(["replay", "-o", "jsonl", *map(str, files[:3])]) == 0
    assert all(json.loads(line)["rescale"] for line in capsys.readouterr().out.splitlines())


def test_pieces_join_without_losing_or_doubling_a_point(
    prometheus: str, start: datetime, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pieces of 7 steps (35 boundaries over the data) give the run of one piece."""
    query = ["backtest", "--prometheus", prometheus, "--query", 'sum(demand{app="web"})', *_range(start), "-o", "json"]
    status, whole, _ = _cli(*query, capsys=capsys)
    assert status == 0
    monkeypatch.setattr(backtest, "POINTS_PER_QUERY", 7)
    status, pieces, _ = _cli(*query, capsys=capsys)
    assert status == 0
    assert json.loads(pieces) == json.loads(whole)
    times, _ = backtest.query_range(
        prometheus, 'sum(demand{app="web"})', start=start.timestamp(), end=start.timestamp() + 60 * (MINUTES - 1),
        step=60, timeout=5, flag="--query",
    )  # fmt: skip
    assert times == [start.timestamp() + 60 * m for m in range(MINUTES)]


def test_a_fractional_step_is_refused(prometheus: str, start: datetime, capsys: pytest.CaptureFixture[str]) -> None:
    range_ = _range(start)[:4]
    status, out, err = _cli(
        "backtest", "--prometheus", prometheus, "--query", "demand", *range_, "--query-step", "1.5", capsys=capsys
    )
    assert (status, out) == (1, "")
    assert err == "autoscaler backtest: --query-step: must be a whole number of seconds, 1 or more, not 1.5\n"


@pytest.mark.parametrize(
    ("factor", "message"),
    [
        pytest.param("-1", "--per-second-factor: must be positive, not -1", id="negative"),
        pytest.param("inf", "--per-second-factor: must be positive, not inf", id="infinite"),
        pytest.param("x", "--per-second-factor: not a number or 'none': 'x'", id="not-a-number"),
    ],
)
def test_a_bad_factor_is_refused_before_any_query(
    start: datetime, factor: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked as simulate's flag is, before Prometheus is asked (no server listens at the URL given)."""
    status, out, err = _cli(
        "backtest",
        "--prometheus",
        "http://127.0.0.1:9",
        "--query",
        "demand",
        *_range(start),
        "--per-second-factor",
        factor,
        capsys=capsys,
    )
    assert (status, out) == (1, "")
    assert err == f"autoscaler backtest: {message}\n"


def test_no_piece_is_asked_past_max_days(
    prometheus: str, start: datetime, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pieces of 7 steps, 0.01 day (864 s) simulated: 3 queries (to 1,200 s), not the 35 the range would take."""
    asked: list[datetime] = []
    real = backtest.PrometheusConnect.custom_query_range

    def counting(self: Any, query: str, **kwargs: Any) -> Any:
        asked.append(kwargs["start_time"])
        return real(self, query, **kwargs)

    monkeypatch.setattr(backtest, "POINTS_PER_QUERY", 7)
    monkeypatch.setattr(backtest.PrometheusConnect, "custom_query_range", counting)
    status, out, err = _cli(
        "backtest", "--prometheus", prometheus, "--query", 'sum(demand{app="web"})', *_range(start),
        "--max-days", "0.01", "-o", "json", capsys=capsys,
    )  # fmt: skip
    assert (status, err) == (0, "")
    assert asked == [start + timedelta(seconds=420 * k) for k in range(3)]
    assert json.loads(out)["days"] == pytest.approx(0.01, abs=1e-4)


def test_a_replica_count_beyond_int32_is_named(
    prometheus: str, start: datetime, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _cli(
        "backtest", "--prometheus", prometheus, "--query", 'sum(demand{app="web"})', *_range(start),
        "--replicas-query", 'max(replicas{app="web"}) * 1e300', capsys=capsys,
    )  # fmt: skip
    assert (status, out) == (1, "")
    assert "--replicas-query: the value at " in err and err.count("\n") == 1
    assert err.endswith(": a replica count must be a finite number >= 0 and <= 2.14748e+09\n"), err
