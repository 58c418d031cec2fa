"""The daemon's settings file (docs/configuration.md): one strict schema, environment overrides, field paths.

`load_config` reads the YAML with the spec files' reader (autoscaler/spec/files.py: UTF-8, duplicate keys and
alias bombs refused), applies `AUTOSCALER_<PATH>` environment overrides, and validates everything at once:
`ConfigError` lists every problem with its field path ("leaderElection.leaseDurationSeconds: must be greater
than renewDeadlineSeconds"). The `metrics` and `controller` sections are the metric-source layer's and the
spec layer's own models, embedded unchanged. The helpers at the end turn the settings into what the layers
below take (ClientSettings, LeaderElectionConfig, core Settings). This module reads no spec file and opens
no connection.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel, to_snake

from autoscaler.core import types as core
from autoscaler.core.labels import SelectorSyntaxError, parse_selector
from autoscaler.kube.client import ClientSettings
from autoscaler.kube.leader import LeaderElectionConfig, LeaderElectionConfigError
from autoscaler.metrics.settings import MetricsSettings
from autoscaler.spec.errors import Problem, SpecError, in_field_order, join, pydantic_problems
from autoscaler.spec.files import parse_yaml, read_text
from autoscaler.spec.settings import FEATURE_GATES, SettingsModel

ENV_PREFIX = "AUTOSCALER_"

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$")
# A model validator names the field it is about as "fieldName: message"; the path then ends at that field.
_FIELD_PREFIX = re.compile(r"^([a-z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)*): (.+)$", flags=re.S)


class ConfigError(SpecError):
    """Daemon settings that cannot be used; `problems` lists every (field path, message), `source` the file."""


def _namespace(value: str) -> str:
    if value and (len(value) > 63 or not _DNS1123_LABEL.match(value)):
        raise ValueError(f"{value!r} is not a namespace name (a DNS-1123 label: at most 63 of a-z, 0-9, '-')")
    return value


class _Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        strict=True,
        validate_default=True,
    )


class SpecsSettings(_Section):
    """Where autoscaler specs come from."""

    custom_resources: bool = Field(default=True, description="Watch PrometheusAutoscaler objects in the cluster.")
    files: list[str] = Field(
        default_factory=list,
        description="Spec files or directories (their *.yaml and *.yml files, not recursive), hot-reloaded.",
    )

    @field_validator("files")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        if any(not path for path in value):
            raise ValueError("a path must not be empty")
        return value

    @model_validator(mode="after")
    def _some_source(self) -> SpecsSettings:
        if not self.custom_resources and not self.files:
            raise ValueError("no spec source: customResources is false and files is empty")
        return self


class ConcurrencySettings(_Section):
    """Bounds on the work in flight during one tick (metric queries: metrics.maxConcurrentQueries)."""

    writes: int = Field(default=16, ge=1, le=256, description="Scale, status and event writes in flight at once.")


class LeaderElectionSettings(_Section):
    """Lease-based leader election: only the leader reconciles (docs/leader-election.md)."""

    enabled: bool = Field(default=True, description="Elect a leader; off: this process always reconciles.")
    lease_name: str = Field(default="autoscaler", description="Name of the coordination.k8s.io Lease.")
    namespace: str = Field(default="", description='Namespace of the Lease; default: $POD_NAMESPACE, else "default".')
    identity: str = Field(default="", description="This contender's name; default: $POD_NAME, else hostname_pid.")
    # client-go's and kube-controller-manager's --leader-elect-* defaults.
    lease_duration_seconds: float = Field(
        default=15.0, gt=0, le=3600, allow_inf_nan=False, description="How long a lease holds without renewal."
    )
    renew_deadline_seconds: float = Field(
        default=10.0, gt=0, le=3600, allow_inf_nan=False, description="The leader gives up if it cannot renew by then."
    )
    retry_period_seconds: float = Field(
        default=2.0, gt=0, le=3600, allow_inf_nan=False, description="Between two acquire or renew attempts."
    )

    @field_validator("lease_name")
    @classmethod
    def _lease_name(cls, value: str) -> str:
        if len(value) > 253 or not _DNS1123_SUBDOMAIN.match(value):
            raise ValueError(f"{value!r} is not an object name (a DNS-1123 subdomain)")
        return value

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        return _namespace(value)

    @model_validator(mode="after")
    def _durations(self) -> LeaderElectionSettings:
        # The Kubernetes layer owns the rules; its message names snake_case fields, said here in camelCase.
        try:
            LeaderElectionConfig(
                namespace="default",
                name=self.lease_name,
                identity="check",
                lease_duration_seconds=self.lease_duration_seconds,
                renew_deadline_seconds=self.renew_deadline_seconds,
                retry_period_seconds=self.retry_period_seconds,
            )
        except LeaderElectionConfigError as err:
            field, _, rest = str(err).partition(" ")
            words = re.sub(r"\b[a-z]+(?:_[a-z]+)+\b", lambda m: to_camel(m.group()), rest)
            raise ValueError(f"{to_camel(field)}: {words}") from None
        return self


class StateSettings(_Section):
    """Where file specs keep their behaviour state (one ConfigMap per spec), and how often a steady one is stored."""

    namespace: str = Field(default="", description="Namespace of the state ConfigMaps; default: the Lease's.")
    refresh_seconds: float = Field(
        default=60.0,
        ge=0,
        le=3600,
        allow_inf_nan=False,
        description="A steady target's status and behaviour state are stored at most this often (changes that "
        "matter are written at once; a restart restores conservatively); 0 writes every change, as the HPA does.",
    )

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        return _namespace(value)


class HttpSettings(_Section):
    """The HTTP server: /metrics, /healthz, /readyz, /debug/snapshots."""

    listen_address: str = Field(
        default="0.0.0.0:8080", description="host:port to listen on ([::1]:8080 for IPv6; port 0: any free port)."
    )

    @field_validator("listen_address")
    @classmethod
    def _address(cls, value: str) -> str:
        split_address(value)
        return value

    def host_port(self) -> tuple[str, int]:
        """The address as (host, port), IPv6 brackets removed."""
        return split_address(self.listen_address)


def split_address(value: str) -> tuple[str, int]:
    """`host:port` (IPv6 in brackets) as (host, port); ValueError says what is wrong."""
    host, sep, port = value.rpartition(":")
    if not sep or not host:
        raise ValueError(f"{value!r} is not host:port (e.g. 0.0.0.0:8080)")
    if not port.isascii() or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{value!r}: the port must be a number from 0 to 65535")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            socket.inet_pton(socket.AF_INET6, host)
        except OSError:
            raise ValueError(f"{value!r}: {host!r} is not an IPv6 address") from None
    elif ":" in host or not _HOSTNAME.match(host):
        raise ValueError(f"{value!r}: {host!r} is not a host name or address (IPv6 goes in brackets: [::]:8080)")
    return host, int(port)


class LogSettings(_Section):
    """The daemon's logs (structlog, on standard error)."""

    format: Literal["auto", "json", "console"] = Field(
        default="auto", description="auto: JSON lines, or the console renderer when stderr is a terminal."
    )
    level: Literal["debug", "info", "warning", "error"] = Field(default="info", description="The least level logged.")


class FlightRecorderSettings(_Section):
    """The last decision snapshots per target, in `autoscaler replay`'s format."""

    size: int = Field(default=10, ge=0, le=1000, description="Snapshots kept per target (0: none).")
    directory: str = Field(default="", description="Also write each snapshot as a file here; empty: keep in memory.")


class KubernetesSettings(_Section):
    """How to reach the API server (the --kubeconfig flag wins over `kubeconfig`)."""

    server: str = Field(
        default="", description="An explicit API server URL (e.g. http://127.0.0.1:8001); wins over the rest."
    )
    kubeconfig: str = Field(default="", description="A kubeconfig file; default: in-cluster, else $KUBECONFIG.")
    context: str = Field(default="", description="The kubeconfig context; default: its current context.")

    @field_validator("server")
    @classmethod
    def _server(cls, value: str) -> str:
        parts = urlsplit(value)
        if value and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise ValueError(f"{value!r} is not an http:// or https:// URL with a host")
        return value


class DaemonConfig(_Section):
    """The settings of `autoscaler run` and `autoscaler plan`; every field has a default."""

    metrics: MetricsSettings = Field(
        default_factory=MetricsSettings, description="Prometheus servers, query templates, limits (docs/metrics.md)."
    )
    controller: SettingsModel = Field(
        default_factory=SettingsModel, description="kube-controller-manager's HPA flags and feature gates."
    )
    sync_period_seconds: int = Field(
        default=15,  # --horizontal-pod-autoscaler-sync-period
        ge=1,
        le=3600,
        description="How often each spec is evaluated, unless it sets its own syncPeriodSeconds.",
    )
    tick_seconds: float = Field(
        default=1.0,
        gt=0,
        le=60,
        allow_inf_nan=False,
        description="The scheduler's base period; each tick evaluates the specs that are due.",
    )
    dry_run: bool = Field(default=False, description="Decide, report and record, but never write a scale.")
    namespaces: list[str] = Field(
        default_factory=list, description="The namespaces watched (specs, pods, workloads); empty: all."
    )
    label_selector: str = Field(
        default="", description="Only PrometheusAutoscaler objects matching this label selector (e.g. team=shop)."
    )
    specs: SpecsSettings = Field(default_factory=SpecsSettings, description="Where specs come from.")
    concurrency: ConcurrencySettings = Field(default_factory=ConcurrencySettings, description="Writes in flight.")
    leader_election: LeaderElectionSettings = Field(
        default_factory=LeaderElectionSettings, description="Lease-based leader election."
    )
    state: StateSettings = Field(default_factory=StateSettings, description="Behaviour state of file specs.")
    http: HttpSettings = Field(default_factory=HttpSettings, description="The HTTP server.")
    log: LogSettings = Field(default_factory=LogSettings, description="Log format and level.")
    flight_recorder: FlightRecorderSettings = Field(
        default_factory=FlightRecorderSettings, description="Decision snapshots kept per target."
    )
    shutdown_grace_seconds: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="On SIGTERM, how long the tick in flight may take to finish.",
    )
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings, description="The API server.")

    @field_validator("namespaces")
    @classmethod
    def _namespaces(cls, value: list[str]) -> list[str]:
        for name in value:
            if not name:
                raise ValueError("a namespace must not be empty (an empty list watches all)")
            _namespace(name)
        twice = sorted({name for name in value if value.count(name) > 1})
        if twice:
            raise ValueError(f"{twice[0]!r} is listed twice")
        return value

    @field_validator("label_selector")
    @classmethod
    def _selector(cls, value: str) -> str:
        try:
            parse_selector(value)
        except SelectorSyntaxError as err:
            raise ValueError(f"not a label selector: {err}") from None
        return value

    @model_validator(mode="after")
    def _periods(self) -> DaemonConfig:
        if self.tick_seconds > self.sync_period_seconds:
            raise ValueError(
                f"tickSeconds: must not be greater than syncPeriodSeconds ({self.sync_period_seconds}), "
                f"not {self.tick_seconds:g}"
            )
        deadline = self.metrics.pass_deadline_seconds
        if deadline is not None and deadline >= self.sync_period_seconds:
            raise ValueError(
                f"metrics.passDeadlineSeconds: must be less than syncPeriodSeconds ({self.sync_period_seconds}), "
                f"not {deadline:g}: a tick would outlast the period"
            )
        return self


# --- Loading --------------------------------------------------------------------------------------------


def load_config(path: str, *, env: Mapping[str, str] = os.environ) -> DaemonConfig:
    """The settings of `path` ("-": stdin) with `AUTOSCALER_*` overrides from `env`; ConfigError lists all problems."""
    try:
        data = parse_yaml(read_text(path), source=path)
    except SpecError as err:
        raise ConfigError(err.problems, source=path) from None
    return config_from_data(data, source=path, env=env, base=Path(path).parent if path != "-" else Path())


def config_from_data(data: Any, *, source: str, env: Mapping[str, str], base: Path) -> DaemonConfig:
    """`load_config` on a parsed document; relative paths are resolved against `base`."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            [("", "the settings must be a YAML mapping (field: value), not a list or a scalar")], source=source
        )
    problems, overridden = apply_env(data, env)
    _resolve_paths(data, base)
    try:
        config = DaemonConfig.model_validate(data)
    except ValidationError as err:
        problems += [_name_field(problem) for problem in pydantic_problems(err)]
    else:
        if not problems:
            return config
    problems = [(path, message + _set_by(path, overridden)) for path, message in problems]
    raise ConfigError(in_field_order(problems, model=DaemonConfig), source=source)


def _name_field(problem: Problem) -> Problem:
    """A model validator's "fieldName: message" becomes a problem of that field."""
    path, message = problem
    match = _FIELD_PREFIX.match(message)
    if match is None:
        return problem
    inner, rest = match.groups()
    return join(path, inner), rest


def _set_by(path: str, overridden: Mapping[str, str]) -> str:
    # The variable set this field, a field inside it, or an entry of this map (AUTOSCALER_..._FEATURE_GATES__X).
    names = [
        name
        for field, name in overridden.items()
        if path == field or path.startswith((field + ".", field + "[")) or field.startswith(path + ".")
    ]
    return f" (set by {names[0]})" if names else ""


# --- Environment overrides ------------------------------------------------------------------------------


def apply_env(data: dict[str, Any], env: Mapping[str, str]) -> tuple[list[Problem], dict[str, str]]:
    """Apply every AUTOSCALER_* variable of `env` to `data` in place; the problems, and field path -> variable."""
    problems: list[Problem] = []
    overridden: dict[str, str] = {}
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX):
            continue
        try:
            path = _apply_one(data, name, env[name])
        except _EnvError as err:
            problems.append(("", f"{name}: {err}"))
            continue
        overridden[path] = name
    return problems, overridden


class _EnvError(ValueError):
    """An AUTOSCALER_* variable that names no setting, or whose value cannot be read."""


def _apply_one(data: dict[str, Any], name: str, raw: str) -> str:
    segments = name.removeprefix(ENV_PREFIX).split("__")
    if not all(segments):
        raise _EnvError("not a setting: its path has an empty part (write AUTOSCALER_HTTP__LISTEN_ADDRESS)")
    # Find the keys first, reading only; the settings change once the whole path is known to be good.
    keys: list[str] = []
    node: Any = data
    annotation: Any = DaemonConfig
    for segment in segments:
        if node is not None and not isinstance(node, dict):
            raise _EnvError(f"{'.'.join(keys)} is not a mapping in the settings file, so it has no {segment}")
        key, annotation = _child(node or {}, segment, annotation, known=".".join(keys))
        keys.append(key)
        node = node.get(key) if isinstance(node, dict) else None
    value = _env_value(raw, annotation, name=name)
    target = data
    for key in keys[:-1]:
        if target.get(key) is None:
            target[key] = {}
        target = target[key]
    target[keys[-1]] = value
    return ".".join(keys)


def _child(node: Mapping[str, Any], segment: str, annotation: Any, *, known: str) -> tuple[str, Any]:
    """The key of `segment` under a model or a map, and the annotation of its value."""
    model = None if get_origin(annotation) is dict else _model_of(annotation)
    where = known or "the settings"
    if model is not None:
        for field_name, field in model.model_fields.items():
            alias = field.alias or field_name
            if to_snake(alias).upper() == segment:
                return alias, field.annotation
        raise _EnvError(f"not a setting: no field {segment!r} in {where} (see docs/configuration.md)")
    if get_origin(annotation) is dict:
        value_type = get_args(annotation)[1]
        wanted = _loose(segment)
        candidates = dict.fromkeys([*node, *_KNOWN_KEYS.get(known, ())])
        matches = [key for key in candidates if isinstance(key, str) and _loose(key) == wanted]
        if len(matches) > 1:
            raise _EnvError(f"{segment!r} matches {len(matches)} entries of {where}: {', '.join(sorted(matches))}")
        return (matches[0] if matches else segment.lower()), value_type
    raise _EnvError(f"not a setting: {where} is a single value, with no field {segment!r}")


# Map keys an override can name though the file does not hold them yet (AUTOSCALER_..._HPA_SCALE_TO_ZERO).
_KNOWN_KEYS: Mapping[str, tuple[str, ...]] = {"controller.featureGates": tuple(FEATURE_GATES)}
_TEXT = frozenset({str, type(None)})


def _loose(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):  # `BasicAuth | None`
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _env_value(raw: str, annotation: Any, *, name: str) -> Any:
    """A string setting takes the value as it is; any other is read as YAML ("true", "15", "[a, b]")."""
    if annotation is str or (get_origin(annotation) in (Union, UnionType) and set(get_args(annotation)) <= _TEXT):
        return raw
    try:
        return parse_yaml(raw, source=name)
    except SpecError as err:
        raise _EnvError(err.problems[0][1]) from None


# --- Paths ------------------------------------------------------------------------------------------------

# The settings that name files, as paths with "*" for any map key; relative ones are resolved against the
# directory of the settings file, as kubectl resolves the paths of a kubeconfig.
_FILE_SETTINGS = (
    ("specs", "files", "[]"),
    ("flightRecorder", "directory"),
    ("kubernetes", "kubeconfig"),
    ("metrics", "servers", "*", "bearerTokenFile"),
    ("metrics", "servers", "*", "basicAuth", "passwordFile"),
    ("metrics", "servers", "*", "tls", "caFile"),
    ("metrics", "servers", "*", "tls", "certFile"),
    ("metrics", "servers", "*", "tls", "keyFile"),
)


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    for setting in _FILE_SETTINGS:
        _resolve(data, setting, base)


def _resolve(node: Any, rest: tuple[str, ...], base: Path) -> None:
    head, tail = rest[0], rest[1:]
    if tail and tail[0] == "[]":
        if isinstance(node, dict) and isinstance(node.get(head), list):
            node[head] = [_absolute(item, base) for item in node[head]]
        return
    if not isinstance(node, dict):
        return
    children = list(node) if head == "*" else [head] if head in node else []
    for key in children:
        if tail:
            _resolve(node[key], tail, base)
        else:
            node[key] = _absolute(node[key], base)


def _absolute(value: Any, base: Path) -> Any:
    if not isinstance(value, str) or not value or os.path.isabs(value) or base == Path():
        return value
    return str(base / value)


# --- What the layers below take ---------------------------------------------------------------------------


def client_settings(config: DaemonConfig, kubeconfig_flag: str | None = None) -> ClientSettings:
    """How to reach the API server: `kubernetes.server`, else the kubeconfig (flag, then setting), else in-cluster."""
    kube = config.kubernetes
    kubeconfig = kubeconfig_flag or kube.kubeconfig or None
    # An explicit kubeconfig or context means the kubeconfig, even inside a pod; otherwise auto-detect.
    in_cluster = False if (kubeconfig or kube.context) else None
    return ClientSettings(
        server=kube.server or None, in_cluster=in_cluster, kubeconfig=kubeconfig, context=kube.context or None
    )


def lease_namespace(config: DaemonConfig, env: Mapping[str, str] = os.environ) -> str:
    """The Lease's namespace: leaderElection.namespace, else $POD_NAMESPACE, else "default"."""
    return config.leader_election.namespace or env.get("POD_NAMESPACE") or "default"


def leader_election_config(config: DaemonConfig, env: Mapping[str, str] = os.environ) -> LeaderElectionConfig:
    """The Kubernetes layer's LeaderElectionConfig, with the namespace and identity defaults filled in."""
    election = config.leader_election
    identity = election.identity or env.get("POD_NAME") or f"{socket.gethostname()}_{os.getpid()}"
    return LeaderElectionConfig(
        namespace=lease_namespace(config, env),
        name=election.lease_name,
        identity=identity,
        lease_duration_seconds=election.lease_duration_seconds,
        renew_deadline_seconds=election.renew_deadline_seconds,
        retry_period_seconds=election.retry_period_seconds,
    )


def state_namespace(config: DaemonConfig, env: Mapping[str, str] = os.environ) -> str:
    """Where file specs' state ConfigMaps live: state.namespace, else the Lease's namespace."""
    return config.state.namespace or lease_namespace(config, env)


def core_settings(config: DaemonConfig) -> core.Settings:
    """The controller-wide settings of every decision."""
    return config.controller.to_core()


def spec_paths(paths: list[str]) -> tuple[list[str], list[Problem]]:
    """The spec files named by `specs.files`: files as given, directories' *.yaml/*.yml (sorted, hidden skipped).

    A missing path or an unreadable directory is a problem of `specs.files[i]`, not an exception.
    """
    found: list[str] = []
    problems: list[Problem] = []
    for index, path in enumerate(paths):
        where = f"specs.files[{index}]"
        entry = Path(path)
        if entry.is_dir():
            try:
                names = sorted(p.name for p in entry.iterdir())
            except OSError as err:
                problems.append((where, f"cannot read the directory {path}: {err.strerror or err}"))
                continue
            found += [
                str(entry / name)
                for name in names
                if not name.startswith(".") and name.endswith((".yaml", ".yml")) and (entry / name).is_file()
            ]
        elif entry.exists():
            found.append(path)
        else:
            problems.append((where, f"no such file or directory: {path}"))
    return found, problems
