"""The chart of a run: demand and ready capacity, replicas beside the oracle's, unserved demand, over time."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from autoscaler.simulate.model import Result

MISSING = "the chart needs matplotlib, which is not installed: pip install 'autoscaler[chart]'"


class ChartError(Exception):
    """The chart could not be drawn (matplotlib missing, or the file not writable)."""


def check(path: str) -> None:
    """Raise ChartError, before a run, when the chart cannot be written: matplotlib missing, a format it does not
    know by the extension, or a folder that is not there or not writable (a failure after the run would lose it)."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError as err:
        raise ChartError(MISSING) from err
    if not path:
        raise ChartError("an empty path: give the chart's file name")
    if Path(path).is_dir():
        raise ChartError(f"{path}: cannot write the chart: it is a directory")
    if Path(path).exists() and not os.access(path, os.W_OK):
        raise ChartError(f"{path}: cannot write the chart: the file is not writable")
    extension = Path(path).suffix.lstrip(".").lower()
    known = FigureCanvasBase.get_supported_filetypes()
    if extension and extension not in known:  # none: matplotlib writes a PNG and adds .png to the name
        raise ChartError(
            f"{path}: not a chart format matplotlib writes (by the extension): use one of {', '.join(sorted(known))}"
        )
    folder = Path(path).parent
    if not folder.is_dir():
        raise ChartError(f"{path}: cannot write the chart: {folder} is not a directory")
    if not os.access(folder, os.W_OK):
        raise ChartError(f"{path}: cannot write the chart: {folder} is not writable")


def draw(
    result: Result,
    path: str,
    *,
    title: str,
    actual: tuple[Sequence[float], Sequence[float]] | None = None,
) -> None:
    """Write the chart of `result` to `path` (PNG, or any format matplotlib knows by the extension).

    `actual` is (times in seconds, replicas): the replicas the workload really had, drawn beside (backtest).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ChartError(MISSING) from err
    series = result.series
    hours = [t / 3600 for t in series.times]
    figure, (top, middle, bottom) = plt.subplots(3, 1, sharex=True, figsize=(14, 9))
    top.plot(hours, series.demand, label="demand (per s)", linewidth=0.7, color="tab:blue")
    top.plot(hours, series.ready_capacity, label="ready capacity", linewidth=0.7, color="tab:green")
    top.set_ylabel("units / s")
    top.legend(loc="upper right")
    top.set_title(title)
    middle.plot(hours, series.replicas, label="replicas (simulated)", linewidth=0.8, color="tab:orange")
    middle.plot(hours, series.oracle, label="oracle", linewidth=0.6, color="tab:gray", alpha=0.7)
    if actual is not None:
        middle.plot(
            [t / 3600 for t in actual[0]], actual[1], label="replicas (actual)", linewidth=0.8, color="tab:purple"
        )
    middle.set_ylabel("pods")
    middle.legend(loc="upper right")
    bottom.plot(hours, series.unserved, label="unserved (per s)", linewidth=0.7, color="tab:red")
    bottom.set_ylabel("units / s")
    bottom.set_xlabel("hours from the start")
    bottom.legend(loc="upper right")
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=110)
    except (OSError, ValueError) as err:
        raise ChartError(f"{path}: cannot write the chart: {err}") from err
    finally:
        plt.close(figure)
