"""`autoscaler run` with each tick profiled by cProfile (the tick's own thread; the metric layer's query threads
show as the tick's wait for them), the cumulative statistics written to a file at exit.

    .venv/bin/python bench/profile_daemon.py STATS_FILE run --config FILE
    .venv/bin/python -c "import pstats; pstats.Stats('STATS_FILE').sort_stats('cumulative').print_stats(40)"

bench/throughput.py runs its daemon through this with `--profile DIR`.
"""

from __future__ import annotations

import cProfile
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoscaler import cli
from autoscaler.daemon import app


def main() -> int:
    stats, argv = sys.argv[1], sys.argv[2:]
    profile = cProfile.Profile()
    tick = app.Daemon.tick

    def profiled(self: app.Daemon) -> Any:
        profile.enable()
        try:
            return tick(self)
        finally:
            profile.disable()
            profile.dump_stats(stats)  # after every tick: the process may be stopped at any time

    app.Daemon.tick = profiled  # type: ignore[method-assign]
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
