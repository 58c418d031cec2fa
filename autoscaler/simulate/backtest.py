"""`autoscaler backtest`: `autoscaler simulate` with the demand read from Prometheus history (query_range).

The demand is one series: the user's PromQL expression (e.g. `sum(rate(http_requests_total{app="web"}[1m]))`),
already a rate per second, evaluated over [start, end] every `step` seconds; the same model as `simulate` then
runs over it (docs/performance.md). `--replicas-query` names the replicas the workload really had (e.g.
kube-state-metrics' `kube_deployment_status_replicas`), drawn beside the simulated ones and scored like them.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import IO, Any

import requests
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from urllib3.util.retry import Retry

from autoscaler.simulate.cli import (
    InputError,
    add_model_flags,
    base_spec,
    factor_of,
    model_of,
    run_prepared,
    settings_of,
    summary,
    text,
)
from autoscaler.simulate.model import SCENARIOS, Model, oracle_count, prepare
from autoscaler.spec.fields import INT32_MAX

BACKTEST_HELP = """\
Run a spec through the simulation of `autoscaler simulate` (docs/performance.md) with the demand read from
Prometheus: the --query expression, one series of demand per second (sum it), evaluated with query_range
from --start to --end every --query-step seconds. --replicas-query, one series, is the replicas the workload
really had: its cost against the oracle is printed, and it is drawn beside the simulated replicas.
--per-second-factor multiplies the query's values (default, or 'none': as they are).

Exit status: 0 on success, 1 when Prometheus cannot answer or its answer cannot be used (the message says
which query and why), a spec or parameter is wrong, or the chart cannot be written (checked before the run; a
failure after it comes after the scores, which are printed), 2 for a usage error.
"""


def add_parser(commands: Any) -> None:
    """The `backtest` sub-command's arguments."""
    parser = commands.add_parser(
        "backtest",
        help="score a spec's decisions over the demand Prometheus recorded",
        description=BACKTEST_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--prometheus", required=True, metavar="URL", help="the Prometheus server's base URL")
    parser.add_argument("--query", required=True, metavar="PROMQL", help="the demand per second, one series")
    parser.add_argument("--start", required=True, help="RFC 3339 time (UTC without an offset) or Unix seconds")
    parser.add_argument("--end", required=True, help="RFC 3339 time (UTC without an offset) or Unix seconds")
    parser.add_argument("--query-step", type=float, default=60.0, help="query_range resolution in seconds (default 60)")
    parser.add_argument("--replicas-query", metavar="PROMQL", help="the replicas the workload really had")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    parser.add_argument("--spec", metavar="SPEC", help="a spec file with one autoscaler (YAML)")
    parser.add_argument("--scenario", choices=SCENARIOS, default="rps", help="the metric and its target (default rps)")
    parser.add_argument("--chart", metavar="PNG", help="draw demand, capacity, replicas and unserved demand")
    parser.add_argument("--snapshots", metavar="DIR", help="write each decision that scales as a replay snapshot")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text", help="the output format")
    add_model_flags(parser)


def parse_time(text: str, *, flag: str) -> float:
    """Unix seconds from RFC 3339 or a number; InputError naming the flag."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{flag}: not an RFC 3339 time or Unix seconds: {text!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def _refusal(message: str) -> str:
    """The `error` of Prometheus's JSON answer inside prometheus-api-client's "HTTP Status Code N (b'...')"; another
    answer (an HTML page, a proxy's refusal) by its status and the start of its body."""
    status = message.split(" (", 1)[0].removeprefix("HTTP Status Code ")
    start, end = message.find("{"), message.rfind("}")
    if 0 <= start < end:
        try:
            body = json.loads(message[start : end + 1].replace("\\\\", "\\"))
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("error"):
            return f"(HTTP {status}) {body['error']}"
    if not status.isdigit():
        return message
    text = message.split(" (", 1)[1].removesuffix(")") if " (" in message else ""
    text = " ".join(re.sub(r"<[^>]*>", " ", text.removeprefix("b").strip("'\"")).replace("\\n", " ").split())
    hint = " (is the URL the server's base URL?)" if status == "404" else ""
    return f"(HTTP {status}){hint}: {text[:160] or 'no body'}"


def _unreachable(err: requests.RequestException) -> str:
    """Why a request got no answer, without the client's nested retry text: the socket's or TLS's error, a timeout."""
    text = str(err)
    for pattern in (r"\[Errno -?\d+\] [^\"')]+", r"\[SSL: \w+\][^\"')(]+"):
        found = re.search(pattern, text)
        if found:
            return found.group(0).strip()
    if isinstance(err, requests.Timeout) or "timed out" in text:
        return "timed out"
    return f"{type(err).__name__}: ...{text[-200:]}" if len(text) > 200 else f"{type(err).__name__}: {text}"


# The most points Prometheus answers for one series of one query_range (its 11,000, with room): a longer range is
# asked in pieces of this many steps.
POINTS_PER_QUERY = 10_000


def query_range(
    url: str,
    query: str,
    *,
    start: float,
    end: float,
    step: float,
    timeout: float,
    flag: str,
    what: str = "demand",
    span: float = math.inf,
    largest: float = math.inf,
) -> tuple[list[float], list[float]]:
    """One series of `query` over [start, end]: its times (Unix seconds) and values; InputError saying why not.
    A range of more than POINTS_PER_QUERY steps is asked in pieces, each a query_range of its own, until `span`
    seconds past the first point found are in (the simulation reads no further)."""
    client = PrometheusConnect(url=url.rstrip("/"), timeout=timeout, retry=Retry(total=0))
    series: dict[str, dict[float, str]] = {}
    first = math.inf  # the earliest point found
    piece = start
    while piece <= end:
        last = min(end, piece + (POINTS_PER_QUERY - 1) * step)
        try:
            result = client.custom_query_range(
                query,
                start_time=datetime.fromtimestamp(piece, UTC),
                end_time=datetime.fromtimestamp(last, UTC),
                step=f"{step:.15g}",
            )
        except requests.RequestException as err:
            raise InputError(f"{flag}: Prometheus at {url} did not answer: {_unreachable(err)}") from err
        except PrometheusApiClientException as err:
            raise InputError(f"{flag}: Prometheus refused the query {_refusal(str(err))}") from None
        except ValueError:
            raise InputError(f"{flag}: Prometheus at {url} did not answer with JSON") from None
        if not isinstance(result, list) or any(not isinstance(r, dict) or "values" not in r for r in result):
            raise InputError(f"{flag}: expected a range vector (matrix) answer, got {result!r:.200}")
        for one in result:
            points = series.setdefault(json.dumps(one.get("metric", {}), sort_keys=True), {})
            for when, value in one.get("values", []):
                points[float(when)] = value
                first = min(first, float(when))
        piece = last + step
        if last >= first + span:
            break
    if len(series) != 1:
        raise InputError(
            f"{flag}: the query returned {len(series)} series over the range; it must return one (aggregate it, "
            "e.g. sum(...))"
        )
    times: list[float] = []
    values: list[float] = []
    for when, value in sorted(next(iter(series.values())).items()):
        number = float(value)
        if not (math.isfinite(number) and 0 <= number <= largest):
            stamp = datetime.fromtimestamp(when, UTC).isoformat()
            bound = f" and <= {largest:g}" if largest < math.inf else ""
            raise InputError(f"{flag}: the value at {stamp} is {value}: {what} must be a finite number >= 0{bound}")
        times.append(when)
        values.append(number)
    if len(times) < 2:
        raise InputError(f"{flag}: the query has {len(times)} point(s) over the range: two or more are needed")
    return times, values


def actual_replicas(
    times: Sequence[float],
    replicas: Sequence[float],
    demand: Sequence[float],
    *,
    capacity: float,
    model: Model,
    minimum: int,
) -> tuple[list[float], list[float], float]:
    """The real replicas (times relative to the demand's start) held from sample to sample at the simulation's
    steps (the first value before the first sample), and their cost against the oracle."""
    counts: list[float] = []
    j = 0
    for k in range(len(demand)):
        t = k * model.step
        while j + 1 < len(times) and times[j + 1] <= t:
            j += 1
        counts.append(replicas[j])
    oracle = sum(oracle_count(d, capacity=capacity, model=model, min_replicas=minimum) for d in demand)
    return [k * model.step for k in range(len(counts))], counts, (sum(counts) / oracle if oracle else 0.0)


def run(args: argparse.Namespace, *, out: IO[str], err: IO[str]) -> int:
    """`autoscaler backtest`; 1 with one message on standard error when an input or an answer is wrong."""
    from autoscaler.simulate.chart import ChartError, check, draw

    try:
        model = model_of(args)
        settings = settings_of(args)
        base = base_spec(args)
        if args.chart is not None:
            check(args.chart)
        start = parse_time(args.start, flag="--start")
        end = parse_time(args.end, flag="--end")
        if not end > start:
            raise InputError(f"--end: {args.end} is not after --start {args.start}")
        if not (math.isfinite(args.query_step) and args.query_step >= 1 and args.query_step == int(args.query_step)):
            # The client sends whole-second times: a fractional step would not fall on the pieces' edges.
            raise InputError(f"--query-step: must be a whole number of seconds, 1 or more, not {args.query_step:g}")
        # The query's values as they are (no factor, or 'none'), or times a positive factor.
        given = factor_of(args)
        factor = given if isinstance(given, float) else 1.0
        times, values = query_range(
            args.prometheus,
            args.query,
            start=start,
            end=end,
            step=args.query_step,
            timeout=args.timeout,
            flag="--query",
            span=model.max_days * 86400,
        )
        first = times[0]
        try:
            prepared = prepare([t - first for t in times], [v * factor for v in values], model=model)
        except ValueError as error:
            raise InputError(f"--query: {error}") from error
        result, spec = run_prepared(
            prepared, scenario=args.scenario, base=base, model=model, settings=settings, snapshots=args.snapshots
        )
        document = summary(result, source=args.query, spec=spec)
        document["start"] = datetime.fromtimestamp(first, UTC).isoformat()
        actual = None
        if args.replicas_query:
            r_times, r_values = query_range(
                args.prometheus,
                args.replicas_query,
                start=start,
                end=end,
                step=args.query_step,
                timeout=args.timeout,
                flag="--replicas-query",
                what="a replica count",
                span=model.max_days * 86400,
                largest=INT32_MAX,
            )
            steps, counts, cost = actual_replicas(
                [t - first for t in r_times],
                r_values,
                prepared.demand,
                capacity=prepared.capacity,
                model=model,
                minimum=spec.min_replicas if spec.min_replicas is not None else 1,
            )
            actual = (steps, counts)
            document["actual"] = {"cost": cost, "meanReplicas": sum(counts) / len(counts)}
    except (InputError, ChartError) as error:
        print(f"autoscaler backtest: {error}", file=err)
        return 1
    if args.output == "json":
        print(json.dumps(document, indent=2), file=out)
    else:
        lines = [text(document)]
        if "actual" in document:
            lines.append(
                f"{'actual':18} {'':>10} {document['actual']['cost']:8.3f} "
                f"(mean {document['actual']['meanReplicas']:.1f} replicas)"
            )
        print("\n".join(lines), file=out)
    # After the scores: a chart that fails to be written after all does not lose them.
    if args.chart is not None:
        try:
            draw(result, args.chart, title=f"backtest: {args.query} ({args.scenario})", actual=actual)
        except ChartError as error:
            print(f"autoscaler backtest: {error}", file=err)
            return 1
    return 0
