"""`autoscaler replay`: one decision per snapshot file, through the same core the daemon will run.

Replays are independent: state never carries from one file to the next. A malformed snapshot is reported
with the file and the field (or byte) it is wrong in, and the other snapshots are still replayed. Every
problem with a snapshot has its own message (autoscaler/spec): `replay_file` lets nothing else through, so
an exception out of it is a bug, which `run` reports as one (INTERNAL_ERROR) rather than as bad input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from autoscaler.core.decision import Decision, decide, dry_run, failed_rescale, not_written
from autoscaler.spec.errors import SpecError
from autoscaler.spec.files import parse_json, read_text
from autoscaler.spec.render import decision, format_reference
from autoscaler.spec.snapshot import Snapshot, load_snapshot


def decide_snapshot(snap: Snapshot) -> Decision:
    """The decision a snapshot holds the inputs of, as the daemon made it (its dry-run and failed write applied)."""
    result = decide(
        spec=snap.spec,
        scale=snap.scale,
        pods=snap.pods,
        metrics=snap.metrics,
        state=snap.state,
        settings=snap.settings,
        now=snap.now,
        conditions=snap.conditions,
        last_scale_time=snap.last_scale_time,
        previous_desired_replicas=snap.previous_desired_replicas,
        controllers=snap.controllers,
        pause=snap.pause,
        shadow=snap.shadow,
        inputs=snap.inputs,
    )
    # As the daemon applied them: a dry-run rescale is reported, not written; a failed write is FailedRescale; a
    # write the daemon did not make (fenced, or not needed after a re-read) is no rescale.
    if snap.dry_run:
        result = dry_run(result, state=snap.state, conditions=snap.conditions, last_scale_time=snap.last_scale_time)
    elif snap.scale_write_error is not None and result.rescale:
        result = failed_rescale(
            result,
            snap.scale_write_error,
            reference=format_reference(snap.spec.scale_target_ref),
            state=snap.state,
            conditions=snap.conditions,
            previous_desired_replicas=snap.previous_desired_replicas,
            last_scale_time=snap.last_scale_time,
            now=snap.now,
        )
    elif snap.scale_not_written:
        result = not_written(result)
    return result


def replay_data(data: Any, *, source: str = "", api_rules: bool = True) -> dict[str, Any]:
    """Decide one parsed snapshot; raises SpecError naming the field when it is malformed.

    `api_rules=False` is for transcribed upstream controller tests only (see `spec.validation.load_spec`).
    """
    snap = load_snapshot(data, source=source, api_rules=api_rules)
    result = decide_snapshot(snap)
    return decision(result, now=snap.now, name=snap.name, namespace=snap.namespace, source=source)


def replay_file(path: str) -> dict[str, Any]:
    """Replay one file; a problem with it becomes `{"snapshot": path, "error": {...}}`, naming the field."""
    try:
        return replay_data(parse_json(read_text(path), source=path), source=path)
    except SpecError as err:
        return _error(path, str(err), err.problems)


def _error(path: str, message: str, problems: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "snapshot": path,
        "error": {
            "message": message,
            "problems": [{"field": field, "message": text} for field, text in problems],
        },
    }


# The message of the last-resort handler: seeing it means a bug in the autoscaler, not in the snapshot.
INTERNAL_ERROR = "internal error (a bug in the autoscaler, please report it with the snapshot)"


def _replay_or_report(path: str) -> dict[str, Any]:
    try:
        return replay_file(path)
    except Exception as err:  # the last resort: one bug must not hide the other snapshots
        result = _error(path, f"{path}: {INTERNAL_ERROR}: {type(err).__name__}: {err}", [])
        result["error"]["internal"] = True
        return result


def _text(result: dict[str, Any]) -> str:
    if "formatVersion" not in result:
        return f"{result['snapshot']}: ERROR {result['error']['message']}"
    lines = [f"{result['snapshot']}: {result['summary']}"]
    for metric in result["metrics"]:
        if metric["error"]:
            lines.append(f"  metric[{metric['index']}] {metric['name']}: ERROR {metric['error']}")
        else:
            lines.append(
                f"  metric[{metric['index']}] {metric['name']}: {metric['proposedReplicas']} ({metric['explanation']})"
            )
        if metric["pods"] and any(metric["pods"][group] for group in ("unready", "missing", "ignored")):
            counted = ", ".join(f"{group} {len(names)}" for group, names in metric["pods"].items())
            named = "; ".join(
                f"{group}: {' '.join(names)}" for group, names in metric["pods"].items() if names and group != "ready"
            )
            lines.append(f"    pods: {counted} ({named})")
    for cond in result["conditions"]:
        lines.append(f"  {cond['type']}={cond['status']} {cond['reason']}: {cond['message']}")
    for event in result["events"]:
        lines.append(f"  event {event['type']} {event['reason']}: {event['message']}")
    return "\n".join(lines)


EXIT_MALFORMED = 1
EXIT_INTERNAL_ERROR = 70  # sysexits.h EX_SOFTWARE


def run(paths: Sequence[str], *, output: str, out: IO[str], err: IO[str]) -> int:
    """Replay every path; exit status 1 when any snapshot was malformed, 70 on a bug, else 0."""
    results = [_replay_or_report(p) for p in paths]
    failed = [r for r in results if "formatVersion" not in r]
    for result in failed:
        print(f"autoscaler replay: {result['error']['message']}", file=err)
    if output == "jsonl":
        for result in results:
            print(json.dumps(result, separators=(",", ":")), file=out)
    elif output == "text":
        print("\n".join(_text(r) for r in results), file=out)
    else:
        document: Any = results[0] if len(results) == 1 else results
        print(json.dumps(document, indent=2), file=out)
    if any(r["error"].get("internal") for r in failed):
        return EXIT_INTERNAL_ERROR
    return EXIT_MALFORMED if failed else 0
