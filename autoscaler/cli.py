"""The `autoscaler` command: replay today; run, check, plan, simulate, convert and demo as they land."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from autoscaler import __version__

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

Exit status: 0 when every snapshot was replayed, 1 when one was malformed (the error names the field),
2 for a usage error.
"""


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
    commands.add_parser("emulator", help="run the Kubernetes API emulator on 127.0.0.1 (for demos and tests)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["emulator"]:
        # The emulator owns its options (see `autoscaler emulator --help`).
        from autoscaler.sim.apiserver import main as emulator_main

        return emulator_main(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "replay":
        from autoscaler.replay import run

        return run(args.snapshots, output=args.output, out=sys.stdout, err=sys.stderr)
    _parser().print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
