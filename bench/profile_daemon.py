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
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoscaler import cli
from autoscaler.daemon import app


def memory_report(path: Path, ticks: int) -> None:
    """Live memory by file and line, and the collector's tracked objects by type, after tick `ticks`."""
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    current, peak = tracemalloc.get_traced_memory()
    lines = [f"after tick {ticks}: traced {current / 2**20:.1f} MiB (peak {peak / 2**20:.1f} MiB)", "", "by file:"]
    lines += [str(stat) for stat in snapshot.statistics("filename")[:25]]
    lines += ["", "by line:"]
    lines += [str(stat) for stat in snapshot.statistics("lineno")[:40]]
    kinds = Counter(type(obj).__name__ for obj in gc.get_objects())
    lines += ["", f"objects tracked by the collector: {sum(kinds.values()):,}"]
    lines += [f"{count:>12,}  {name}" for name, count in kinds.most_common(25)]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    stats, argv = sys.argv[1], sys.argv[2:]
    Path(stats).parent.mkdir(parents=True, exist_ok=True)  # `throughput.py --profile DIR` with a new DIR
    memory = os.environ.get("PROFILE_MEMORY") == "1"
    if memory:
        tracemalloc.start(1)
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
                memory_report(Path(f"{stats}.mem.txt"), ticks)

    app.Daemon.tick = profiled  # type: ignore[method-assign]
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
