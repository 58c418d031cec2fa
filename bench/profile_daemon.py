"""`autoscaler run` with each tick profiled by cProfile (the tick's own thread; the metric layer's query threads
show as the tick's wait for them), the cumulative statistics written to a file at exit.

    .venv/bin/python bench/profile_daemon.py STATS_FILE run --config FILE
    .venv/bin/python -c "import pstats; pstats.Stats('STATS_FILE').sort_stats('cumulative').print_stats(40)"

With `PROFILE_MEMORY=1` in the environment, the heap is traced too (tracemalloc, which slows every
allocation): after each tick, STATS_FILE.mem.txt gets the live memory by file and by line, and the objects
the cyclic garbage collector tracks, by type (what each of its full collections walks).

bench/throughput.py runs its daemon through this with `--profile DIR` (and `--memory`).
"""

from __future__ import annotations

import cProfile
import gc
import os
import sys
import tracemalloc
import types
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoscaler import cli
from autoscaler.daemon import app


def project_lines(snapshot: tracemalloc.Snapshot, top: int = 40) -> list[str]:
    """Live memory grouped by the innermost frame in the project's own package (json's decoder, pydantic, ...
    attributed to the project line that called them)."""
    package = str(Path(__file__).resolve().parents[1] / "autoscaler")
    sizes: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for trace in snapshot.traces:
        where = next(
            (
                f"{frame.filename}:{frame.lineno}"
                for frame in reversed(trace.traceback)
                if frame.filename.startswith(package)
            ),
            "(outside the project)",
        )
        sizes[where] += trace.size
        counts[where] += 1
    return [f"{size / 1024:>10.0f} KiB {counts[where]:>9,}  {where}" for where, size in sizes.most_common(top)]


def deep_size(root: Any, seen: set[int]) -> tuple[int, int]:
    """Bytes and objects reachable from `root` not already in `seen` (modules, types and functions not followed)."""
    size = count = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType | types.FunctionType | types.BuiltinFunctionType):
            continue
        seen.add(id(obj))
        size += sys.getsizeof(obj)
        count += 1
        stack.extend(gc.get_referents(obj))
    return size, count


def components(daemon: app.Daemon) -> list[str]:
    """The daemon's memory by part, each part counting only what no part before it reached."""
    seen: set[int] = {id(daemon)}
    reconciler = daemon.reconciler
    parts: list[tuple[str, Any]] = [(f"cache {type(c).__name__}", c) for c in daemon.caches]
    parts += [(f"reconciler.{name}", value) for name, value in sorted(vars(reconciler).items())]
    parts += [(f"source {type(s).__name__}", s) for s in daemon.sources]
    parts += [("recorder", daemon.recorder), ("observer", daemon.observer), ("daemon", vars(daemon))]
    lines = []
    for name, value in parts:
        size, count = deep_size(value, seen)
        if size >= 64 * 1024:
            lines.append(f"{size / 2**20:>9.1f} MiB {count:>10,}  {name}")
    return lines


def memory_report(path: Path, ticks: int, daemon: app.Daemon) -> None:
    """Live memory by file and line, and the collector's tracked objects by type, after tick `ticks`."""
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    current, peak = tracemalloc.get_traced_memory()
    lines = [f"after tick {ticks}: traced {current / 2**20:.1f} MiB (peak {peak / 2**20:.1f} MiB)", "", "by file:"]
    lines += [str(stat) for stat in snapshot.statistics("filename")[:25]]
    lines += ["", "by line:"]
    lines += [str(stat) for stat in snapshot.statistics("lineno")[:40]]
    lines += ["", "by the project's innermost line on the allocation's stack (where a library allocated for it):"]
    lines += project_lines(snapshot)
    lines += ["", "by part of the daemon (deep sizes, each part without what the parts above it reached):"]
    lines += components(daemon)
    kinds = Counter(type(obj).__name__ for obj in gc.get_objects())
    lines += ["", f"objects tracked by the collector: {sum(kinds.values()):,}"]
    lines += [f"{count:>12,}  {name}" for name, count in kinds.most_common(25)]
    path.write_text("\n".join(lines) + "\n")


FRAMES = 25  # deep enough to reach the project's frame under json and pydantic


def main() -> int:
    stats, argv = sys.argv[1], sys.argv[2:]
    Path(stats).parent.mkdir(parents=True, exist_ok=True)  # `throughput.py --profile DIR` with a new DIR
    memory = os.environ.get("PROFILE_MEMORY") == "1"
    if memory:
        tracemalloc.start(FRAMES)
    profile = cProfile.Profile()
    tick = app.Daemon.tick
    ticks = 0

    def profiled(self: app.Daemon) -> Any:
        nonlocal ticks
        profile.enable()
        try:
            return tick(self)
        finally:
            profile.disable()
            profile.dump_stats(stats)  # after every tick: the process may be stopped at any time
            ticks += 1
            if memory:
                memory_report(Path(f"{stats}.mem.txt"), ticks, self)

    app.Daemon.tick = profiled  # type: ignore[method-assign]
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
