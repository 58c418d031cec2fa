"""The flight recorder: the last N decision snapshots of each target, to replay what the daemon decided.

A run of consecutive decisions with the same outcome (the same replicas, write, error, conditions and metric
proposals: `_decided`) takes one entry, its newest decision, which each further decision of the run replaces
(`repeated` counts the decisions it stands for, `firstTime` is the first of them). A steady target therefore
holds one entry, and the N entries reach back over the last N changes of outcome.

Each entry keeps the outcome's snapshot (the decision's inputs, by reference: `spec.snapshot_out.DecisionInputs`)
and a fingerprint of its decision (`_decided`: the outcome that makes a run, hashed, and the desired count), not
the decision itself: the decision is what the snapshot replays to, so it is made again when the entry is read,
the snapshot rendered in `autoscaler replay`'s format (docs/snapshot.md), loaded and decided as `autoscaler
replay` does, and the replayed decision is checked against the fingerprint; one that differs is served with
`replayMismatch` (the daemon's desired count beside the replay's) and logged as an error: the recorder checks,
at every read, that it could replay what the daemon did. A tick therefore costs the recorder one small object
per target (between ticks ~1.5 KiB less than keeping each decision), and N ticks of a target hold what
those decisions were made from, not N JSON documents. With a directory, each snapshot is also rendered and
written at once as `<namespace>_<name>_<UTC timestamp>.json` (written to a temporary name, then renamed, so a
reader never sees half a file), keeping the newest N files per target. Nothing it makes is acted on.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import structlog

from autoscaler.core.decision import Decision
from autoscaler.daemon.model import Snapshot, TargetKey, TargetOutcome
from autoscaler.replay import decide_snapshot
from autoscaler.spec.errors import SpecError
from autoscaler.spec.render import decision as render_decision
from autoscaler.spec.snapshot import load_snapshot

log = structlog.get_logger(__name__)


def _stamp(when: datetime) -> str:
    """A UTC timestamp that sorts as text: 20260301T120000.000000Z."""
    return when.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


@dataclass(frozen=True, slots=True)
class _Entry:
    """One recorded outcome, unrendered: its snapshot and its decision's fingerprint (None: nothing decided)."""

    key: TargetKey
    now: datetime
    source: str
    origin: str
    dry_run: bool
    wrote_scale: bool
    error: str
    snapshot: Snapshot
    decided: int | None  # hash(_decided(decision)): what replaying `snapshot` must give again
    desired: int | None  # the decision's desiredReplicas, shown when a replay does not give it again
    error_type: str
    repeated: int = 1
    first: datetime | None = None  # the first decision this entry stands for, when it stands for several
    file: str = ""  # its file in the directory ("" when none was written)

    def render(self) -> dict[str, Any]:
        """The entry as /debug/snapshots serves it; the snapshot rendered and replayed now."""
        key = self.key
        snapshot = self.snapshot.json()
        rendered: dict[str, Any] | None = None
        mismatch: dict[str, Any] | None = None
        if self.decided is not None:
            try:
                replayed = decide_snapshot(load_snapshot(snapshot, source=str(key)))
            except Exception as err:  # the daemon wrote a snapshot replay cannot decide: a bug, shown as such
                detail = str(err) if isinstance(err, SpecError) else f"{type(err).__name__}: {err}"
                mismatch = {"desiredReplicas": self.desired, "replayError": detail}
            else:
                rendered = render_decision(
                    replayed, now=self.now, name=key.name, namespace=key.namespace, source=self.source
                )
                if hash(_decided(replayed)) != self.decided:
                    mismatch = {"desiredReplicas": self.desired, "replayedDesiredReplicas": replayed.desired_replicas}
            if mismatch is not None:
                log.error("snapshot_replay_mismatch", target=str(key), time=_iso(self.now), **mismatch)
        out = {
            "time": _iso(self.now),
            "source": self.source,
            "origin": self.origin,
            "dryRun": self.dry_run,
            "wroteScale": self.wrote_scale,
            "error": self.error or None,
            "snapshot": snapshot,
            "decision": rendered,
            "repeated": self.repeated,
            "firstTime": _iso(self.first or self.now),
        }
        if mismatch is not None:
            out["replayMismatch"] = mismatch
        return out


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _decided(decision: Decision) -> tuple[object, ...]:
    """What two decisions of a run share, and what a replay must give again: the decision's result, conditions
    (type, status, reason) and per-metric proposals and errors; not the readings, messages or times."""
    return (
        decision.current_replicas,
        decision.desired_replicas,
        decision.rescale,
        decision.min_replicas,
        decision.max_replicas,
        decision.error,
        tuple((c.type, c.status, c.reason) for c in decision.conditions),
        tuple((m.name, m.proposed_replicas, m.error) for m in decision.metrics),
        tuple((m.name, m.proposed_replicas, m.error) for m in decision.extra_metrics),
        decision.shadow.theirs if decision.shadow is not None else None,
    )


def _run_key(entry: _Entry) -> tuple[object, ...]:
    """What two outcomes must share to be one run: the write, the error and the decision's fingerprint."""
    return (entry.source, entry.origin, entry.dry_run, entry.wrote_scale, entry.error, entry.error_type,
            entry.decided)  # fmt: skip


class FlightRecorder:
    """The last `size` snapshots per target (0: none), in memory and optionally in `directory`. Thread-safe."""

    def __init__(self, size: int = 10, directory: str = "") -> None:
        if size < 0:
            raise ValueError(f"flight recorder size must not be negative, not {size}")
        self.size = size
        self.directory = directory
        self._lock = threading.Lock()
        # A list each (a deque costs ~600 bytes even for the one entry of a steady target), at most `size` long.
        self._entries: dict[TargetKey, list[_Entry]] = {}
        if directory and size:
            # OSError when the directory cannot be made or written: found at start, not at the first decision.
            os.makedirs(directory, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
            os.close(fd)
            os.unlink(probe)

    def record(self, outcome: TargetOutcome, *, now: datetime) -> None:
        """Keep the outcome's snapshot (an outcome without one, e.g. a spec that could not be read, is skipped)."""
        if outcome.snapshot is None or self.size == 0:
            return
        key = outcome.key
        entry = _Entry(
            key=key,
            now=now,
            source=outcome.target.source,
            origin=outcome.target.origin.value,  # the member's own string (str() makes a new one each time)
            dry_run=outcome.dry_run,
            wrote_scale=outcome.wrote_scale,
            error=outcome.error,
            snapshot=outcome.snapshot,
            decided=hash(_decided(outcome.decision)) if outcome.decision is not None else None,
            desired=outcome.decision.desired_replicas if outcome.decision is not None else None,
            error_type=outcome.error_type,
        )
        with self._lock:
            entries = self._entries.get(key)
            if entries is None:
                entries = self._entries[key] = []
            replaced = _fold(entries, entry, size=self.size)
            entry = entries[-1]
        if self.directory:
            rendered = _render_snapshot(entry)
            if rendered is not None:
                # The run's earlier file goes once its newest is written (never when that write failed), and
                # before the pruning, so the directory keeps one file per entry.
                stale = replaced.file if replaced is not None else ""
                name = self._write(key, rendered, now, replacing=stale)
                if name:
                    with self._lock:
                        if entries and entries[-1] is entry:
                            entries[-1] = replace(entry, file=name)

    def _prefix(self, key: TargetKey) -> str:
        return f"{key.namespace}_{key.name}_"

    def _write(self, key: TargetKey, snapshot: Mapping[str, Any], now: datetime, *, replacing: str = "") -> str:
        """Write the snapshot as the target's newest file, then remove the file it replaces (`replacing`, when
        another) and the oldest past `size`; its name ("" when it could not be written: nothing is removed)."""
        name = f"{self._prefix(key)}{_stamp(now)}.json"
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.directory)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(snapshot, out, indent=1, sort_keys=False)
                    out.write("\n")
                os.replace(tmp, os.path.join(self.directory, name))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            if replacing and replacing != name:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.directory, replacing))
            self._prune(key)
        except OSError as err:
            log.warning("snapshot_write_failed", target=str(key), directory=self.directory, error=str(err))
            return ""
        return name

    def _prune(self, key: TargetKey) -> None:
        prefix = self._prefix(key)
        # namespace and name are DNS names (no "_"), so the prefix names exactly one target's files.
        mine = sorted(n for n in os.listdir(self.directory) if n.startswith(prefix) and n.endswith(".json"))
        for old in mine[: max(0, len(mine) - self.size)]:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.directory, old))

    def forget(self, key: TargetKey) -> None:
        """Drop a target that no longer exists from memory (its files stay)."""
        with self._lock:
            self._entries.pop(key, None)

    def snapshots(self, key: TargetKey | None = None) -> dict[str, list[dict[str, Any]]]:
        """Per target ("ns/name"), its entries oldest first, rendered now; only `key` when given."""
        with self._lock:
            if key is not None:
                chosen = {key: list(self._entries.get(key, ()))}
            else:
                chosen = {k: list(v) for k, v in sorted(self._entries.items())}
        out: dict[str, list[dict[str, Any]]] = {}
        for k, entries in chosen.items():
            out[str(k)] = [r for r in (_render(e) for e in entries) if r is not None]
        return out


def _fold(entries: list[_Entry], entry: _Entry, *, size: int) -> _Entry | None:
    """Append `entry` (dropping the oldest past `size`), or, when it continues the run of the newest entry, let
    it replace that one (which is returned): a run keeps its newest decision."""
    if entries and _run_key(entries[-1]) == _run_key(entry):
        newest = entries[-1]
        entries[-1] = replace(entry, repeated=newest.repeated + 1, first=newest.first or newest.now)
        return newest
    entries.append(entry)
    if len(entries) > size:
        del entries[0]
    return None


def _render_snapshot(entry: _Entry) -> dict[str, Any] | None:
    """The entry's snapshot JSON; None (and the traceback logged) when it cannot be rendered."""
    try:
        return entry.snapshot.json()
    except Exception as err:  # a snapshot that cannot be written must not stop the recorder nor the tick
        log.error("snapshot_failed", target=str(entry.key), traceback="".join(traceback.format_exception(err)))
        return None


def _render(entry: _Entry) -> dict[str, Any] | None:
    """The entry as served; None (and the traceback logged) when its snapshot cannot be rendered."""
    try:
        return entry.render()
    except Exception as err:  # one entry that cannot be rendered must not hide the others
        log.error("snapshot_failed", target=str(entry.key), traceback="".join(traceback.format_exception(err)))
        return None
