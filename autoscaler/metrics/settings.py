"""The `metrics` section of the daemon settings: Prometheus servers, query templates, limits.

A strict pydantic model, every field described (docs/metrics.md mirrors these descriptions). Credentials
are never values here: they are files (Kubernetes mounts Secrets as files), read by the connection when
a request is sent, so settings can be logged and dumped without leaking anything.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from autoscaler.spec.prometheus import check_template

# The header names a user may not set through `headers` (they come from the auth settings).
_RESERVED_HEADERS = frozenset({"authorization", "content-length", "host"})


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
        strict=True,
    )


class BasicAuth(_Strict):
    """HTTP basic authentication."""

    username: str = Field(min_length=1, description="The user name.")
    password_file: str = Field(min_length=1, description="File holding the password (re-read when it changes).")


class TLSSettings(_Strict):
    """TLS for an https URL. Verification is on unless `insecureSkipVerify` is set on purpose."""

    ca_file: str | None = Field(default=None, description="PEM bundle of the CAs to trust; default: the system's.")
    cert_file: str | None = Field(default=None, description="PEM client certificate (mutual TLS).")
    key_file: str | None = Field(default=None, description="PEM private key of the client certificate.")
    insecure_skip_verify: bool = Field(
        default=False, description="Do not verify the server's certificate. For tests only."
    )

    @model_validator(mode="after")
    def _pair(self) -> TLSSettings:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("set both certFile and keyFile, or neither")
        return self


class RetrySettings(_Strict):
    """Retries of transient errors (unreachable, timeout, 5xx, 429) inside one tick."""

    max_attempts: int = Field(default=3, ge=1, le=10, description="Attempts in all, the first included.")
    budget_seconds: float | None = Field(
        default=None,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="Stop retrying once the next attempt would start later than this after the first (or "
        "after the pass's deadline); default: a third of the sync period. The next tick is the retry for "
        "anything longer.",
    )


class PrometheusServer(_Strict):
    """One Prometheus-compatible server (Prometheus, Thanos, Mimir, Cortex, VictoriaMetrics)."""

    url: str = Field(
        description="Base URL, e.g. https://thanos-query.monitoring:9090 or http://mimir/prometheus "
        "(the API is under <url>/api/v1). No user information: use basicAuth."
    )
    bearer_token_file: str | None = Field(
        default=None, description="File holding a bearer token (re-read when the file changes)."
    )
    basic_auth: BasicAuth | None = Field(default=None, description="HTTP basic authentication.")
    tls: TLSSettings | None = Field(default=None, description="TLS settings for an https URL.")
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Extra HTTP headers on every request, e.g. X-Scope-OrgID for Mimir/Cortex tenants.",
    )
    timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="Wall-clock bound on one HTTP request (connect, headers and body together, however slowly "
        "the server sends), in seconds; cut shorter by what is left of the pass.",
    )
    extra_query_params: dict[str, str] = Field(
        default_factory=dict,
        description="Extra query parameters on every query, e.g. Thanos `dedup: 'true'`, `partial_response: 'false'`.",
    )
    retry: RetrySettings = Field(default_factory=RetrySettings, description="Retries of transient errors.")
    max_response_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1024,
        le=1024**3,
        description="The largest answer read from this server, after decompression; a larger one is a "
        "bad_response (a compressed bomb or a runaway query must not exhaust the daemon's memory).",
    )
    compression: bool = Field(
        default=False,
        description="Ask for compressed answers (Accept-Encoding: gzip, deflate). Off by default: next to the "
        "daemon, compressing a pass's answers (~20 MiB of JSON at 5,000 targets) costs the server ~0.2 s of CPU "
        "per pass and the daemon the inflating, more than the transfer saves; turn it on for a server across "
        "a slow or metered link. A header `Accept-Encoding` in `headers` overrides it.",
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL with a host")
        if parts.username is not None or parts.password is not None:
            raise ValueError("must not carry user information; use basicAuth")
        if parts.query or parts.fragment:
            raise ValueError("must not carry a query or fragment; use extraQueryParams")
        return value.rstrip("/")

    @field_validator("headers")
    @classmethod
    def _check_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, header in value.items():
            if name.lower() in _RESERVED_HEADERS:
                raise ValueError(f"header {name!r} cannot be set here (use bearerTokenFile or basicAuth)")
            if not name or any(c in name for c in " :\r\n\t") or any(c in header for c in "\r\n"):
                raise ValueError(f"header {name!r} is not a valid HTTP header")
        return value

    @field_validator("extra_query_params")
    @classmethod
    def _check_params(cls, value: dict[str, str]) -> dict[str, str]:
        reserved = {"query", "time", "timeout"} & set(value)
        if reserved:
            raise ValueError(f"{', '.join(sorted(reserved))} cannot be set here (the autoscaler sets them)")
        return value

    @model_validator(mode="after")
    def _one_auth(self) -> PrometheusServer:
        if self.bearer_token_file is not None and self.basic_auth is not None:
            raise ValueError("set bearerTokenFile or basicAuth, not both")
        if self.tls is not None and not self.url.startswith("https://"):
            raise ValueError("tls needs an https:// url")
        return self


class QueryTemplate(_Strict):
    """A named PromQL template (prometheus-adapter style). Placeholders, each filled safely:

    `${matchers}` label matchers (namespace, described object, metric selector), `${by}` the grouping labels
    (namespace and pod labels, for per-pod metrics), `${namespace}`, `${metric}` (the metric name),
    `${object_name}`, `${object_kind}`, `${container}` and `${window}` (the rate window, e.g. `60s`).
    """

    query: str = Field(min_length=1, description="The PromQL, with placeholders.")
    freshness: str | None = Field(
        default=None,
        description="A plain selector (with placeholders) naming the series whose sample times count for "
        "staleness; without it only Prometheus's lookback window (5 min) bounds a sample's age.",
    )
    window_seconds: float = Field(
        default=60.0, gt=0, description="Fills `${window}`; also the window reported with the readings."
    )

    @field_validator("query", "freshness")
    @classmethod
    def _placeholders(cls, value: str | None) -> str | None:
        if value is not None:
            check_template(value)
        return value


def _default_cpu() -> QueryTemplate:
    # cAdvisor's counter in CPU-seconds, as a per-container rate in cores (metrics-server reads the same).
    selector = 'container_cpu_usage_seconds_total{${matchers}, container!="", container!="POD"}'
    return QueryTemplate(
        query=f"sum by (${{by}}) (rate({selector}[${{window}}]))", freshness=selector, window_seconds=60.0
    )


def _default_memory() -> QueryTemplate:
    # The working set, what metrics-server and the kubelet's eviction report as a container's memory.
    selector = 'container_memory_working_set_bytes{${matchers}, container!="", container!="POD"}'
    return QueryTemplate(query=f"sum by (${{by}}) ({selector})", freshness=selector, window_seconds=60.0)


class ResourceTemplates(_Strict):
    """Templates for Resource and ContainerResource metrics; `${by}` groups by namespace, pod, container."""

    cpu: QueryTemplate = Field(default_factory=_default_cpu, description="CPU usage in cores per container.")
    memory: QueryTemplate = Field(default_factory=_default_memory, description="Memory in bytes per container.")


class MetricsSettings(_Strict):
    """The `metrics` section of the daemon settings."""

    servers: dict[str, PrometheusServer] = Field(
        default_factory=dict, description="The Prometheus-compatible servers, by name."
    )
    default_server: str | None = Field(
        default=None,
        description="The server metrics use when their binding names none; default: the only server.",
    )
    templates: dict[str, QueryTemplate] = Field(
        default_factory=dict, description="Named query templates that bindings refer to."
    )
    resource_templates: ResourceTemplates = Field(
        default_factory=ResourceTemplates, description="Templates for Resource/ContainerResource metrics."
    )
    staleness_seconds: float | None = Field(
        default=None,
        gt=0,
        le=86400,
        allow_inf_nan=False,
        description="Default staleness budget; default: twice the sync period plus 60 s (one scrape "
        "interval of up to a minute and a missed tick).",
    )
    max_concurrent_queries: int = Field(
        default=8, ge=1, le=64, description="Queries in flight at once during one evaluation pass."
    )
    pass_deadline_seconds: float | None = Field(
        default=None,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="The evaluation pass is over by this wall-clock deadline whatever the servers do: a query "
        "still running is cut off, one not started is not sent, each a QueryTimeoutError; default: 80 % of "
        "the shortest sync period in the pass, so a slow server cannot stall a tick.",
    )

    @model_validator(mode="after")
    def _default_exists(self) -> MetricsSettings:
        if self.default_server is not None and self.default_server not in self.servers:
            raise ValueError(f"defaultServer: no server named {self.default_server!r} in servers")
        return self

    def default_server_name(self) -> str | None:
        """The server used when a binding names none."""
        if self.default_server is not None:
            return self.default_server
        return next(iter(self.servers)) if len(self.servers) == 1 else None

    def staleness_budget_seconds(self, sync_period_seconds: float) -> float:
        """The staleness budget when a binding sets none."""
        if self.staleness_seconds is not None:
            return self.staleness_seconds
        return 2 * sync_period_seconds + 60.0
