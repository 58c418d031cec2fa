"""Building the `kubernetes` client, and the one helper every request in this package goes through.

`connect(settings)` gives a `KubeClient`: the official client configured from an explicit server URL (tests,
`kubectl proxy`), the in-cluster ServiceAccount, or a kubeconfig, with deliberate choices where the client's
defaults hide behaviour:

- urllib3's hidden retries are off except one connect retry (safe: nothing was sent). The client's default
  `Retry(3)` silently re-sends GETs on 429/503 and sleeps inside the call; retries belong to tenacity in
  `autoscaler.kube.retry`, where they are bounded, visible and testable.
- every request carries an explicit (connect, read) timeout;
- the User-Agent names the project, so audit logs show who did what.

`KubeClient.request_json` calls a generated API method with `_preload_content=False` and parses the JSON
itself: the layer works on plain dicts (the client's pydantic models are strict and slow on bulk lists, see
docs/kube.md), and all errors are translated by `autoscaler.kube.errors.translating`.
This module must not retry, sleep or log.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from autoscaler.kube.errors import InvalidRequest, RequestContext, translating

PROJECT = "prometheus-autoscaler"
USER_AGENT = f"{PROJECT}/0.1.0 (kubernetes-python/37)"


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """How to reach the API server. Exactly one source is used: `server`, in-cluster, or a kubeconfig."""

    # An explicit API server URL (e.g. http://127.0.0.1:8001); wins over everything else.
    server: str | None = None
    # A bearer token for `server` (in-cluster and kubeconfig bring their own credentials).
    token: str | None = None
    # None: in-cluster when KUBERNETES_SERVICE_HOST is set, else the kubeconfig.
    in_cluster: bool | None = None
    kubeconfig: str | None = None
    context: str | None = None
    connect_timeout_seconds: float = 5.0
    read_timeout_seconds: float = 15.0
    user_agent: str = USER_AGENT
    # Keep-alive connections kept per host; watches each hold one.
    connection_pool_maxsize: int = 32


def _configuration(settings: ClientSettings) -> k8s.Configuration:
    cfg = k8s.Configuration()
    if settings.server:
        cfg.host = settings.server.rstrip("/")
        if settings.token:
            cfg.api_key = {"authorization": settings.token}
            cfg.api_key_prefix = {"authorization": "Bearer"}
    else:
        in_cluster = settings.in_cluster
        if in_cluster is None:
            in_cluster = bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        if in_cluster:
            # The config loaders are untyped in the client.
            k8s_config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        else:
            k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=settings.kubeconfig, context=settings.context, client_configuration=cfg
            )
    # One connect retry only (the request never left), no read/status/redirect retries: see the docstring.
    cfg.retries = urllib3.Retry(total=1, connect=1, read=0, redirect=0, status=0, other=0, raise_on_status=False)
    cfg.connection_pool_maxsize = settings.connection_pool_maxsize
    return cfg


class KubeClient:
    """The official client plus this project's timeouts and error translation. Thread-safe for requests."""

    def __init__(self, api_client: k8s.ApiClient, *, settings: ClientSettings) -> None:
        self.api_client = api_client
        self.settings = settings
        self.core = k8s.CoreV1Api(api_client)
        self.custom = k8s.CustomObjectsApi(api_client)
        self.coordination = k8s.CoordinationV1Api(api_client)

    @property
    def timeout(self) -> tuple[float, float]:
        """(connect, read) seconds, passed as `_request_timeout` on every request."""
        return (self.settings.connect_timeout_seconds, self.settings.read_timeout_seconds)

    def request_json(
        self,
        method: Callable[..., Any],
        *args: Any,
        context: RequestContext,
        target: bool = False,
        timeout: tuple[float, float] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Call a generated API method and return its JSON answer as a dict, or raise a typed error."""
        with translating(context, target=target):
            response = method(*args, _preload_content=False, _request_timeout=timeout or self.timeout, **kwargs)
            data = json.loads(response.data) if response.data else {}
        if not isinstance(data, dict):
            raise InvalidRequest(f"{context.describe()}: answer is not a JSON object", context=context)
        return data

    def open_stream(
        self,
        method: Callable[..., Any],
        *args: Any,
        context: RequestContext,
        read_timeout_seconds: float,
        **kwargs: Any,
    ) -> urllib3.BaseHTTPResponse:
        """Start a streaming request (a watch) and return the unread urllib3 response."""
        with translating(context):
            response = method(
                *args,
                _preload_content=False,
                _request_timeout=(self.settings.connect_timeout_seconds, read_timeout_seconds),
                **kwargs,
            )
        return response  # type: ignore[no-any-return]

    def close(self) -> None:
        self.api_client.close()  # type: ignore[no-untyped-call]  # untyped in the client


def connect(settings: ClientSettings | None = None) -> KubeClient:
    """A `KubeClient` configured as `settings` say (defaults: in-cluster or the default kubeconfig)."""
    settings = settings or ClientSettings()
    api_client = k8s.ApiClient(_configuration(settings))
    api_client.user_agent = settings.user_agent
    return KubeClient(api_client, settings=settings)
