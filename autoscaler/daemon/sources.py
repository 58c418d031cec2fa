"""Spec sources: PrometheusAutoscaler objects from the watch-fed cache, and spec files, as `Target`s.

Both read every object through `autoscaler.spec.objects.load_autoscaler` (a file's documents through
`autoscaler.spec.files`, which calls it), so a spec means the same wherever it was written. A source never
raises for bad input: an invalid object or a broken file is reported through `on_problem` (the daemon logs
it, counts it, and sends a Warning Event for an object of the cluster) and skipped; a broken file's last good
version keeps running. This module must not reconcile anything nor talk to the API server itself.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import structlog

from autoscaler.core.labels import Selector, parse_selector
from autoscaler.core.pause import PAUSE_ANNOTATIONS
from autoscaler.daemon.config import spec_paths
from autoscaler.daemon.model import Origin, Target, TargetKey
from autoscaler.kube.status import CachedObject
from autoscaler.spec.errors import SpecError
from autoscaler.spec.files import SpecFile, load_spec_text, read_text
from autoscaler.spec.objects import Autoscaler, describe, load_autoscaler
from autoscaler.spec.shadow import SHADOW

log = structlog.get_logger(__name__)

DEFAULT_NAMESPACE = "default"  # a file spec without a namespace, as `kubectl apply` puts it


@dataclass(frozen=True, slots=True)
class SpecProblem:
    """A spec that cannot run: where it was read, what is wrong, and the cluster object when there is one."""

    origin: Origin
    source: str
    message: str
    key: TargetKey | None = None
    obj: Mapping[str, Any] | None = None
    kind: str = "spec_invalid"  # the error type it is counted under: spec_invalid, spec_file_unreadable, ...


ProblemSink = Callable[[SpecProblem], None]


def _ignore(problem: SpecProblem) -> None:
    """The default sink: problems are still logged by the source."""


class SpecSource(Protocol):
    """What the loop needs from a source: refresh (at most once per tick) and its current targets."""

    origin: Origin

    def refresh(self) -> list[Target]: ...

    @property
    def loaded(self) -> bool: ...

    def counts(self) -> Mapping[str, int]: ...


class ObjectStore(Protocol):
    """The part of `kube.status.AutoscalerCache` a ResourceSource reads."""

    def items(self) -> Sequence[Mapping[str, Any]]: ...

    def has_synced(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class TargetDefaults:
    """What a spec that does not say gets: the daemon's sync period; and the global dry-run, which wins."""

    sync_period_seconds: float = 15.0
    dry_run: bool = False
    scale_to_zero: bool = False  # the HPAScaleToZero feature gate, for validation


def make_target(
    autoscaler: Autoscaler,
    *,
    origin: Origin,
    source: str,
    defaults: TargetDefaults,
    uid: str = "",
    generation: int | None = None,
    stored: Mapping[str, Any] | None = None,
) -> Target:
    """A Target for a validated spec, with its own sync period and dry-run or the daemon's (shadow mode is dry-run)."""
    period = autoscaler.sync_period_seconds
    spec_dry_run = autoscaler.dry_run
    return Target(
        key=TargetKey(autoscaler.namespace or DEFAULT_NAMESPACE, autoscaler.name),
        origin=origin,
        autoscaler=autoscaler,
        source=source,
        sync_period_seconds=float(period) if period is not None else defaults.sync_period_seconds,
        dry_run=defaults.dry_run or spec_dry_run or autoscaler.mode == SHADOW,
        uid=uid,
        generation=generation,
        stored=stored,
    )


# --- the custom resource -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Parsed:
    version: str
    target: Target | None
    problem: SpecProblem | None


class ResourceSource:
    """PrometheusAutoscaler objects of the cache (matching `label_selector`) as Targets.

    Each object is parsed once per resourceVersion, and a valid one not even then when its spec, apiVersion and
    kind are those last parsed (a status write changes only the status: the spec is reused, the object kept as
    the target's `stored`); an invalid one is reported once per resourceVersion.
    """

    origin = Origin.RESOURCE

    def __init__(
        self,
        cache: ObjectStore,
        *,
        defaults: TargetDefaults,
        label_selector: str = "",
        on_problem: ProblemSink = _ignore,
    ) -> None:
        self._cache = cache
        self._defaults = defaults
        self._selector: Selector | None = parse_selector(label_selector) if label_selector.strip() else None
        self._on_problem = on_problem
        self._parsed: dict[tuple[str, str], _Parsed] = {}
        self._loaded = False

    @property
    def loaded(self) -> bool:
        """Whether the cache has synced and the objects were read once."""
        return self._loaded

    def counts(self) -> Mapping[str, int]:
        """Specs by state: valid and invalid."""
        valid = sum(1 for p in self._parsed.values() if p.target is not None)
        return {"valid": valid, "invalid": len(self._parsed) - valid}

    def _selected(self, obj: Mapping[str, Any]) -> bool:
        if self._selector is None:
            return True
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return self._selector.matches({str(k): str(v) for k, v in labels.items()})

    def refresh(self) -> list[Target]:
        """The current targets; objects that changed since the last call are parsed again."""
        if not self._cache.has_synced():
            return []
        seen: dict[tuple[str, str], _Parsed] = {}
        for obj in self._cache.items():
            if not self._selected(obj):
                continue
            meta = obj.get("metadata") or {}
            ident = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            version = str(meta.get("resourceVersion") or "")
            parsed = self._parsed.get(ident)
            if parsed is None or parsed.version != version or not version:
                parsed = self._reuse(parsed, obj, version) or self._parse(obj, version)
                if parsed.problem is not None:
                    _report(parsed.problem, self._on_problem)
            seen[ident] = parsed
        self._parsed = seen
        self._loaded = True
        return [p.target for _, p in sorted(seen.items()) if p.target is not None]

    def _reuse(self, parsed: _Parsed | None, obj: Mapping[str, Any], version: str) -> _Parsed | None:
        """The last valid parse with the new object stored, when only what the spec does not read changed
        (the status the daemon writes, labels, annotations but the pause ones); None: parse again."""
        if parsed is None or parsed.target is None or parsed.target.stored is None:
            return None
        old = parsed.target.stored
        if not _same_spec(obj, old) or any(obj.get(f) != old.get(f) for f in ("apiVersion", "kind")):
            return None
        if isinstance(obj, CachedObject) and isinstance(old, CachedObject):
            obj.share_texts(old)  # the parsed spec keeps the older object's text of the same spec
        if _pause_annotations(obj) != _pause_annotations(old):  # the spec's own pause (core/pause.py) is read too
            return None
        meta = obj.get("metadata") or {}
        generation = meta.get("generation")
        target = replace(
            parsed.target,
            uid=str(meta.get("uid") or ""),
            generation=generation if isinstance(generation, int) else None,
            stored=obj,
        )
        return _Parsed(version, target, None)

    def _parse(self, obj: Mapping[str, Any], version: str) -> _Parsed:
        source = describe(obj) or "PrometheusAutoscaler"
        meta = obj.get("metadata") or {}
        try:
            autoscaler = load_autoscaler(
                {key: obj[key] for key in obj if key != "status"},  # the status is not read: not decoded
                scale_to_zero=self._defaults.scale_to_zero,
                stored=True,
                document=obj.text("spec") if isinstance(obj, CachedObject) else None,
            )
        except SpecError as err:
            key = TargetKey(str(meta.get("namespace") or DEFAULT_NAMESPACE), str(meta.get("name") or ""))
            problem = SpecProblem(Origin.RESOURCE, source, str(err), key=key, obj=obj)
            return _Parsed(version, None, problem)
        generation = meta.get("generation")
        target = make_target(
            autoscaler,
            origin=Origin.RESOURCE,
            source=source,
            defaults=self._defaults,
            uid=str(meta.get("uid") or ""),
            generation=generation if isinstance(generation, int) else None,
            stored=obj,
        )
        return _Parsed(version, target, None)


def _same_spec(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether two objects have the same spec: compared as the cache keeps it (text) without decoding it."""
    if isinstance(one, CachedObject) and isinstance(other, CachedObject):
        return one.text("spec") == other.text("spec")
    return bool(one.get("spec") == other.get("spec"))


def _pause_annotations(obj: Mapping[str, Any]) -> dict[str, Any]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {key: annotations[key] for key in PAUSE_ANNOTATIONS if key in annotations}


# --- spec files ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _FileState:
    stat: tuple[int, int]  # (mtime_ns, size): a cheap check before the hash
    digest: str  # sha256 of the text last read
    good: list[Target] = field(default_factory=list)  # the targets of the last version without a problem
    broken: bool = False


class FileSource:
    """Spec files and directories of *.yaml / *.yml (not recursive), re-read when they change.

    A file changes when its (mtime, size) changes and then its content hash does. A file (or one document of
    it) with a problem is reported and the file's last good targets keep running: a file is applied whole
    or not at all. A deleted file's targets are removed. Two documents with the same namespace/name: the
    first (by path, then position) wins and the other is reported.
    """

    origin = Origin.FILE

    def __init__(
        self,
        paths: Sequence[str],
        *,
        defaults: TargetDefaults,
        on_problem: ProblemSink = _ignore,
    ) -> None:
        self._paths = list(paths)
        self._defaults = defaults
        self._on_problem = on_problem
        self._files: dict[str, _FileState] = {}
        self._missing: set[str] = set()
        self._loaded = False
        self._targets: list[Target] = []

    @property
    def loaded(self) -> bool:
        return self._loaded

    def counts(self) -> Mapping[str, int]:
        """Specs by state: valid (running); invalid: files broken (keeping their last good version, if any) and
        configured paths that do not exist."""
        broken = sum(1 for s in self._files.values() if s.broken)
        return {"valid": len(self._targets), "invalid": broken + len(self._missing)}

    def _expand(self) -> list[str]:
        files: list[str] = []
        missing: set[str] = set()
        for path in self._paths:
            found, problems = spec_paths([path])
            if problems:
                missing.add(path)
                self._report_missing(path, problems[0][1])
            files += found
        self._missing = missing
        return files

    def _report_missing(self, path: str, message: str) -> None:
        if path not in self._missing:  # once, until it comes back
            _report(SpecProblem(Origin.FILE, path, message, kind="spec_file_unreadable"), self._on_problem)

    def refresh(self) -> list[Target]:
        """Check every file for a change (stat, then hash) and return the targets of all files."""
        files = self._expand()
        states: dict[str, _FileState] = {}
        for path in files:
            states[path] = self._check(path, self._files.get(path))
        for gone in self._files.keys() - states.keys():
            log.info("spec_file_removed", path=gone, targets=len(self._files[gone].good))
        self._files = states
        targets: dict[TargetKey, Target] = {}
        for path in files:
            for target in states[path].good:
                first = targets.get(target.key)
                if first is None:
                    targets[target.key] = target
                elif first.source != target.source:
                    log.warning("spec_duplicate", key=str(target.key), kept=first.source, ignored=target.source)
        self._targets = [targets[k] for k in sorted(targets)]
        self._loaded = True
        return list(self._targets)

    def _check(self, path: str, state: _FileState | None) -> _FileState:
        try:
            st = os.stat(path)
        except OSError as err:
            return self._broken(path, state, f"cannot read: {err.strerror or err}", kind="spec_file_unreadable")
        stat = (st.st_mtime_ns, st.st_size)
        if state is not None and state.stat == stat:
            return state
        try:
            text = read_text(path)
        except SpecError as err:
            return self._broken(path, state, str(err), kind="spec_file_unreadable")
        digest = hashlib.sha256(text.encode()).hexdigest()
        if state is not None and state.digest == digest:
            state.stat = stat
            return state
        parsed = load_spec_text(text, source=path, scale_to_zero=self._defaults.scale_to_zero, stored=True)
        if not parsed.valid:
            new = self._broken(path, state, _problems(parsed), kind="spec_invalid")
            new.stat, new.digest = stat, digest
            return new
        good = [
            make_target(
                doc.autoscaler,
                origin=Origin.FILE,
                source=f"{path}: document {doc.index}",
                defaults=self._defaults,
            )
            for doc in parsed.documents
            if doc.autoscaler is not None
        ]
        log.info("spec_file_loaded", path=path, targets=len(good), replaced=state is not None)
        return _FileState(stat=stat, digest=digest, good=good)

    def _broken(self, path: str, state: _FileState | None, message: str, *, kind: str) -> _FileState:
        kept = state.good if state is not None else []
        _report(SpecProblem(Origin.FILE, path, message, kind=kind), self._on_problem, kept=len(kept))
        return _FileState(
            stat=state.stat if state else (0, 0), digest=state.digest if state else "", good=kept, broken=True
        )


def _problems(parsed: SpecFile) -> str:
    lines = [f"{p}: {m}" if p else m for p, m in parsed.problems]
    for doc in parsed.documents:
        where = f"document {doc.index}" + (f" ({doc.label})" if doc.label else "")
        lines += [f"{where}: {p}: {m}" if p else f"{where}: {m}" for p, m in doc.problems]
    return "; ".join(lines)


def _report(problem: SpecProblem, sink: ProblemSink, **extra: Any) -> None:
    log.warning(
        "spec_invalid" if problem.kind == "spec_invalid" else "spec_unreadable",
        origin=str(problem.origin),
        source=problem.source,
        problem=problem.message,
        **extra,
    )
    sink(problem)


# --- both ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Two sources name the same namespace/name: `kept` runs, `ignored` does not."""

    key: TargetKey
    kept: str
    ignored: str


def merge(groups: Iterable[Sequence[Target]]) -> tuple[list[Target], list[Duplicate]]:
    """All targets by key; on a clash the custom resource wins over a file, else the first group wins."""
    chosen: dict[TargetKey, Target] = {}
    duplicates: list[Duplicate] = []
    for group in groups:
        for target in group:
            first = chosen.get(target.key)
            if first is None:
                chosen[target.key] = target
                continue
            if target.origin == Origin.RESOURCE and first.origin != Origin.RESOURCE:
                chosen[target.key] = target
                first, target = target, first
            duplicates.append(Duplicate(target.key, kept=first.source, ignored=target.source))
    return [chosen[k] for k in sorted(chosen)], duplicates
