"""The `autoscaler` command: replay, check, convert, run and plan; simulate and demo as they land.

A closed output pipe (`autoscaler replay ... | head -1`) ends the command quietly with exit status 141, as
a Unix tool killed by SIGPIPE reports in the shell; Ctrl-C ends it with 130; an output that cannot be
written (a full disk) is one line on standard error and exit status 74 (EX_IOERR). None prints a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import IO

from autoscaler import __version__

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE, what a shell reports for `yes | head -1`
EXIT_INTERRUPTED = 128 + 2  # 128 + SIGINT
EXIT_IO_ERROR = 74  # sysexits.h EX_IOERR: the output could not be written (a full disk)

REPLAY_HELP = """\
Replay decision snapshots: each JSON file holds everything one HPA decision needs (the clock reading
`now`, the controller `settings`, the `autoscaler` object with its autoscaling/v2 spec and status
conditions, the target's `scale`, the `pods`, one `metrics` entry per spec metric in the shape of the
Kubernetes metrics APIs or an `error`, and the `behaviorState`). For each snapshot the decision is printed:
desiredReplicas and whether the scale would be written (rescale), the conditions and events the HPA would
set, per metric the proposed replicas, current value and usage ratio (or the error), the pods counted as
ready/unready/missing/ignored, the stabilization window, the limit that clipped the result, the status
and the new behaviorState. Snapshots are independent: state never carries from one file to the next.
The format, input and output, is documented field by field in docs/snapshot.md.

Exit status: 0 when every snapshot was replayed, 1 when one was malformed (the error names the file and
the field or byte), 2 for a usage error, 70 for a bug in the autoscaler, 74 when the output could not be
written, 141 when the output pipe closed.
"""

CHECK_HELP = """\
Check autoscaler spec files as the API server validates them: every PrometheusAutoscaler
(autoscaler.dev/v1alpha1) and autoscaling/v2 HorizontalPodAutoscaler document of each YAML file ('-' reads
stdin); documents of other kinds are skipped. One line per problem: FILE: document N (KIND NAMESPACE/NAME):
FIELD: what is wrong. Each object is checked as the update of an object the cluster already holds, unless
--new checks it as a new object (then minReplicas 0 needs --feature-gates HPAScaleToZero=true, and
scaleTargetRef.apiVersion must name an API group). The rules: docs/spec.md.

The summary counts the autoscalers, and apart from them the other documents with a problem (not a
Kubernetes object, or refused for recursive or excessive YAML aliases).

With --config SETTINGS, the daemon's settings file is checked too (docs/configuration.md, with the
AUTOSCALER_* environment overrides `autoscaler run` would apply), then every spec file it names under
specs.files (a missing one is a problem here) and each FILE, and every metric's prometheus block against the
settings' servers and templates; the feature gates are the settings' controller.featureGates.

Exit status: 0 when every autoscaler is valid, 1 when one is not (or another document or a file is not,
or the settings), 2 for a usage error, 74 when the output could not be written.
"""


CONVERT_HELP = """\
Convert autoscaler manifests into PrometheusAutoscalers (autoscaler.dev/v1alpha1) on standard output: a
HorizontalPodAutoscaler (autoscaling/v2, v2beta2 or v1) keeps its spec; a KEDA ScaledObject (keda.sh/v1alpha1)
becomes its closest equivalent (each prometheus trigger an External metric with the trigger's query, cpu and
memory triggers Resource metrics). Every field that cannot be carried over, and every point to act on (a
Prometheus server to add to the daemon settings), is one line on standard error and a comment in the YAML
output. Documents of other kinds are skipped. Migration guide: docs/migration.md.

Exit status: 0 when every HPA and ScaledObject converted, 1 when one could not be (the error names the file,
the document and the field), 2 for a usage error.
"""


def _feature_gates(text: str) -> dict[str, bool]:
    from autoscaler.spec.settings import parse_feature_gates

    try:
        return parse_feature_gates(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autoscaler",
        description="A Prometheus-driven Kubernetes autoscaler that makes exactly the HPA's decisions.",
    )
    parser.add_argument("--version", action="version", version=f"autoscaler {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser(
        "replay",
        help="print the HPA decision for each decision snapshot (JSON)",
        description=REPLAY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("snapshots", nargs="+", metavar="SNAPSHOT", help="snapshot JSON files ('-' reads stdin)")
    replay.add_argument(
        "-o",
        "--output",
        choices=("json", "jsonl", "text"),
        default="json",
        help="json: one object (an array for several snapshots); jsonl: one object per line; text: a summary",
    )
    check = commands.add_parser(
        "check",
        help="validate autoscaler spec files (YAML) as the API server does",
        description=CHECK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("files", nargs="*", metavar="FILE", help="YAML files ('-' reads stdin)")
    check.add_argument("--config", metavar="SETTINGS", help="also check the daemon settings and the specs they name")
    check.set_defaults(usage_error=check.error)
    check.add_argument(
        "--feature-gates",
        type=_feature_gates,
        default={},
        metavar="GATES",
        help="kube-controller-manager's syntax, e.g. HPAScaleToZero=true (known: HPAScaleToZero, "
        "HPAConfigurableTolerance)",
    )
    check.add_argument("--new", action="store_true", help="check each object as a new one (kubectl create)")
    convert = commands.add_parser(
        "convert",
        help="turn HPA manifests and KEDA ScaledObjects into PrometheusAutoscalers",
        description=CONVERT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.add_argument("files", nargs="+", metavar="FILE", help="YAML or JSON files ('-' reads stdin)")
    convert.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="the output format")
    run = commands.add_parser(
        "run",
        help="run the autoscaler daemon (docs/daemon.md)",
        description="Run the daemon: watch the specs, reconcile the due targets every tick, serve /metrics, "
        "/healthz, /readyz and /debug/snapshots. SIGTERM or Ctrl-C: finish the tick in flight (within "
        "shutdownGraceSeconds), release the lease, exit 0. Exit status 1: it could not start (one line says why); "
        "during start-up (waiting for the API server or the caches) SIGTERM exits 0 and Ctrl-C 130, each logged "
        "as startup_interrupted.",
    )
    run.add_argument("--config", required=True, metavar="FILE", help="the daemon's settings (YAML)")
    run.add_argument("--kubeconfig", metavar="PATH", help="a kubeconfig file (default: in-cluster, else $KUBECONFIG)")
    plan = commands.add_parser(
        "plan",
        help="evaluate every target once and print the decisions; write nothing",
        description="Evaluate every target once, as the daemon would, and print what it would decide; nothing "
        "is written (no scale, status, event or state). Exit status 1 when a target could not be evaluated or "
        "the daemon could not start.",
    )
    plan.add_argument("--config", required=True, metavar="FILE", help="the daemon's settings (YAML)")
    plan.add_argument("--kubeconfig", metavar="PATH", help="a kubeconfig file (default: in-cluster, else $KUBECONFIG)")
    plan.add_argument("-o", "--output", choices=("text", "json"), default="text", help="a table, or JSON")
    from autoscaler.simulate.cli import add_parser as add_simulate

    add_simulate(commands)
    from autoscaler.simulate.backtest import add_parser as add_backtest

    add_backtest(commands)
    commands.add_parser("emulator", help="run the Kubernetes API emulator on 127.0.0.1 (for demos and tests)")
    return parser


def check(paths: Sequence[str], *, gates: dict[str, bool], new: bool, out: IO[str]) -> int:
    """`autoscaler check`: one line per problem, then a summary; 1 when anything is invalid."""
    from autoscaler.spec.files import load_spec_file
    from autoscaler.spec.settings import HPA_SCALE_TO_ZERO, check_gates

    scale_to_zero = check_gates(gates)[HPA_SCALE_TO_ZERO]
    checked = invalid = others = bad_files = 0
    for path in paths:
        result = load_spec_file(path, scale_to_zero=scale_to_zero, stored=not new)
        for field, message in result.problems:
            print(f"{path}: {field + ': ' if field else ''}{message}", file=out)
        bad_files += 1 if result.problems else 0
        for doc in result.documents:
            where = f"{path}: document {doc.index}" + (f" ({doc.label})" if doc.label else "")
            for field, message in doc.problems:
                print(f"{where}: {field + ': ' if field else ''}{message}", file=out)
            autoscaler = doc.autoscaler
            explicit = (
                autoscaler is not None and not autoscaler.implicit_scale_to_zero and autoscaler.model.scale_to_zero
            )
            if autoscaler is not None and autoscaler.model.min_replicas == 0 and not scale_to_zero and not explicit:
                print(
                    f"{where}: spec.minReplicas: note: 0 is kept on an object that already has it, but with "
                    "HPAScaleToZero off the API server refuses it on a new object (--new checks it as new)",
                    file=out,
                )
            if doc.is_autoscaler:
                checked += 1
                invalid += 1 if doc.problems else 0
            else:  # not a Kubernetes object, or not readable: reported, but not counted as an autoscaler
                others += 1
    summary = f"{checked - invalid} of {checked} autoscaler(s) valid"
    if others:
        summary += f"; {others} other document(s) not valid"
    if bad_files:
        summary += f"; {bad_files} of {len(paths)} file(s) unreadable or without an autoscaler"
    print(summary, file=out)
    return 1 if invalid or others or bad_files else 0


def _run(argv: list[str]) -> int:
    if argv[:1] == ["emulator"]:
        # The emulator owns its options (see `autoscaler emulator --help`).
        from autoscaler.sim.apiserver import main as emulator_main

        return emulator_main(argv[1:], prog="autoscaler emulator")
    args = _parser().parse_args(argv)
    if args.command == "replay":
        from autoscaler.replay import run

        return run(args.snapshots, output=args.output, out=sys.stdout, err=sys.stderr)
    if args.command == "check" and args.config is not None:
        from autoscaler.daemon.check import check_config

        return check_config(args.config, args.files, gates=args.feature_gates, new=args.new, out=sys.stdout)
    if args.command == "check" and not args.files:
        args.usage_error("the following arguments are required: FILE")
    if args.command == "check":
        return check(args.files, gates=args.feature_gates, new=args.new, out=sys.stdout)
    if args.command == "convert":
        from autoscaler.spec.convert import run as convert_run

        return convert_run(args.files, output=args.output, out=sys.stdout, err=sys.stderr)
    if args.command == "backtest":
        from autoscaler.simulate.backtest import run as backtest_run

        return backtest_run(args, out=sys.stdout, err=sys.stderr)
    if args.command == "simulate":
        from autoscaler.simulate.cli import run as simulate_run

        return simulate_run(args, out=sys.stdout, err=sys.stderr)
    if args.command == "run":
        from autoscaler.daemon.app import main_run

        return main_run(args.config, kubeconfig=args.kubeconfig)
    if args.command == "plan":
        from autoscaler.daemon.plan import main_plan

        return main_plan(args.config, kubeconfig=args.kubeconfig, output=args.output)
    _parser().print_help()
    return EXIT_USAGE


def _discard_stdout() -> None:
    """Point standard output at /dev/null: Python flushes it again at exit, and would complain."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        status = _run(argv)
        sys.stdout.flush()  # a write error shows here, not at exit where Python would print "Exception ignored"
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except OSError as err:
        if argv[:1] == ["emulator"]:
            raise
        # replay, check and convert read their files themselves and report what they cannot read; an OSError out of
        # them, or out of --help and --version, is a write to standard output that failed (a full disk).
        _discard_stdout()
        command = f"autoscaler {argv[0]}" if argv[:1] in (["replay"], ["check"], ["convert"]) else "autoscaler"
        with contextlib.suppress(OSError):  # standard error may be full too: the exit status still says it
            print(f"{command}: cannot write the output: {err.strerror or err}", file=sys.stderr, flush=True)
        return EXIT_IO_ERROR
    return status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
