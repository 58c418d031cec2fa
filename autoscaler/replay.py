"""`autoscaler replay`: one decision per snapshot file, through the same core the daemon runs.

Replays are independent: state never carries from one file to the next. A malformed snapshot is reported
with the field it is wrong in, and the other snapshots are still replayed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from autoscaler.core.decision import decide
from autoscaler.spec.errors import SpecError
from autoscaler.spec.render import decision
from autoscaler.spec.snapshot import load_snapshot


def replay_data(data: Any, *, source: str = "", api_rules: bool = True) -> dict[str, Any]:
    """Decide one parsed snapshot; raises SpecError naming the field when it is malformed.

    `api_rules=False` is for transcribed upstream controller tests only (see `spec.validation.load_spec`).
    """
    snap = load_snapshot(data, source=source, api_rules=api_rules)
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
    )
    return decision(result, now=snap.now, name=snap.name, namespace=snap.namespace, source=source)


def _read(path: str) -> Any:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        problem = f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
        raise SpecError([("", problem)], source=path) from None


def replay_file(path: str) -> dict[str, Any]:
    """Replay one file; a problem becomes `{"snapshot": path, "error": {...}}` instead of an exception."""
    try:
        return replay_data(_read(path), source=path)
    except SpecError as err:
        return {
            "snapshot": path,
            "error": {
                "message": str(err),
                "problems": [{"field": field, "message": message} for field, message in err.problems],
            },
        }
    except OSError as err:
        return {"snapshot": path, "error": {"message": f"{path}: {err.strerror}", "problems": []}}


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
    for cond in result["conditions"]:
        lines.append(f"  {cond['type']}={cond['status']} {cond['reason']}: {cond['message']}")
    for event in result["events"]:
        lines.append(f"  event {event['type']} {event['reason']}: {event['message']}")
    return "\n".join(lines)


def run(paths: Sequence[str], *, output: str, out: IO[str], err: IO[str]) -> int:
    """Replay every path; exit status 1 when any snapshot was malformed, else 0."""
    results = [replay_file(p) for p in paths]
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
    return 1 if failed else 0
