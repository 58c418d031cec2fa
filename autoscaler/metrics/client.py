"""The connection to one Prometheus-compatible server, configured for a control loop.

Instant queries over a `requests.Session` we own: TLS from the settings, credentials from files, custom
headers and extra query parameters, urllib3's hidden retry switched off (every failure surfaces at once).
Each attempt is bounded by wall-clock time, not per socket operation: `timeoutSeconds`, cut shorter by the
caller's deadline (the pass's), enforced by a `Deadline` that shuts the socket down when it fires, so a
server that trickles bytes cannot hold a tick. Transient failures are retried with tenacity while the retry
budget and the deadline allow, honouring `Retry-After`; sleeping is a constructor argument. Answers are read
strictly (`wire.py`): a body that is not the API's JSON is a `BadResponseError`, never retried. Every
library exception is translated here into the package's typed errors. The query text is in errors;
credentials never are: bodies of auth failures are not quoted, and every other text from the server goes
through the `Redactor` before it is cut or put into a message or a log line.
"""

from __future__ import annotations

import json
import random
import time as _time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import requests
import structlog
import tenacity
import urllib3
from requests.utils import DEFAULT_ACCEPT_ENCODING
from urllib3.util.retry import Retry

from autoscaler.core.formats import parse_retry_after
from autoscaler.metrics.auth import BasicAuthFile, BearerTokenFileAuth, Redactor
from autoscaler.metrics.context import Answer
from autoscaler.metrics.deadline import Deadline, DeadlineAdapter
from autoscaler.metrics.errors import (
    BadResponseError,
    MetricsError,
    PermanentError,
    QueryTimeoutError,
    TransientError,
)
from autoscaler.metrics.settings import PrometheusServer
from autoscaler.metrics.wire import read_answer

log = structlog.get_logger(__name__)
# What is retried. One object for every query: tenacity's condition holds itself in a reference cycle.
_RETRY_TRANSIENT = tenacity.retry_if_exception_type(TransientError)

# Retry only what a later attempt can fix; 408 is the server timing out the request.
_TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_MAX_ERROR_TEXT = 300
_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class _Bounds:
    """One query's limits: when it must be over (monotonic), and how long the caller gave it."""

    deadline: float
    deadline_seconds: float


class PrometheusClient:
    """Instant queries against one named server, with typed errors, wall-clock bounds and bounded retries."""

    def __init__(
        self,
        name: str,
        server: PrometheusServer,
        *,
        pool_size: int = 8,
        sleep: Callable[[float], None] = _time.sleep,
        monotonic: Callable[[], float] = _time.monotonic,
    ) -> None:
        self.name = name
        self._server = server
        self._sleep = sleep
        self._monotonic = monotonic
        self._url = f"{server.url}/api/v1/query"
        session = requests.Session()
        # requests asks for gzip by default; plain answers cost both sides less CPU on a fast link.
        session.headers["Accept-Encoding"] = DEFAULT_ACCEPT_ENCODING if server.compression else "identity"
        session.headers.update(server.headers)
        auth: BearerTokenFileAuth | BasicAuthFile | None = None
        if server.bearer_token_file is not None:
            auth = BearerTokenFileAuth(server.bearer_token_file)
        elif server.basic_auth is not None:
            auth = BasicAuthFile(server.basic_auth.username, server.basic_auth.password_file)
        session.auth = auth
        tls = server.tls
        if tls is not None:
            session.verify = False if tls.insecure_skip_verify else (tls.ca_file or True)
            if tls.cert_file is not None and tls.key_file is not None:
                session.cert = (tls.cert_file, tls.key_file)
        no_retry = Retry(total=0, raise_on_status=False)
        session.mount(server.url, DeadlineAdapter(max_retries=no_retry, pool_connections=1, pool_maxsize=pool_size))
        self._session = session
        headers = tuple(server.headers.values())
        # Every configured credential: the token or password (and its base64 pair), and every header value
        # (an API key, a tenant): the settings cannot tell a secret header from a plain one.
        self.redact = Redactor(secrets=auth.secrets if auth is not None else tuple, words=lambda: headers)

    def close(self) -> None:
        """Release the connection pool."""
        self._session.close()

    def query(self, promql: str, *, time: datetime, budget_seconds: float, deadline_seconds: float) -> Answer:
        """Run an instant query at `time`: retries stop at the retry budget, and the call returns within
        `deadline_seconds` (plus the moment it takes to close a cut-off connection) whatever the server does."""
        started = self._monotonic()
        bounds = _Bounds(deadline=started + deadline_seconds, deadline_seconds=deadline_seconds)
        retry = self._server.retry
        budget = retry.budget_seconds if retry.budget_seconds is not None else budget_seconds

        def stop(state: tenacity.RetryCallState) -> bool:
            if state.attempt_number >= retry.max_attempts:
                return True
            # Time spent so far: the clock, or the waits asked for when `sleep` does not really sleep.
            elapsed = max(self._monotonic() - started, state.idle_for)
            next_start = elapsed + state.upcoming_sleep
            return next_start > budget or next_start >= deadline_seconds

        def before_sleep(state: tenacity.RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome is not None else None
            log.info(
                "prometheus_query_retrying",
                server=self.name,
                attempt=state.attempt_number,
                wait_seconds=round(state.upcoming_sleep, 3),
                error=self.redact(str(error)),
            )

        retrying = tenacity.Retrying(
            stop=stop,
            wait=_wait,
            retry=_RETRY_TRANSIENT,
            reraise=True,
            sleep=self._sleep,
            before_sleep=before_sleep,
        )
        try:
            return retrying(self._attempt, promql, time, bounds)
        except MetricsError as err:
            # Messages are built from scrubbed text; scrub once more as a whole, in case a piece slipped in.
            err.message = self.redact(err.message)
            err.args = (err.message,)
            err.with_context(promql=promql, server=self.name)
            raise
        finally:
            retrying.iter_state.reset()  # breaks tenacity's reference cycle (see kube/retry.py)

    def _attempt(self, promql: str, time: datetime, bounds: _Bounds) -> Answer:
        """One HTTP request, over by `timeoutSeconds` or the deadline, whichever comes first."""
        begun = self._monotonic()
        remaining = bounds.deadline - begun
        if remaining <= 0:
            raise QueryTimeoutError(
                f"not sent: no time left before the pass's deadline ({bounds.deadline_seconds:.3g} s from the "
                "query's start)",
                scope="pass",
                limit_seconds=bounds.deadline_seconds,
            )
        timeout = min(self._server.timeout_seconds, remaining)
        by_request = self._server.timeout_seconds <= remaining
        params: Mapping[str, str] = {
            **self._server.extra_query_params,
            "query": promql,
            "time": f"{time.timestamp():.3f}",
            # Plain seconds: Prometheus refuses fractional durations such as "0.3s" but takes "0.3".
            "timeout": f"{max(round(timeout, 3), 0.001):g}",
        }
        with Deadline(timeout) as deadline:
            try:
                status, headers, body = self._exchange(
                    params, timeout=timeout, cutoff=begun + timeout, deadline=deadline
                )
            except MetricsError:
                raise
            except Exception as err:
                if not (deadline.fired or isinstance(err, _CutOff) or _timed_out(err)):
                    typed = _translate(err)
                    if typed is None:
                        raise  # not a known failure of an exchange: the pass's last-line guard reports it
                    raise typed from _detached(err)
                if by_request:
                    scope, limit = "request", timeout
                    message = f"no complete answer within {timeout:.3g} s (timeoutSeconds)"
                else:
                    scope, limit = "pass", bounds.deadline_seconds
                    message = f"no complete answer before the pass's deadline ({limit:.3g} s from the query's start)"
                raise QueryTimeoutError(message, scope=scope, limit_seconds=limit) from _detached(err)
        if status != 200:
            raise self._status_error(status, headers, body)
        return read_answer(body, quote=self.redact)

    def _exchange(
        self, params: Mapping[str, str], *, timeout: float, cutoff: float, deadline: Deadline
    ) -> tuple[int, Mapping[str, str], bytes]:
        """Send the request and read the whole body, checking the clock between chunks."""
        response = self._session.get(
            self._url,
            params=dict(params),
            timeout=(timeout, timeout),
            stream=True,
            allow_redirects=False,
            # Explicitly: a request-level `verify` left unset lets REQUESTS_CA_BUNDLE override the session's CA.
            verify=self._session.verify,
        )
        try:
            chunks = []
            size = 0
            limit = self._server.max_response_bytes
            for chunk in response.iter_content(_CHUNK_BYTES):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise BadResponseError(
                        f"the answer is larger than maxResponseBytes ({limit} bytes, after decompression)"
                    )
                if self._monotonic() >= cutoff:
                    raise _CutOff
            return response.status_code, response.headers, b"".join(chunks)
        finally:
            deadline.disarm()  # before the connection can go back to the pool
            response.close()

    def _status_error(self, status: int, headers: Mapping[str, str], body: bytes) -> MetricsError:
        """The typed error of a non-200 answer."""
        if 300 <= status < 400:
            return PermanentError(
                f"HTTP {status}: redirected; configure the final URL", error_type=f"http_{status}", status=status
            )
        if status in (401, 403):
            # The body may echo what was sent; say only what happened.
            return PermanentError(f"HTTP {status}: not authorized", error_type=f"http_{status}", status=status)
        error_type, error = "", ""
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            error = body.decode("utf-8", "replace")
        else:
            if isinstance(document, dict):
                kind = document.get("errorType")
                error_type = kind if isinstance(kind, str) and kind.isidentifier() and len(kind) <= 40 else ""
                error = str(document.get("error", ""))
            else:
                error = body.decode("utf-8", "replace")
        detail = self.redact(f"{error_type}: {error}" if error_type else error).strip()
        if len(detail) > _MAX_ERROR_TEXT:
            detail = detail[:_MAX_ERROR_TEXT] + "..."
        message = f"HTTP {status}" + (f": {detail}" if detail else "")
        if status in _TRANSIENT_STATUSES or status >= 500:
            # The edge reads the clock once, for an HTTP-date Retry-After; the parser itself never does.
            retry_after = parse_retry_after(headers.get("Retry-After"), now=datetime.now(UTC))
            return TransientError(message, status=status, retry_after_seconds=retry_after)
        return PermanentError(message, error_type=error_type or f"http_{status}", status=status)


class _CutOff(Exception):
    """The clock passed the attempt's cutoff between two chunks of the body."""


def _translate(err: Exception) -> MetricsError | None:
    """The typed error for a failed exchange that no deadline cut off; None if it is no known failure."""
    if isinstance(err, requests.exceptions.SSLError):
        return PermanentError(f"TLS handshake failed ({_reason(err)})", error_type="tls")
    if isinstance(err, requests.exceptions.ContentDecodingError):
        return BadResponseError("the answer's content encoding (gzip) is broken")
    if isinstance(err, requests.exceptions.ChunkedEncodingError):
        # The connection closed before the answer was complete: the network's fault, worth asking again.
        return TransientError("the connection closed before the answer was complete")
    if isinstance(err, requests.ConnectionError):
        return TransientError(f"unreachable ({_reason(err)})")
    if isinstance(err, requests.RequestException):
        return TransientError(f"request failed ({type(err).__name__})")
    return None


def _wait(state: tenacity.RetryCallState) -> float:
    """Exponential backoff with jitter (0.2 s, 0.4 s, ... at most 2 s), or longer if Retry-After says so."""
    backoff = min(0.2 * 2 ** (state.attempt_number - 1), 2.0) + random.uniform(0.0, 0.1)
    error = state.outcome.exception() if state.outcome is not None else None
    retry_after = error.retry_after_seconds if isinstance(error, TransientError) else None
    return float(max(backoff, retry_after or 0.0))


def _timed_out(err: Exception) -> bool:
    """Whether a requests error is a connect or read timeout (with urllib3's retry off, some arrive wrapped)."""
    if isinstance(err, requests.Timeout):
        return True
    if not isinstance(err, requests.ConnectionError):
        return False
    reason = getattr(err.args[0], "reason", None) if err.args else None
    if isinstance(reason, urllib3.exceptions.NewConnectionError):  # a subclass of ConnectTimeoutError
        return False
    return isinstance(reason, TimeoutError | urllib3.exceptions.TimeoutError)


def _detached(err: Exception) -> Exception:
    """`err` without the request and response requests keeps on it (their headers hold the credentials)."""
    if isinstance(err, requests.RequestException):
        err.request = None
        err.response = None
    return err


def _reason(err: Exception) -> str:
    """A short cause for a connection error, without URLs (which might carry a query string)."""
    text = str(err)
    for known in (
        "Connection refused",
        "Name or service not known",
        "timed out",
        "certificate verify failed",
    ):
        if known in text:
            return known
    return type(err).__name__
