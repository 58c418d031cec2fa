"""Credentials, headers and TLS, checked by a loopback proxy that accepts only the right ones."""

from __future__ import annotations

import base64
import gzip
import os
import ssl
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from autoscaler.core.types import ExternalReading, MetricSourceType
from autoscaler.metrics import MetricRequest, MetricsError, MetricsReader, PermanentError
from autoscaler.metrics.auth import Redactor
from tests.metrics.certs import Pki, make_pki
from tests.metrics.conftest import Push
from tests.metrics.helpers import context, request, spec
from tests.metrics.proxy import Fault, Proxy
from tests.metrics.server import PrometheusServer

Reader = Callable[..., MetricsReader]
SecretFile = Callable[[str, str], Path]


@pytest.fixture
def sample(push: Push, base_time: datetime) -> MetricRequest:
    """A request for a metric that exists, and its series."""
    push({"__name__": "auth_queue_depth"}, [(base_time, 11)])
    return request(spec(MetricSourceType.EXTERNAL, metric="auth_queue_depth"), context("auth", base_time))


def _ok(reader: MetricsReader, req: MetricRequest, base_time: datetime) -> None:
    assert reader.read_one(req) == ExternalReading((11000,), base_time)


def _error(reader: MetricsReader, req: MetricRequest) -> MetricsError:
    outcome = reader.read([req]).outcomes[0]
    assert isinstance(outcome, MetricsError)
    return outcome


def test_bearer_token_file_reread_on_rotation(
    proxy: Proxy, make_reader: Reader, secret_file: SecretFile, sample: MetricRequest, base_time: datetime
) -> None:
    token = secret_file("token", "first-token-value\n")
    proxy.require = {"Authorization": "Bearer first-token-value"}
    reader = make_reader(proxy.url, bearerTokenFile=str(token))
    _ok(reader, sample, base_time)
    # Rotated the way a Secret volume does it: a new file moved into place.
    rotated = secret_file("token.new", "second-token-value-longer")
    os.replace(rotated, token)
    proxy.require = {"Authorization": "Bearer second-token-value-longer"}
    _ok(reader, sample, base_time)


def test_wrong_token_is_permanent_and_never_shown(
    proxy: Proxy, make_reader: Reader, secret_file: SecretFile, sample: MetricRequest
) -> None:
    token = secret_file("token", "not-the-right-one")
    proxy.require = {"Authorization": "Bearer right-one"}
    error = _error(make_reader(proxy.url, bearerTokenFile=str(token)), sample)
    assert isinstance(error, PermanentError) and error.status == 401
    assert "not-the-right-one" not in str(error) and "right-one" not in repr(error.__dict__)


def test_token_never_in_logs(
    proxy: Proxy, make_reader: Reader, secret_file: SecretFile, sample: MetricRequest, base_time: datetime
) -> None:
    """Retries are logged; what they log names the server and the error, not the credential."""
    token = secret_file("token", "very-secret-token")
    proxy.require = {"Authorization": "Bearer very-secret-token"}
    proxy.faults.append(Fault(status=503, body=b"busy"))
    with capture_logs() as logs:
        _ok(make_reader(proxy.url, bearerTokenFile=str(token)), sample, base_time)
    assert [event["event"] for event in logs][:1] == ["prometheus_query_retrying"]
    assert "very-secret-token" not in repr(logs)


def test_missing_token_file(proxy: Proxy, make_reader: Reader, tmp_path: Path, sample: MetricRequest) -> None:
    error = _error(make_reader(proxy.url, bearerTokenFile=str(tmp_path / "absent")), sample)
    assert isinstance(error, PermanentError) and error.error_type == "config"
    assert "bearerTokenFile" in error.message
    assert proxy.requests == []


def test_basic_auth(
    proxy: Proxy, make_reader: Reader, secret_file: SecretFile, sample: MetricRequest, base_time: datetime
) -> None:
    password = secret_file("password", "pa:ss w0rd")
    proxy.require = {"Authorization": "Basic " + base64.b64encode(b"scaler:pa:ss w0rd").decode()}
    _ok(make_reader(proxy.url, basicAuth={"username": "scaler", "passwordFile": str(password)}), sample, base_time)
    error = _error(make_reader(proxy.url, basicAuth={"username": "other", "passwordFile": str(password)}), sample)
    assert isinstance(error, PermanentError) and error.status == 401 and "pa:ss" not in str(error)


def test_tenant_header_and_extra_params(
    proxy: Proxy, make_reader: Reader, sample: MetricRequest, base_time: datetime
) -> None:
    """Mimir/Cortex tenants by header; Thanos options as query parameters, on every request."""
    proxy.require = {"X-Scope-OrgID": "team-a"}
    reader = make_reader(
        proxy.url, headers={"X-Scope-OrgID": "team-a"}, extraQueryParams={"dedup": "true", "partial_response": "false"}
    )
    _ok(reader, sample, base_time)
    params = proxy.requests[-1].params
    assert params["dedup"] == "true" and params["partial_response"] == "false"
    assert params["time"] == f"{base_time.timestamp():.3f}" and params["timeout"] == "5"
    error = _error(make_reader(proxy.url, headers={"X-Scope-OrgID": "team-b"}), sample)
    assert isinstance(error, PermanentError) and error.status == 401


def test_answers_asked_for_uncompressed_unless_compression_is_on(
    proxy: Proxy, make_reader: Reader, sample: MetricRequest, base_time: datetime
) -> None:
    """Plain answers by default (compressing costs both sides CPU on a fast link); `compression: true` asks
    for gzip and reads a gzip answer; an Accept-Encoding of the user's own wins over both."""
    _ok(make_reader(proxy.url), sample, base_time)
    assert proxy.requests[-1].headers["Accept-Encoding"] == "identity"

    proxy.faults.append(Fault(rewrite=gzip.compress, headers={"Content-Encoding": "gzip"}))
    _ok(make_reader(proxy.url, compression=True), sample, base_time)
    assert "gzip" in proxy.requests[-1].headers["Accept-Encoding"].split(", ")
    assert not proxy.faults  # the answer read was the compressed one

    _ok(make_reader(proxy.url, headers={"accept-encoding": "deflate"}), sample, base_time)
    sent = {name.lower(): value for name, value in proxy.requests[-1].headers.items()}
    assert sent["accept-encoding"] == "deflate"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _tls_proxy(prometheus: PrometheusServer, pki: Pki, *, client_certs: bool) -> Proxy:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pki.server_cert, pki.server_key)
    if client_certs:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki.ca)
    return Proxy(prometheus.url, tls=context).start()


@pytest.fixture
def tls_proxy(prometheus: PrometheusServer, pki: Pki) -> Iterator[Proxy]:
    proxy = _tls_proxy(prometheus, pki, client_certs=False)
    yield proxy
    proxy.stop()


@pytest.fixture
def mtls_proxy(prometheus: PrometheusServer, pki: Pki) -> Iterator[Proxy]:
    proxy = _tls_proxy(prometheus, pki, client_certs=True)
    yield proxy
    proxy.stop()


def test_tls_with_ca(
    tls_proxy: Proxy, make_reader: Reader, pki: Pki, sample: MetricRequest, base_time: datetime
) -> None:
    _ok(make_reader(tls_proxy.url, tls={"caFile": str(pki.ca)}), sample, base_time)


def test_tls_unknown_ca_is_refused(tls_proxy: Proxy, make_reader: Reader, pki: Pki, sample: MetricRequest) -> None:
    """Verification is on by default: a server signed by another CA is a permanent TLS error."""
    for tls in ({"caFile": str(pki.other_ca)}, None):
        reader = make_reader(tls_proxy.url, **({"tls": tls} if tls else {}))
        error = _error(reader, sample)
        assert isinstance(error, PermanentError) and error.error_type == "tls"


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_tls_insecure_skip_verify(
    tls_proxy: Proxy, make_reader: Reader, sample: MetricRequest, base_time: datetime
) -> None:
    _ok(make_reader(tls_proxy.url, tls={"insecureSkipVerify": True}), sample, base_time)


def test_mutual_tls(
    mtls_proxy: Proxy, make_reader: Reader, pki: Pki, sample: MetricRequest, base_time: datetime
) -> None:
    tls = {"caFile": str(pki.ca), "certFile": str(pki.client_cert), "keyFile": str(pki.client_key)}
    _ok(make_reader(mtls_proxy.url, tls=tls), sample, base_time)
    error = _error(make_reader(mtls_proxy.url, tls={"caFile": str(pki.ca)}, retry={"maxAttempts": 1}), sample)
    assert isinstance(error, PermanentError) and error.error_type == "tls"  # no client certificate


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        pytest.param("Bearer tok/en+A==", "Bearer ***", id="a secret as is"),
        pytest.param("token=tok%2Fen%2BA%3D%3D&x", "token=***&x", id="a secret URL-encoded"),
        pytest.param("Authorization: Bearer%20tok%2Fen%2BA%3D%3D", "Authorization: Bearer%20***", id="after %20"),
        pytest.param("q=tok%2Fen%2BA%3D%3D", "q=***", id="URL-encoded with quote_plus or quote"),
        pytest.param("xtok/en+A==y", "x***y", id="a secret glued to letters is still a secret"),
        pytest.param("tenant prod, product prod.", "tenant ***, product ***.", id="a header value as a word"),
        pytest.param("X-Scope-OrgID%3A%20prod", "X-Scope-OrgID%3A%20***", id="a header value after an escape"),
        pytest.param("reproduce", "reproduce", id="a header value inside a word is left alone"),
        pytest.param("no credential here", "no credential here", id="nothing to scrub"),
    ],
)
def test_redactor(text: str, scrubbed: str) -> None:
    redact = Redactor(secrets=lambda: ["tok/en+A=="], words=lambda: ["prod"])
    assert redact(text) == scrubbed


def test_a_rotated_token_is_still_scrubbed(
    proxy: Proxy, make_reader: Reader, secret_file: SecretFile, sample: MetricRequest, base_time: datetime
) -> None:
    """After a rotation, an answer may still echo the token it was sent a moment ago: both are scrubbed."""
    token = secret_file("token", "old-token-value")
    reader = make_reader(proxy.url, bearerTokenFile=str(token))
    _ok(reader, sample, base_time)
    os.replace(secret_file("token.new", "new-token-value"), token)
    proxy.faults.append(Fault(status=400, body=b"saw old-token-value then new-token-value"))
    error = _error(reader, sample)
    assert isinstance(error, PermanentError) and error.message == "HTTP 400: saw *** then ***"
