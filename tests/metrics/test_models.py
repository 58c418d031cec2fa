"""The binding and settings models: strict, camelCase, defaults, and errors that name the field path."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from autoscaler.core.types import MetricSourceType
from autoscaler.metrics import MetricsSettings, PrometheusBinding, check_binding
from autoscaler.spec.prometheus import StrictModel

SETTINGS = """
servers:
  thanos:
    url: https://thanos-query.monitoring:9090/
    bearerTokenFile: /var/run/secrets/prometheus/token
    tls: {caFile: /etc/prometheus-ca/ca.crt}
    timeoutSeconds: 3
    extraQueryParams: {dedup: "true", partial_response: "false"}
  mimir:
    url: http://mimir-gateway.mimir/prometheus
    headers: {X-Scope-OrgID: team-a}
    basicAuth: {username: scaler, passwordFile: /secrets/mimir-password}
    retry: {maxAttempts: 2, budgetSeconds: 4}
defaultServer: thanos
templates:
  http-rps:
    query: sum by (${by}) (rate(http_requests_total{${matchers}}[${window}]))
    freshness: http_requests_total{${matchers}}
    windowSeconds: 120
resourceTemplates:
  memory:
    query: sum by (${by}) (container_memory_rss{${matchers}})
maxConcurrentQueries: 16
"""


def _loc(err: ValidationError) -> list[tuple[Any, ...]]:
    return [tuple(e["loc"]) for e in err.errors()]


def test_settings_from_yaml() -> None:
    settings = MetricsSettings.model_validate(yaml.safe_load(SETTINGS))
    thanos = settings.servers["thanos"]
    assert thanos.url == "https://thanos-query.monitoring:9090"
    assert thanos.timeout_seconds == 3 and thanos.extra_query_params["dedup"] == "true"
    assert settings.servers["mimir"].timeout_seconds == 5  # the default
    assert settings.default_server_name() == "thanos"
    assert settings.templates["http-rps"].window_seconds == 120
    # Overriding one resource template keeps the other's default.
    assert "container_memory_rss" in settings.resource_templates.memory.query
    assert "container_cpu_usage_seconds_total" in settings.resource_templates.cpu.query
    assert settings.staleness_budget_seconds(15) == 90


@pytest.mark.parametrize(
    ("patch", "loc"),
    [
        pytest.param({"servers": {"a": {"url": "http://u:p@host"}}}, ("servers", "a", "url"), id="userinfo in url"),
        pytest.param({"servers": {"a": {"url": "ftp://host"}}}, ("servers", "a", "url"), id="not http"),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "timeout": 3}}}, ("servers", "a", "timeout"), id="unknown key"
        ),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "headers": {"Authorization": "x"}}}},
            ("servers", "a", "headers"),
            id="authorization header refused",
        ),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "extraQueryParams": {"time": "1"}}}},
            ("servers", "a", "extraQueryParams"),
            id="reserved query param",
        ),
        pytest.param(
            {
                "servers": {
                    "a": {
                        "url": "http://h",
                        "bearerTokenFile": "t",
                        "basicAuth": {"username": "u", "passwordFile": "p"},
                    }
                }
            },
            ("servers", "a"),
            id="two kinds of auth",
        ),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "tls": {"caFile": "ca"}}}}, ("servers", "a"), id="tls on http"
        ),
        pytest.param(
            {"servers": {"a": {"url": "https://h", "tls": {"certFile": "c"}}}},
            ("servers", "a", "tls"),
            id="certificate without key",
        ),
        pytest.param({"servers": {"a": {"url": "http://h"}}, "defaultServer": "b"}, (), id="unknown default server"),
        pytest.param(
            {"templates": {"t": {"query": "up{${podz}}"}}}, ("templates", "t", "query"), id="unknown placeholder"
        ),
        pytest.param({"maxConcurrentQueries": 0}, ("maxConcurrentQueries",), id="no concurrency"),
        # A deadline past what a clock can reach would overflow the pass's wait: a setting error, never a crash.
        pytest.param({"passDeadlineSeconds": float("inf")}, ("passDeadlineSeconds",), id="an infinite pass deadline"),
        pytest.param({"passDeadlineSeconds": 1e300}, ("passDeadlineSeconds",), id="a pass deadline of 1e300 s"),
        pytest.param({"stalenessSeconds": float("nan")}, ("stalenessSeconds",), id="a NaN staleness budget"),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "timeoutSeconds": float("inf")}}},
            ("servers", "a", "timeoutSeconds"),
            id="an infinite request timeout",
        ),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "retry": {"budgetSeconds": 1e9}}}},
            ("servers", "a", "retry", "budgetSeconds"),
            id="a retry budget of 30 years",
        ),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "maxResponseBytes": 10}}},
            ("servers", "a", "maxResponseBytes"),
            id="a response limit too small for any answer",
        ),
        # Strict, as the daemon's settings are: text or a number where a boolean or a number belongs is refused.
        pytest.param(
            {"servers": {"a": {"url": "http://h", "compression": "true"}}},
            ("servers", "a", "compression"),
            id="a quoted true",
        ),
        pytest.param(
            {"servers": {"a": {"url": "http://h", "compression": 1}}}, ("servers", "a", "compression"), id="1 as true"
        ),
        pytest.param({"maxConcurrentQueries": "8"}, ("maxConcurrentQueries",), id="a quoted number"),
    ],
)
def test_settings_errors_name_the_field(patch: dict[str, Any], loc: tuple[Any, ...]) -> None:
    with pytest.raises(ValidationError) as caught:
        MetricsSettings.model_validate(patch)
    assert loc in _loc(caught.value)


def test_binding_from_yaml() -> None:
    binding = PrometheusBinding.model_validate(
        yaml.safe_load(
            """
            server: mimir
            query: sum(rabbitmq_queue_messages_ready{queue="orders"})
            emptyAsZero: true
            stalenessSeconds: 120
            resultType: vector
            """
        )
    )
    assert binding.server == "mimir" and binding.empty_as_zero and binding.staleness_seconds == 120
    assert binding.pod_label == "pod" and binding.namespace_label == "namespace" and not binding.sum_series


@pytest.mark.parametrize(
    ("document", "loc"),
    [
        pytest.param({"template": "a", "query": "up"}, (), id="template and query"),
        pytest.param({"querry": "up"}, ("querry",), id="unknown key"),
        pytest.param({"podLabel": "kubernetes.pod"}, ("podLabel",), id="bad label name"),
        pytest.param({"resultType": "matrix"}, ("resultType",), id="matrix is not a result type"),
        pytest.param({"stalenessSeconds": 0}, ("stalenessSeconds",), id="zero staleness"),
        pytest.param({"query": "  "}, ("query",), id="blank query"),
    ],
)
def test_binding_errors_name_the_field(document: dict[str, Any], loc: tuple[Any, ...]) -> None:
    with pytest.raises(ValidationError) as caught:
        PrometheusBinding.model_validate(document)
    assert loc in _loc(caught.value)


def test_check_binding_against_settings() -> None:
    settings = MetricsSettings.model_validate(yaml.safe_load(SETTINGS))
    binding = PrometheusBinding.model_validate(
        {"server": "nope", "template": "missing", "sumSeries": True, "objectLabel": "ingress"}
    )
    problems = check_binding(binding, metric_type=MetricSourceType.PODS, settings=settings)
    assert problems == [
        "prometheus.server: no server named 'nope' in metrics.servers",
        "prometheus.template: no template named 'missing' in metrics.templates",
        "prometheus.sumSeries: only for Object and External metrics, not Pods",
        "prometheus.objectLabel: only for Object metrics",
    ]
    assert check_binding(None, metric_type=MetricSourceType.RESOURCE, settings=settings) == []


def test_every_field_is_described() -> None:
    """The docs and the JSON schema are made from the descriptions: none may be missing."""
    import autoscaler.metrics.binding as binding_module
    import autoscaler.metrics.settings as settings_module

    models = [
        cls
        for module in (binding_module, settings_module)
        for cls in vars(module).values()
        if isinstance(cls, type) and issubclass(cls, StrictModel | settings_module._Strict) and cls.model_fields
    ]
    assert len(models) >= 7
    for model in models:
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
