"""The load model's command (`python -m autoscaler.sim.load`): serve `/metrics` until SIGTERM or SIGINT.

    python -m autoscaler.sim.load --api http://127.0.0.1:8001 --listen 127.0.0.1:9400 \
        --workload default/Deployment/web:cpu,rps --trace nasa.csv --scale 8 --speed 30

It prints its URL on the first line of stdout. docs/emulator.md ("The load model") describes the flags.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autoscaler.sim.load.curve import Curve, CurveError, constant, parse_steps, read_trace
from autoscaler.sim.load.exporter import LoadGenerator
from autoscaler.sim.load.model import KINDS, Series, Workload, WorkloadRef
from autoscaler.sim.signals import wait_for_stop_signal

_OPTIONS = {"weight": "weight", "cost": "cost", "capacity": "capacity", "cpu-capacity": "cpu_capacity"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m autoscaler.sim.load",
        description="Replay a load curve onto the emulator's ready pods and serve their series on /metrics.",
    )
    parser.add_argument("--api", required=True, metavar="URL", help="the API server (e.g. the emulator's URL)")
    parser.add_argument(
        "--listen",
        default="127.0.0.1:9400",
        metavar="HOST:PORT",
        help="where /metrics listens; port 0 picks one (default: 127.0.0.1:9400)",
    )
    parser.add_argument(
        "--workload",
        action="append",
        required=True,
        metavar="NS/KIND/NAME:SERIES[:KEY=VALUE,...]",
        help="a workload under load (repeatable): KIND Deployment, StatefulSet or ReplicaSet; SERIES cpu, rps "
        "and/or queue joined by commas; options weight, cost, capacity, cpu-capacity, queue override the flags",
    )
    curve = parser.add_mutually_exclusive_group(required=True)
    curve.add_argument("--trace", type=Path, metavar="CSV", help="a trace CSV (timestamp_seconds,value)")
    curve.add_argument("--constant", type=float, metavar="VALUE", help="a constant demand")
    curve.add_argument("--steps", metavar="T:V,...", help="a step curve, e.g. 0:10,60:40 (trace seconds:value)")
    parser.add_argument("--scale", type=float, metavar="PEAK", help="with --trace: scale it so its maximum is PEAK")
    parser.add_argument("--speed", type=float, default=1.0, help="trace seconds per real second (default: 1)")
    parser.add_argument("--start", type=float, default=0.0, metavar="SECONDS", help="trace time at start (default: 0)")
    parser.add_argument("--cost", type=float, default=1.0, help="CPU cores per load unit per second (default: 1)")
    parser.add_argument("--capacity", type=float, help="load units per second one ready pod serves (default: no cap)")
    parser.add_argument(
        "--cpu-capacity",
        type=float,
        metavar="CORES",
        help="cores a container without a CPU limit can use (default: no cap)",
    )
    parser.add_argument(
        "--poll-interval", type=float, default=1.0, metavar="SECONDS", help="pod list period (default: 1)"
    )
    return parser


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError as err:
        raise CurveError(f"{what}: {text!r} is not a number") from err


def parse_workload(text: str, *, curve: Curve, defaults: dict[str, Any]) -> Workload:
    """`NS/KIND/NAME:SERIES[,SERIES][:KEY=VALUE,...]` into a `Workload`."""
    target, _, rest = text.partition(":")
    series_text, _, options_text = rest.partition(":")
    parts = target.split("/")
    if len(parts) != 3 or not all(parts):
        raise CurveError(f"--workload {text!r}: expected NS/KIND/NAME:SERIES (e.g. default/Deployment/web:cpu)")
    if parts[1] not in KINDS:
        raise CurveError(f"--workload {text!r}: kind {parts[1]!r} is not one of {', '.join(KINDS)}")
    names = [s.strip() for s in series_text.split(",") if s.strip()]
    unknown = [s for s in names if s not in {m.value for m in Series}]
    if not names or unknown:
        raise CurveError(f"--workload {text!r}: series {','.join(unknown) or '(none)'}: use cpu, rps and/or queue")
    fields = dict(defaults)
    for option in filter(None, options_text.split(",")):
        key, sep, value = option.partition("=")
        if not sep or (key not in _OPTIONS and key != "queue"):
            raise CurveError(f"--workload {text!r}: option {option!r}: use {', '.join([*_OPTIONS, 'queue'])}=VALUE")
        fields[_OPTIONS.get(key, key)] = value if key == "queue" else _number(value, f"--workload {text!r}: {key}")
    ref = WorkloadRef(*parts)
    return Workload(ref=ref, curve=curve, series=frozenset(Series(s) for s in names), **fields)


def _curve(args: argparse.Namespace) -> Curve:
    if args.trace is not None:
        trace = read_trace(args.trace)
        return trace.scaled(peak=args.scale) if args.scale is not None else trace
    if args.scale is not None:
        raise CurveError("--scale applies to --trace only")
    return constant(args.constant) if args.constant is not None else parse_steps(args.steps)


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise CurveError(f"--listen {text!r}: expected HOST:PORT (e.g. 127.0.0.1:9400)")
    return host, int(port)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    try:
        curve = _curve(args)
        defaults = {"cost": args.cost, "capacity": args.capacity, "cpu_capacity": args.cpu_capacity}
        workloads = [parse_workload(w, curve=curve, defaults=defaults) for w in args.workload]
        refs = [w.ref for w in workloads]
        if len(set(refs)) != len(refs):
            raise CurveError("--workload: a workload is named twice")
        if args.poll_interval <= 0:
            raise CurveError(f"--poll-interval {args.poll_interval} must be > 0")
        host, port = _listen(args.listen)
        generator = LoadGenerator(
            workloads,
            api_url=args.api,
            host=host,
            port=port,
            speed=args.speed,
            offset_seconds=args.start,
            poll_interval_seconds=args.poll_interval,
        )
        generator.start()
    except (CurveError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"{generator.url}/metrics", flush=True)
    try:
        wait_for_stop_signal()
    finally:
        generator.stop()
    return 0
