"""The emulator's command (`python -m autoscaler.sim.apiserver`): serve until SIGTERM or SIGINT.

    python -m autoscaler.sim.apiserver --port 8001 --crd my-crd.yaml --seed objects.yaml

It prints its URL on the first line of stdout (for `kubectl --server=URL` or a client's host), loads the
project's own CRD unless `--crd` files are given, and pre-creates the objects of every `--seed` file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from autoscaler.sim.apiserver.errors import ApiError
from autoscaler.sim.apiserver.server import CRD_KIND, EmulatedApiServer, default_crds, load_manifests
from autoscaler.sim.signals import wait_for_stop_signal

PROG = "python -m autoscaler.sim.apiserver"


def _parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Run the Kubernetes API emulator.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8001, help="port to listen on; 0 picks a free one (default: 8001)")
    parser.add_argument(
        "--crd",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a YAML file of CustomResourceDefinitions to serve (repeatable; default: the project's own)",
    )
    parser.add_argument(
        "--seed",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a YAML file of manifests to create at start (repeatable)",
    )
    parser.add_argument(
        "--start-delay-seconds",
        type=float,
        default=2.0,
        help="default time from a pod's creation to Running (default: 2)",
    )
    parser.add_argument(
        "--ready-delay-seconds", type=float, default=3.0, help="default time from Running to Ready (default: 3)"
    )
    return parser  # fmt: skip


class _SeedError(Exception):
    """A seed manifest the emulator refused; the message names the file and the document."""


def _manifests(path: Path) -> list[dict[str, Any]]:
    try:
        docs = load_manifests(path.read_text())
    except yaml.YAMLError as err:
        raise _SeedError(f"{path}: not valid YAML: {err}") from err
    for index, doc in enumerate(docs, start=1):
        if not isinstance(doc, dict):
            raise _SeedError(f"{path}: document {index} is not a mapping")
    return docs


def _describe(manifest: dict[str, Any]) -> str:
    name = (manifest.get("metadata") or {}).get("name", "?")
    return f"{manifest.get('apiVersion', '?')} {manifest.get('kind', '?')} {name}"


def _reason(err: Exception) -> str:
    return str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)


def main(argv: list[str] | None = None, *, prog: str = PROG) -> int:
    """Run the emulator until interrupted; `prog` names the command in usage and errors (`autoscaler emulator`)."""
    args = _parser(prog).parse_args(argv)
    try:
        crds = default_crds()
        if args.crd:
            crds = [d for f in args.crd for d in _manifests(f) if d.get("kind") == CRD_KIND]
        seeds = [(f, i, d) for f in args.seed for i, d in enumerate(_manifests(f), start=1)]
        server = EmulatedApiServer(
            host=args.host,
            port=args.port,
            crds=crds,
            start_delay_seconds=args.start_delay_seconds,
            ready_delay_seconds=args.ready_delay_seconds,
        )
        # CRDs first, so that their custom resources can follow (as EmulatedApiServer.seed orders them).
        for path, index, manifest in sorted(seeds, key=lambda s: s[2].get("kind") != CRD_KIND):
            try:
                server.seed([manifest])
            except (ValueError, KeyError, TypeError, ApiError) as err:
                raise _SeedError(f"{path}: document {index} ({_describe(manifest)}): {_reason(err)}") from err
        server.start()
    except _SeedError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(server.url, flush=True)
    try:
        wait_for_stop_signal()
    finally:
        server.stop()
    return 0
