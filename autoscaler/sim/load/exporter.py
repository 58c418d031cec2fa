"""`LoadGenerator`: the load model, fed with pods from the API server once a second and served on `/metrics`.

    with LoadGenerator([Workload(WorkloadRef("default", "Deployment", "web"), constant(2.0))],
                       api_url=srv.url, speed=30) as gen:
        gen.url   # http://127.0.0.1:PORT  (Prometheus scrapes gen.url + "/metrics")

Each scrape advances the model to the clock's now, so the counters are exact at the scrape's instant; each
poll advances it too before the new pod list takes effect. A failed poll keeps the last pods and is logged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from autoscaler.sim.http import QuietHTTPServer
from autoscaler.sim.load.curve import Timeline
from autoscaler.sim.load.model import LoadModel, Workload, WorkloadRef
from autoscaler.sim.load.pods import ApiPods, PodSourceError

log = logging.getLogger(__name__)


class _Collector(Collector):
    def __init__(self, generator: LoadGenerator) -> None:
        self._generator = generator

    def collect(self) -> Iterator[Metric]:
        yield from self._generator.families()


class LoadGenerator:
    """Runs a `LoadModel` against an API server's pods and serves its series (see the module docstring)."""

    def __init__(
        self,
        workloads: Iterable[Workload],
        *,
        api_url: str,
        host: str = "127.0.0.1",
        port: int = 0,
        speed: float = 1.0,
        offset_seconds: float = 0.0,
        poll_interval_seconds: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self.model = LoadModel(workloads, timeline=Timeline(clock(), speed=speed, offset=offset_seconds))
        self.pods = ApiPods(api_url)
        self.poll_interval_seconds = poll_interval_seconds
        self.poll_errors = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._host, self._port = host, port
        self._httpd: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Collector(self))

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the load generator is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    def add(self, workload: Workload) -> None:
        """Put one more workload under load (its pods are read at the next poll)."""
        with self._lock:
            self.model.advance(self.clock())
            self.model.add(workload)

    def remove(self, ref: WorkloadRef) -> None:
        with self._lock:
            self.model.remove(ref)

    def poll(self) -> None:
        """Read every workload's pods once; a workload whose pods cannot be read keeps its last ones."""
        with self._lock:
            refs = [w.ref for w in self.model.workloads]
        for ref in refs:
            try:
                pods = self.pods.pods(ref)
            except PodSourceError as err:
                self.poll_errors += 1
                log.warning("pods_unavailable: %s", err)
                continue
            with self._lock:
                if ref in {w.ref for w in self.model.workloads}:
                    self.model.observe(ref, pods, now=self.clock())

    def families(self) -> list[Metric]:
        with self._lock:
            self.model.advance(self.clock())
            families = self.model.families()
        errors = CounterMetricFamily("load_model_pod_poll_errors_total", "Pod lists that failed.")
        errors.add_metric([], self.poll_errors)
        return [*families, errors]

    def exposition(self) -> bytes:
        """The `/metrics` body (Prometheus text format 0.0.4)."""
        return generate_latest(self.registry)

    def start(self) -> LoadGenerator:
        self.poll()
        self._httpd = QuietHTTPServer((self._host, self._port), _handler(self))
        for target, name in ((self._serve, "load-http"), (self._poll_forever, "load-poll")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def _serve(self) -> None:
        assert self._httpd is not None
        self._httpd.serve_forever(poll_interval=0.05)

    def _poll_forever(self) -> None:
        while not self._stop.wait(self.poll_interval_seconds):
            self.poll()

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()

    def __enter__(self) -> LoadGenerator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler(generator: LoadGenerator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                body, content_type, code = generator.exposition(), CONTENT_TYPE_LATEST, 200
            elif path in ("/healthz", "/"):
                body, content_type, code = b"ok\n", "text/plain; charset=utf-8", 200
            else:
                body, content_type, code = b"not found\n", "text/plain; charset=utf-8", 404
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # Prometheus scrapes every second; no access log

    return Handler
