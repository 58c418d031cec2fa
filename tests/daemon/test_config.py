"""DaemonConfig and load_config: every default, every setting read from the file, every bad value named by its
field path, environment overrides, unsafe YAML, and the helpers that feed the layers below."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from autoscaler.core import types as core
from autoscaler.daemon.config import (
    ConfigError,
    DaemonConfig,
    client_settings,
    core_settings,
    leader_election_config,
    load_config,
    spec_paths,
    split_address,
    state_namespace,
)
from autoscaler.kube.client import ClientSettings
from autoscaler.kube.leader import LeaderElectionConfig

REPO = Path(__file__).resolve().parents[2]


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> DaemonConfig:
    path = tmp_path / "daemon.yaml"
    path.write_text(text)
    return load_config(str(path), env=env or {})


def _problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text, env)
    assert caught.value.source.endswith("daemon.yaml")
    return caught.value.problems


def _get(config: DaemonConfig, path: str) -> Any:
    """A setting by its camelCase path, read from the dumped settings."""
    value: Any = config.model_dump(by_alias=True)
    for part in path.split("."):
        value = value[part]
    return value


DEFAULTS = [
    ("syncPeriodSeconds", 15),
    ("tickSeconds", 1.0),
    ("dryRun", False),
    ("namespaces", []),
    ("labelSelector", ""),
    ("specs.customResources", True),
    ("specs.files", []),
    ("concurrency.writes", 16),
    ("leaderElection.enabled", True),
    ("leaderElection.leaseName", "autoscaler"),
    ("leaderElection.namespace", ""),
    ("leaderElection.identity", ""),
    ("leaderElection.leaseDurationSeconds", 15.0),
    ("leaderElection.renewDeadlineSeconds", 10.0),
    ("leaderElection.retryPeriodSeconds", 2.0),
    ("state.namespace", ""),
    ("http.listenAddress", "0.0.0.0:8080"),
    ("log.format", "auto"),
    ("log.level", "info"),
    ("flightRecorder.size", 10),
    ("flightRecorder.directory", ""),
    ("shutdownGraceSeconds", 10.0),
    ("kubernetes.server", ""),
    ("kubernetes.kubeconfig", ""),
    ("kubernetes.context", ""),
    ("metrics.servers", {}),
    ("metrics.maxConcurrentQueries", 8),
    ("controller.tolerance", 0.1),
    ("controller.downscaleStabilizationWindowSeconds", 300.0),
]


@pytest.mark.parametrize("text", ["", "{}\n", "# only a comment\n", "---\n"], ids=["empty", "{}", "comment", "---"])
@pytest.mark.parametrize(("path", "default"), DEFAULTS, ids=[p for p, _ in DEFAULTS])
def test_an_empty_file_is_all_defaults(tmp_path: Path, text: str, path: str, default: Any) -> None:
    assert _get(_load(tmp_path, text), path) == default


def test_the_defaults_match_the_design_and_kube_controller_manager() -> None:
    config = DaemonConfig()
    assert core_settings(config) == core.Settings()
    defaults = LeaderElectionConfig(namespace="n", name="l", identity="i")
    election = config.leader_election
    assert (election.lease_duration_seconds, election.renew_deadline_seconds, election.retry_period_seconds) == (
        defaults.lease_duration_seconds,
        defaults.renew_deadline_seconds,
        defaults.retry_period_seconds,
    )


SETTINGS = [
    pytest.param("syncPeriodSeconds: 30", "syncPeriodSeconds", 30, id="syncPeriodSeconds"),
    pytest.param("tickSeconds: 0.5", "tickSeconds", 0.5, id="tickSeconds"),
    pytest.param("dryRun: true", "dryRun", True, id="dryRun"),
    pytest.param("namespaces: [shop, payments]", "namespaces", ["shop", "payments"], id="namespaces"),
    pytest.param("labelSelector: 'team=shop,tier in (web)'", "labelSelector", "team=shop,tier in (web)", id="selector"),
    pytest.param("specs: {customResources: false, files: [/s]}", "specs.files", ["/s"], id="specs.files"),
    pytest.param("concurrency: {writes: 4}", "concurrency.writes", 4, id="concurrency.writes"),
    pytest.param("leaderElection: {enabled: false}", "leaderElection.enabled", False, id="leaderElection.enabled"),
    pytest.param("leaderElection: {leaseName: a.b}", "leaderElection.leaseName", "a.b", id="leaseName"),
    pytest.param("leaderElection: {namespace: ops}", "leaderElection.namespace", "ops", id="lease namespace"),
    pytest.param("leaderElection: {identity: pod-1}", "leaderElection.identity", "pod-1", id="identity"),
    pytest.param(
        "leaderElection: {leaseDurationSeconds: 60, renewDeadlineSeconds: 40, retryPeriodSeconds: 5}",
        "leaderElection.renewDeadlineSeconds",
        40.0,
        id="lease durations",
    ),
    pytest.param("state: {namespace: st}", "state.namespace", "st", id="state.namespace"),
    pytest.param("http: {listenAddress: '[::1]:0'}", "http.listenAddress", "[::1]:0", id="listenAddress IPv6"),
    pytest.param("http: {listenAddress: 'localhost:9090'}", "http.listenAddress", "localhost:9090", id="host name"),
    pytest.param("log: {format: console, level: debug}", "log.format", "console", id="log.format"),
    pytest.param("log: {level: error}", "log.level", "error", id="log.level"),
    pytest.param("flightRecorder: {size: 0}", "flightRecorder.size", 0, id="flightRecorder.size"),
    pytest.param("flightRecorder: {directory: /snap}", "flightRecorder.directory", "/snap", id="flightRecorder.dir"),
    pytest.param("shutdownGraceSeconds: 2.5", "shutdownGraceSeconds", 2.5, id="shutdownGraceSeconds"),
    pytest.param("kubernetes: {server: 'http://127.0.0.1:8001'}", "kubernetes.server", "http://127.0.0.1:8001",
                 id="kubernetes.server"),
    pytest.param("kubernetes: {kubeconfig: /k, context: c}", "kubernetes.context", "c", id="kubernetes.context"),
    pytest.param("metrics: {servers: {main: {url: 'http://p:9090/'}}}", "metrics.servers.main.url", "http://p:9090",
                 id="metrics.servers"),
    pytest.param("controller: {tolerance: 0.05}", "controller.tolerance", 0.05, id="controller.tolerance"),
    pytest.param("controller: {featureGates: {HPAScaleToZero: true}}", "controller.featureGates",
                 {"HPAScaleToZero": True}, id="controller.featureGates"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "path", "value"), SETTINGS)
def test_each_setting_is_read(tmp_path: Path, text: str, path: str, value: Any) -> None:
    assert _get(_load(tmp_path, text + "\n"), path) == value


BAD = [
    pytest.param("nope: 1", "nope", "unknown field", id="unknown top-level field"),
    pytest.param("leaderElection: {leaseNmae: x}", "leaderElection.leaseNmae", "unknown field", id="misspelt"),
    pytest.param("syncPeriodSeconds: '15'", "syncPeriodSeconds", "valid integer", id="a string for a number"),
    pytest.param("syncPeriodSeconds: 0", "syncPeriodSeconds", "greater than or equal to 1", id="sync 0"),
    pytest.param("syncPeriodSeconds: 3601", "syncPeriodSeconds", "less than or equal to 3600", id="sync too long"),
    pytest.param("tickSeconds: 0", "tickSeconds", "greater than 0", id="tick 0"),
    pytest.param("tickSeconds: 20", "tickSeconds", "must not be greater than syncPeriodSeconds (15), not 20",
                 id="tick > sync"),
    pytest.param("tickSeconds: .nan", "tickSeconds", "finite", id="tick NaN"),
    pytest.param("dryRun: yes please", "dryRun", "boolean", id="dryRun a string"),
    pytest.param("dryRun: 1", "dryRun", "boolean", id="dryRun a number"),
    pytest.param("namespaces: shop", "namespaces", "array", id="namespaces a string"),
    pytest.param("namespaces: [Shop]", "namespaces", "not a namespace name", id="a bad namespace"),
    pytest.param("namespaces: ['']", "namespaces", "must not be empty", id="an empty namespace"),
    pytest.param("namespaces: [a, a]", "namespaces", "'a' is listed twice", id="a namespace twice"),
    pytest.param("labelSelector: 'a in ('", "labelSelector", "not a label selector", id="a bad selector"),
    pytest.param("specs: {customResources: false}", "specs", "no spec source", id="no spec source"),
    pytest.param("specs: {files: ['']}", "specs.files", "must not be empty", id="an empty spec path"),
    pytest.param("specs: {files: x.yaml}", "specs.files", "array", id="files a string"),
    pytest.param("concurrency: {writes: 0}", "concurrency.writes", "greater than or equal to 1", id="writes 0"),
    pytest.param("leaderElection: {leaseName: Bad_Name}", "leaderElection.leaseName", "DNS-1123", id="lease name"),
    pytest.param("leaderElection: {namespace: a.b}", "leaderElection.namespace", "not a namespace", id="lease ns"),
    pytest.param("leaderElection: {leaseDurationSeconds: 10}", "leaderElection.leaseDurationSeconds",
                 "must be greater than renewDeadlineSeconds", id="lease not longer than the deadline"),
    pytest.param("leaderElection: {renewDeadlineSeconds: 2.4}", "leaderElection.renewDeadlineSeconds",
                 "must be greater than 1.2 x retryPeriodSeconds", id="deadline within the jitter"),
    pytest.param("leaderElection: {retryPeriodSeconds: 0}", "leaderElection.retryPeriodSeconds", "greater than 0",
                 id="retry 0"),
    pytest.param("state: {namespace: '-x'}", "state.namespace", "not a namespace", id="state namespace"),
    pytest.param("http: {listenAddress: '8080'}", "http.listenAddress", "not host:port", id="no host"),
    pytest.param("http: {listenAddress: ':8080'}", "http.listenAddress", "not host:port", id="an empty host"),
    pytest.param("http: {listenAddress: 'a:70000'}", "http.listenAddress", "0 to 65535", id="port too big"),
    pytest.param("http: {listenAddress: 'a:http'}", "http.listenAddress", "0 to 65535", id="a port name"),
    pytest.param("http: {listenAddress: '::1:80'}", "http.listenAddress", "IPv6 goes in brackets", id="bare IPv6"),
    pytest.param("http: {listenAddress: '[zz]:80'}", "http.listenAddress", "not an IPv6 address", id="bad IPv6"),
    pytest.param("log: {format: text}", "log.format", "'auto', 'json' or 'console'", id="log format"),
    pytest.param("log: {level: verbose}", "log.level", "'debug', 'info', 'warning' or 'error'", id="log level"),
    pytest.param("flightRecorder: {size: -1}", "flightRecorder.size", "greater than or equal to 0", id="size -1"),
    pytest.param("shutdownGraceSeconds: 0", "shutdownGraceSeconds", "greater than 0", id="grace 0"),
    pytest.param("kubernetes: {server: '127.0.0.1:8001'}", "kubernetes.server", "not an http:// or https:// URL",
                 id="a server without a scheme"),
    pytest.param("metrics: {servers: {main: {url: 'ftp://p'}}}", "metrics.servers.main.url", "http:// or https://",
                 id="a metrics server URL"),
    pytest.param("metrics: {defaultServer: x}", "metrics.defaultServer", "no server named 'x'", id="defaultServer"),
    pytest.param("metrics: {passDeadlineSeconds: 15}", "metrics.passDeadlineSeconds",
                 "less than syncPeriodSeconds (15)", id="a pass deadline as long as the period"),
    pytest.param("controller: {tolerance: -1}", "controller.tolerance", "greater than or equal to 0", id="tolerance"),
    pytest.param("controller: {featureGates: {Nope: true}}", "controller.featureGates", "unknown feature gate 'Nope'",
                 id="an unknown gate"),
    pytest.param("controller: {configurableTolerance: true}", "controller.configurableTolerance",
                 "has moved: set featureGates.HPAConfigurableTolerance beside it instead", id="a moved setting"),
    pytest.param("http: 8080", "http", "must be an object", id="a section that is not a mapping"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "path", "words"), BAD)
def test_a_bad_value_names_its_field(tmp_path: Path, text: str, path: str, words: str) -> None:
    problems = _problems(tmp_path, text + "\n")
    assert [p for p, _ in problems] == [path], problems
    assert words in problems[0][1]


def test_every_problem_is_listed_at_once_in_field_order(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "log: {level: loud}",
            "syncPeriodSeconds: 0",
            "leaderElection: {leaseDurationSeconds: 5}",
            "metrics: {servers: {main: {url: nope}}}",
            "http: {listenAddress: x}",
            "extra: 1",
        ]
    )
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    paths = [p for p, _ in caught.value.problems]
    assert paths == [
        "metrics.servers.main.url",
        "syncPeriodSeconds",
        "leaderElection.leaseDurationSeconds",
        "http.listenAddress",
        "log.level",
        "extra",
    ]
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'daemon.yaml'}: 6 problems:")
    assert "leaderElection.leaseDurationSeconds: must be greater than renewDeadlineSeconds" in message
    assert "Traceback" not in message


# Seven levels of ten aliases each: 10**7 nodes from a few hundred bytes.
LAUGHS = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n".encode() for p, c in zip("abcdef", "bcdefg", strict=True)
)
UNSAFE = [
    pytest.param(b"dryRun: true\ndryRun: false\n", "found duplicate key 'dryRun' at line 2 column 1", id="a key twice"),
    pytest.param(b"a: &a [*a]\n", "contains an alias to itself", id="a recursive alias"),
    pytest.param(LAUGHS, "expand it by more than 1,000,000 nodes", id="a billion laughs"),
    pytest.param(b"dryRun: [\n", "not valid YAML", id="broken YAML"),
    pytest.param(b"dryRun: true\n---\ndryRun: false\n", "holds more than one YAML document", id="two documents"),
    pytest.param(b"- dryRun\n", "must be a YAML mapping", id="a list"),
    pytest.param(b"true\n", "must be a YAML mapping", id="a scalar"),
    pytest.param(b"labelSelector: caf\xe9\n", "not valid UTF-8: byte 0xe9", id="invalid UTF-8"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "words"), UNSAFE)
def test_unsafe_or_broken_yaml_is_refused(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "daemon.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_config(str(path), env={})
    assert words in str(caught.value)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read: No such file or directory"):
        load_config(str(tmp_path / "absent.yaml"), env={})


ENV_GOOD = [
    pytest.param("AUTOSCALER_DRY_RUN", "true", "dryRun", True, id="a boolean"),
    pytest.param("AUTOSCALER_SYNC_PERIOD_SECONDS", "30", "syncPeriodSeconds", 30, id="an integer"),
    pytest.param("AUTOSCALER_TICK_SECONDS", "0.5", "tickSeconds", 0.5, id="a float"),
    pytest.param("AUTOSCALER_NAMESPACES", "[shop, payments]", "namespaces", ["shop", "payments"], id="a list"),
    pytest.param("AUTOSCALER_LABEL_SELECTOR", "team=shop", "labelSelector", "team=shop", id="text as it is"),
    pytest.param("AUTOSCALER_LEADER_ELECTION__ENABLED", "false", "leaderElection.enabled", False, id="nested"),
    pytest.param("AUTOSCALER_LEADER_ELECTION__IDENTITY", "123", "leaderElection.identity", "123",
                 id="digits for a text setting stay text"),
    pytest.param("AUTOSCALER_LEADER_ELECTION__NAMESPACE", "", "leaderElection.namespace", "", id="an empty text"),
    pytest.param("AUTOSCALER_HTTP__LISTEN_ADDRESS", "127.0.0.1:9090", "http.listenAddress", "127.0.0.1:9090",
                 id="listenAddress"),
    pytest.param("AUTOSCALER_LOG__FORMAT", "json", "log.format", "json", id="log.format"),
    pytest.param("AUTOSCALER_METRICS__SERVERS__PROM_MAIN__URL", "http://other:9090", "metrics.servers.prom-main.url",
                 "http://other:9090", id="an existing map entry, '-' as '_'"),
    pytest.param("AUTOSCALER_METRICS__SERVERS__EXTRA__URL", "http://extra:9090", "metrics.servers.extra.url",
                 "http://extra:9090", id="a new map entry"),
    pytest.param("AUTOSCALER_METRICS__MAX_CONCURRENT_QUERIES", "4", "metrics.maxConcurrentQueries", 4,
                 id="metrics section"),
    pytest.param("AUTOSCALER_CONTROLLER__TOLERANCE", "0.2", "controller.tolerance", 0.2, id="controller section"),
    pytest.param("AUTOSCALER_CONTROLLER__FEATURE_GATES__HPA_SCALE_TO_ZERO", "true",
                 "controller.featureGates", {"HPAScaleToZero": True}, id="a known feature gate"),
]  # fmt: skip
FILE = "metrics:\n  servers:\n    prom-main: {url: 'http://p:9090'}\n"


@pytest.mark.parametrize(("name", "value", "path", "expected"), ENV_GOOD)
def test_an_environment_variable_overrides_the_file(
    tmp_path: Path, name: str, value: str, path: str, expected: Any
) -> None:
    config = _load(tmp_path, FILE, {name: value, "HOME": "/nowhere", "AUTOSCALER": "not a prefix match"})
    assert _get(config, path) == expected


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    config = _load(tmp_path, "dryRun: false\nleaderElection: {enabled: true}\n", {"AUTOSCALER_DRY_RUN": "true"})
    assert config.dry_run is True and config.leader_election.enabled is True


ENV_BAD = [
    pytest.param({"AUTOSCALER_DRYRUN": "true"}, "", "AUTOSCALER_DRYRUN: not a setting: no field 'DRYRUN'",
                 id="an unknown variable"),
    pytest.param({"AUTOSCALER_LEADER_ELECTION__LEASE": "x"}, "",
                 "AUTOSCALER_LEADER_ELECTION__LEASE: not a setting: no field 'LEASE' in leaderElection",
                 id="an unknown nested field"),
    pytest.param({"AUTOSCALER_DRY_RUN__X": "1"}, "", "dryRun is a single value", id="below a single value"),
    pytest.param({"AUTOSCALER_HTTP_LISTEN_ADDRESS": "a:1"}, "", "no field 'HTTP_LISTEN_ADDRESS'",
                 id="one underscore between levels"),
    pytest.param({"AUTOSCALER_LOG____LEVEL": "info"}, "", "empty part", id="an empty level"),
    pytest.param({"AUTOSCALER_DRY_RUN": "maybe"}, "dryRun", "(set by AUTOSCALER_DRY_RUN)", id="a bad boolean"),
    pytest.param({"AUTOSCALER_SYNC_PERIOD_SECONDS": "0"}, "syncPeriodSeconds",
                 "greater than or equal to 1, not 0 (set by AUTOSCALER_SYNC_PERIOD_SECONDS)", id="out of bounds"),
    pytest.param({"AUTOSCALER_NAMESPACES": "[a, b"}, "", "AUTOSCALER_NAMESPACES: not valid YAML", id="broken YAML"),
    pytest.param({"AUTOSCALER_NAMESPACES": "{a: 1, a: 2}"}, "", "duplicate key 'a'", id="a duplicate key"),
    pytest.param({"AUTOSCALER_LEADER_ELECTION__LEASE_DURATION_SECONDS": "5"}, "leaderElection.leaseDurationSeconds",
                 "renewDeadlineSeconds (set by AUTOSCALER_LEADER_ELECTION__LEASE_DURATION_SECONDS)",
                 id="a cross-field rule"),
    pytest.param({"AUTOSCALER_CONTROLLER__FEATURE_GATES__NO_SUCH_GATE": "true"}, "controller.featureGates",
                 "unknown feature gate 'no_such_gate'", id="an unknown feature gate"),
    pytest.param({"AUTOSCALER_CONTROLLER__FEATURE_GATES__NO_SUCH_GATE": "true"}, "controller.featureGates",
                 "(set by AUTOSCALER_CONTROLLER__FEATURE_GATES__NO_SUCH_GATE)", id="a map entry names its variable"),
    pytest.param({"AUTOSCALER_METRICS__SERVERS__MAIN__URL": "nope"}, "metrics.servers.main.url",
                 "(set by AUTOSCALER_METRICS__SERVERS__MAIN__URL)", id="a new server's bad URL"),
]  # fmt: skip


@pytest.mark.parametrize(("env", "path", "words"), ENV_BAD)
def test_a_bad_environment_variable_is_named(tmp_path: Path, env: dict[str, str], path: str, words: str) -> None:
    problems = _problems(tmp_path, "", env)
    assert len(problems) == 1, problems
    assert problems[0][0] == path
    assert words in problems[0][1]


def test_a_bad_override_does_not_change_the_settings_it_passes_through(tmp_path: Path) -> None:
    """A wrong path is reported once: it does not also leave an empty mapping where a value was."""
    problems = _problems(tmp_path, "dryRun: true\n", {"AUTOSCALER_DRY_RUN__X": "1"})
    assert [p for p, _ in problems] == [""]


def test_relative_paths_are_resolved_against_the_settings_file(tmp_path: Path) -> None:
    text = (
        "specs: {files: [specs, /abs/spec.yaml]}\nflightRecorder: {directory: snaps}\n"
        "kubernetes: {kubeconfig: kube/config}\n"
        "metrics: {servers: {main: {url: 'https://p', bearerTokenFile: token, tls: {caFile: ca.pem}}}}\n"
    )
    config = _load(tmp_path, text, {"AUTOSCALER_FLIGHT_RECORDER__DIRECTORY": "env-snaps"})
    assert config.specs.files == [str(tmp_path / "specs"), "/abs/spec.yaml"]
    assert config.flight_recorder.directory == str(tmp_path / "env-snaps")
    assert config.kubernetes.kubeconfig == str(tmp_path / "kube/config")
    server = config.metrics.servers["main"]
    assert server.bearer_token_file == str(tmp_path / "token")
    assert server.tls is not None and server.tls.ca_file == str(tmp_path / "ca.pem")


CLIENTS = [
    pytest.param({}, None, ClientSettings(), id="nothing set: in-cluster or the default kubeconfig"),
    pytest.param({"server": "http://127.0.0.1:8001"}, None, ClientSettings(server="http://127.0.0.1:8001"),
                 id="an explicit server"),
    pytest.param({"kubeconfig": "/k"}, None, ClientSettings(in_cluster=False, kubeconfig="/k"), id="a kubeconfig"),
    pytest.param({"kubeconfig": "/k"}, "/flag", ClientSettings(in_cluster=False, kubeconfig="/flag"),
                 id="the flag wins"),
    pytest.param({"context": "c"}, None, ClientSettings(in_cluster=False, context="c"), id="a context"),
]  # fmt: skip


@pytest.mark.parametrize(("kubernetes", "flag", "expected"), CLIENTS)
def test_client_settings(kubernetes: dict[str, str], flag: str | None, expected: ClientSettings) -> None:
    config = DaemonConfig.model_validate({"kubernetes": kubernetes})
    assert client_settings(config, flag) == expected


ELECTIONS = [
    pytest.param({}, {}, "default", f"{socket.gethostname()}_{os.getpid()}", id="nothing set"),
    pytest.param({}, {"POD_NAMESPACE": "ops", "POD_NAME": "autoscaler-0"}, "ops", "autoscaler-0", id="the pod's"),
    pytest.param({"namespace": "mine", "identity": "me"}, {"POD_NAMESPACE": "ops", "POD_NAME": "p"}, "mine", "me",
                 id="the settings win"),
]  # fmt: skip


@pytest.mark.parametrize(("election", "env", "namespace", "identity"), ELECTIONS)
def test_leader_election_config(election: dict[str, str], env: dict[str, str], namespace: str, identity: str) -> None:
    config = DaemonConfig.model_validate(
        {"leaderElection": {**election, "leaseName": "lease", "retryPeriodSeconds": 3}}
    )
    assert leader_election_config(config, env) == LeaderElectionConfig(
        namespace=namespace, name="lease", identity=identity, retry_period_seconds=3.0
    )
    assert state_namespace(config, env) == namespace
    assert state_namespace(DaemonConfig.model_validate({"state": {"namespace": "st"}}), env) == "st"


def test_core_settings_come_from_the_controller_section() -> None:
    config = DaemonConfig.model_validate({"controller": {"tolerance": 0.2, "featureGates": {"HPAScaleToZero": True}}})
    settings = core_settings(config)
    assert settings.tolerance == 0.2 and settings.hpa_scale_to_zero is True


def test_the_config_is_frozen() -> None:
    config = DaemonConfig()
    with pytest.raises(ValueError, match="frozen"):
        config.dry_run = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        pytest.param("0.0.0.0:8080", ("0.0.0.0", 8080), id="IPv4"),
        pytest.param("[::]:0", ("::", 0), id="IPv6, any port"),
        pytest.param("metrics.local:9", ("metrics.local", 9), id="a host name"),
    ],
)
def test_split_address(address: str, expected: tuple[str, int]) -> None:
    assert split_address(address) == expected
    assert DaemonConfig.model_validate({"http": {"listenAddress": address}}).http.host_port() == expected


def test_spec_paths_expand_directories_and_name_what_is_missing(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    (specs / "sub").mkdir(parents=True)
    for name in ("b.yaml", "a.yml", "c.json", ".hidden.yaml", "sub/d.yaml"):
        (specs / name).write_text("")
    single = tmp_path / "one.yaml"
    single.write_text("")
    found, problems = spec_paths([str(specs), str(single), str(tmp_path / "absent")])
    assert found == [str(specs / "a.yml"), str(specs / "b.yaml"), str(single)]
    assert problems == [("specs.files[2]", f"no such file or directory: {tmp_path / 'absent'}")]


def test_the_example_settings_file_loads() -> None:
    config = load_config(str(REPO / "config" / "daemon.yaml"), env={})
    assert config.specs.files == [str(REPO / "config" / "samples")]
    assert set(config.metrics.servers) == {"main"}
    documented = yaml.safe_load((REPO / "config" / "daemon.yaml").read_text())
    assert set(documented) == {field.alias for field in DaemonConfig.model_fields.values()}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("true", True, id="true"),
        pytest.param("yes", True, id="yes: a YAML 1.1 boolean, as kubectl reads it"),
        pytest.param("On", True, id="On"),
        pytest.param("off", False, id="off"),
        pytest.param("NO", False, id="NO"),
        pytest.param('"yes"', None, id="a quoted yes is a string: refused"),
        pytest.param("1", None, id="a number: refused"),
        pytest.param("y", None, id="y: not a boolean here, refused"),
    ],
)
@pytest.mark.parametrize("where", ["file", "env"])
def test_booleans_read_the_same_in_the_file_and_the_environment(
    tmp_path: Path, where: str, value: str, expected: bool | None
) -> None:
    text, env = (f"dryRun: {value}\n", {}) if where == "file" else ("{}\n", {"AUTOSCALER_DRY_RUN": value})
    if expected is None:
        ((path, message),) = _problems(tmp_path, text, env)
        assert path == "dryRun" and "valid boolean" in message
    else:
        assert _load(tmp_path, text, env).dry_run is expected
