"""What the demo shows and keeps: one sample per sync period, as a table line, a CSV row and a chart point."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autoscaler.demo.scenario import WEB_CPU_PER_REQUEST, WORKER_CAPACITY

WEB_TARGET_UTILIZATION = 0.6  # config/demo/web.yaml's averageUtilization
WEB_CPU_REQUEST = 0.5  # cores, config/demo/web.yaml
WEB_AT_TARGET = WEB_TARGET_UTILIZATION * WEB_CPU_REQUEST / WEB_CPU_PER_REQUEST  # requests/s per pod at the target


@dataclass(frozen=True, slots=True)
class MetricView:
    """One metric of one target as the daemon exports it (`autoscaler_target_metric_*`)."""

    name: str
    target_type: str
    value: float | None
    target: float | None

    def text(self) -> str:
        unit = "%" if self.target_type == "Utilization" else ""
        value = "?" if self.value is None else f"{self.value:.0f}{unit}"
        target = "?" if self.target is None else f"{self.target:g}{unit}"
        return f"{short_name(self.name)} {value}/{target}"


@dataclass(frozen=True, slots=True)
class WorkloadView:
    """A workload at one instant: the Deployment's replicas and ready pods, the daemon's view of it."""

    replicas: int
    ready: int
    desired: int | None  # the daemon's last decision (None before its first)
    metrics: tuple[MetricView, ...]

    def pods_text(self) -> str:
        moving = self.desired is not None and self.desired != self.replicas
        count = f"{self.replicas}->{self.desired}" if moving else str(self.replicas)
        return f"{count} ({self.ready} ready)"

    def metrics_text(self) -> str:
        return ", ".join(m.text() for m in self.metrics) or "-"


@dataclass(frozen=True, slots=True)
class Sample:
    """Everything one table line, CSV row and chart point shows."""

    seconds: float
    web_load: float  # requests/s offered
    web: WorkloadView
    jobs: float  # jobs/s arriving
    queue: float
    worker: WorkloadView


WEB_HEADER = f"{'t':>5}  {'load/s':>6}  {'capacity/s':>10}  {'web metric/target':<20} {'web pods':<14}"
WORKER_HEADER = f"  {'jobs/s':>6}  {'queue':>5}  {'worker metric/target':<20} {'worker pods'}"


def header() -> str:
    return WEB_HEADER + WORKER_HEADER


def short_name(name: str) -> str:
    """The daemon's metric name, short: "cpu resource utilization (...)" -> "cpu",
    "external metric queue_depth({queue=jobs})" -> "queue_depth"."""
    words = name.split(" ")
    if len(words) >= 3 and words[1] == "metric":
        return words[2].split("(", 1)[0]
    return words[0] or "?"


def capacity(ready: int) -> float:
    """Requests/s the ready web pods serve at the target utilization."""
    return ready * WEB_AT_TARGET


def table_line(sample: Sample) -> str:
    web = sample.web
    left = (
        f"{sample.seconds:>4.0f}s  {sample.web_load:>6.0f}  {capacity(web.ready):>10.0f}  "
        f"{web.metrics_text():<20} {web.pods_text():<14}"
    )
    worker = sample.worker
    return (
        f"{left}  {sample.jobs:>6.0f}  {sample.queue:>5.0f}  {worker.metrics_text():<20} {worker.pods_text():<14}"
    ).rstrip()


CSV_COLUMNS = (
    "seconds",
    "web_load",
    "web_capacity",
    "web_replicas",
    "web_ready",
    "web_desired",
    "web_metric",
    "web_target",
    "jobs",
    "queue",
    "worker_replicas",
    "worker_ready",
    "worker_desired",
    "worker_metric",
    "worker_target",
)


def _cell(value: float | int | None) -> str:
    if value is None:
        return ""
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def csv_row(sample: Sample) -> list[str]:
    def view(w: WorkloadView) -> list[str]:
        first = w.metrics[0] if w.metrics else None
        return [
            _cell(w.replicas),
            _cell(w.ready),
            _cell(w.desired),
            _cell(None if first is None else first.value),
            _cell(None if first is None else first.target),
        ]

    return [
        _cell(round(sample.seconds, 3)),
        _cell(sample.web_load),
        _cell(capacity(sample.web.ready)),
        *view(sample.web),
        _cell(sample.jobs),
        _cell(sample.queue),
        *view(sample.worker),
    ]


def write_csv(path: Path, samples: Sequence[Sample]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for sample in samples:
            writer.writerow(csv_row(sample))


def write_chart(
    path: Path,
    samples: Sequence[Sample],
    *,
    load: Sequence[tuple[float, float, float]],
    title: str,
) -> None:
    """A PNG: per workload, the load (`load`: (seconds, requests/s, jobs/s), finer than the samples) and the
    capacity (left axis) and the replicas (right axis) over time."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    seconds = [s.seconds for s in samples]
    figure, (web_axis, worker_axis) = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    figure.suptitle(title)

    web_axis.set_title("web: CPU utilization target 60 %, min 2, max 16")
    web_axis.plot([t for t, _, _ in load], [v for _, v, _ in load], color="tab:blue", label="load (requests/s)")
    web_axis.plot(
        seconds,
        [capacity(s.web.ready) for s in samples],
        color="tab:green",
        linestyle="--",
        label=f"capacity at the target (ready pods x {WEB_AT_TARGET:g}/s)",
    )
    web_axis.set_ylabel("requests/s")
    replicas_axis = web_axis.twinx()
    replicas_axis.step(seconds, [s.web.replicas for s in samples], where="post", color="tab:red", label="replicas")
    replicas_axis.set_ylabel("replicas")
    replicas_axis.set_ylim(bottom=0)
    _legend(web_axis, replicas_axis)

    worker_axis.set_xlabel("seconds since the demo started")
    worker_axis.set_title("worker: queue depth target 20 per worker, to zero after 15 s idle")
    worker_axis.plot([t for t, _, _ in load], [j for _, _, j in load], color="tab:blue", label="arrivals (jobs/s)")
    worker_axis.plot(seconds, [s.queue for s in samples], color="tab:purple", label="queue depth (jobs)")
    worker_axis.plot(
        seconds,
        [s.worker.ready * WORKER_CAPACITY for s in samples],
        color="tab:green",
        linestyle="--",
        label=f"capacity (ready workers x {WORKER_CAPACITY:g} jobs/s)",
    )
    worker_axis.set_ylabel("jobs/s, jobs")
    pods_axis = worker_axis.twinx()
    pods_axis.step(seconds, [s.worker.replicas for s in samples], where="post", color="tab:red", label="replicas")
    pods_axis.set_ylabel("replicas")
    pods_axis.set_ylim(bottom=0, top=max(2, *(s.worker.replicas for s in samples)) + 1)
    _legend(worker_axis, pods_axis)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _legend(left: object, right: object) -> None:
    from matplotlib.axes import Axes

    assert isinstance(left, Axes) and isinstance(right, Axes)
    handles, labels = left.get_legend_handles_labels()
    more, more_labels = right.get_legend_handles_labels()
    left.legend(handles + more, labels + more_labels, loc="upper left", fontsize="small")
