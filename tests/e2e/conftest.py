"""One emulator, one load model and one scraping Prometheus for the whole end-to-end session.

Each test deploys its own Deployments (distinct names), writes its own spec files and starts its own daemon
processes; those read the shared emulator and Prometheus. A missing or broken Prometheus FAILS the tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.sim.apiserver import EmulatedApiServer
from autoscaler.sim.load import LoadGenerator, Series, Workload, WorkloadRef
from tests.e2e.stack import DaemonProcess, ScrapingPrometheus
from tests.metrics import server
from tests.sim.conftest import NS, workload

RATE_WINDOW_SECONDS = 4  # the rps template's rate window: four scrapes at 1 s
TARGET_RPS = 10  # per pod


class Demand:
    """A load curve a test changes while the model runs."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self, t: float) -> float:
        return self.value


class Stack:
    """The shared processes, and what a test needs to set up a target and a daemon on them."""

    def __init__(
        self, emulator: EmulatedApiServer, generator: LoadGenerator, prometheus: ScrapingPrometheus, tmp: Path
    ) -> None:
        self.emulator = emulator
        self.generator = generator
        self.prometheus = prometheus
        self.tmp = tmp

    def deploy(self, name: str, *, replicas: int, load: float) -> Demand:
        """A Deployment with `replicas` pods and a serve-mode load of `load` requests/s spread over its ready pods."""
        self.emulator.create(workload("Deployment", name, replicas=replicas))
        demand = Demand(load)
        self.generator.add(Workload(WorkloadRef(NS, "Deployment", name), demand, series=frozenset({Series.RPS})))
        return demand

    def replicas(self, name: str) -> int:
        return int(self.emulator.get("apps/v1", "Deployment", name, namespace=NS)["spec"]["replicas"])

    def daemon(
        self,
        name: str,
        specs: Path,
        *,
        token: str | None = None,
        **settings: Any,
    ) -> tuple[DaemonProcess, str]:
        """A daemon process's settings (file specs from `specs`, 1 s sync, its own port) and its HTTP address."""
        address = f"127.0.0.1:{server.free_port()}"
        config: dict[str, Any] = {
            "syncPeriodSeconds": 1,
            "tickSeconds": 0.5,
            "specs": {"customResources": False, "files": [str(specs)]},
            "leaderElection": {"enabled": False},
            "http": {"listenAddress": address},
            "log": {"format": "json", "level": "info"},
            "shutdownGraceSeconds": 3,
            "metrics": {
                "servers": {"main": {"url": self.prometheus.url, "timeoutSeconds": 1, "retry": {"maxAttempts": 1}}},
                "templates": {
                    "rps": {
                        "query": "sum by (${by}) (rate(http_requests_total{${matchers}}[${window}]))",
                        "freshness": "http_requests_total{${matchers}}",
                        "windowSeconds": RATE_WINDOW_SECONDS,
                    }
                },
            },
        }
        workdir = self.tmp / f"daemon-{name}"  # never the specs directory
        workdir.mkdir(exist_ok=True)
        if token is None:
            config["kubernetes"] = {"server": self.emulator.url}
        else:  # a kubeconfig with a bearer token of its own: the audit log tells this daemon's requests apart
            kubeconfig = workdir / "kubeconfig"
            kubeconfig.write_text(
                yaml.safe_dump(
                    {
                        "apiVersion": "v1",
                        "kind": "Config",
                        "current-context": "e2e",
                        "clusters": [{"name": "emulator", "cluster": {"server": self.emulator.url}}],
                        "users": [{"name": name, "user": {"token": token}}],
                        "contexts": [{"name": "e2e", "context": {"cluster": "emulator", "user": name}}],
                    }
                )
            )
            config["kubernetes"] = {"kubeconfig": str(kubeconfig)}
        config = merge(config, settings)
        return DaemonProcess(config, workdir, name=name), address


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` over `base`, maps merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def spec_document(
    name: str,
    *,
    window: int,
    min_replicas: int = 1,
    max_replicas: int = 10,
    **extra: Any,
) -> dict[str, Any]:
    """A file spec scaling Deployment `name` on requests/s per pod (target 10), scale-down window `window` s."""
    return {
        "apiVersion": "autoscaler.dev/v1alpha1",
        "kind": "PrometheusAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": min_replicas,
            "maxReplicas": max_replicas,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "http_requests_per_second"},
                        "target": {"type": "AverageValue", "averageValue": str(TARGET_RPS)},
                    },
                    "prometheus": {"template": "rps"},
                }
            ],
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": window,
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}],
                },
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}],
                },
            },
            **extra,
        },
    }


def write_spec(directory: Path, name: str, document: dict[str, Any] | str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document, sort_keys=False))
    return path


def utc_now() -> datetime:
    return datetime.now(UTC)


def log_time(line: dict[str, Any]) -> datetime:
    """A daemon log line's `timestamp` (UTC, ISO 8601)."""
    return datetime.fromisoformat(str(line["timestamp"]).replace("Z", "+00:00"))


def metric_samples(body: bytes, name: str) -> list[tuple[dict[str, str], float]]:
    """The samples of one metric in a Prometheus text exposition: (labels, value)."""
    from prometheus_client.parser import text_string_to_metric_families

    out = []
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name == name:
                out.append((dict(sample.labels), float(sample.value)))
    return out


@pytest.fixture(scope="session")
def emulator() -> Iterator[EmulatedApiServer]:
    with EmulatedApiServer(start_delay_seconds=0.2, ready_delay_seconds=0.2) as srv:
        yield srv


@pytest.fixture(scope="session")
def generator(emulator: EmulatedApiServer) -> Iterator[LoadGenerator]:
    with LoadGenerator([], api_url=emulator.url, port=server.free_port(), poll_interval_seconds=0.2) as gen:
        yield gen


@pytest.fixture(scope="session")
def prometheus(generator: LoadGenerator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScrapingPrometheus]:
    """A Prometheus scraping the load model every second; its absence or failure FAILS the tests."""
    binary = server.find_binary()
    if binary is None:
        pytest.fail("no prometheus binary: run scripts/install-prometheus.sh (make deps)", pytrace=False)
    prom = ScrapingPrometheus(binary, tmp_path_factory.mktemp("e2e-prometheus"), scrape_interval="1s")
    prom.scrape(f"127.0.0.1:{generator.port}")
    try:
        prom.start()
    except (RuntimeError, OSError) as err:
        pytest.fail(f"prometheus failed to start: {err}", pytrace=False)
    yield prom
    prom.stop()


@pytest.fixture
def stack(
    emulator: EmulatedApiServer, generator: LoadGenerator, prometheus: ScrapingPrometheus, tmp_path: Path
) -> Stack:
    if prometheus.process is None or prometheus.process.poll() is not None:
        prometheus.start()  # a test that stopped it and failed before starting it again
    return Stack(emulator, generator, prometheus, tmp_path)


def dump(obj: Any) -> str:
    return json.dumps(obj, default=str)[:4000]
