"""The connection to one Prometheus-compatible server, configured for a control loop.

Built on prometheus-api-client's `PrometheusConnect` with a `requests.Session` we own: an explicit
timeout on every request, urllib3's hidden retry switched off (every failure surfaces at once), TLS from
the settings, credentials from files, custom headers and extra query parameters. Transient failures are
retried with tenacity inside a budget well below the sync period, honouring `Retry-After`; sleeping is a
constructor argument. Every library exception is translated here into the package's typed errors and none
escapes. The query text is in errors; credentials and response bodies of auth failures are not.
"""

from __future__ import annotations

import json
import random
import time as _time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import requests
import structlog
import tenacity
import urllib3
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from autoscaler.core.formats import parse_retry_after
from autoscaler.metrics.auth import BasicAuthFile, BearerTokenFileAuth
from autoscaler.metrics.context import Answer, Series
from autoscaler.metrics.errors import MetricsError, PermanentError, TransientError
from autoscaler.metrics.settings import PrometheusServer

log = structlog.get_logger(__name__)

# Retry only what a later attempt can fix; 408 is the server timing out the request.
_TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_MAX_ERROR_TEXT = 300


def _raise_for_status(response: requests.Response, *args: Any, **kwargs: Any) -> None:
    """A session response hook: turn a non-200 answer into a typed error before the library sees it."""
    status = response.status_code
    if status == 200:
        return
    body = response.content  # read it all, so the connection goes back to the pool
    if 300 <= status < 400:
        raise PermanentError(
            f"HTTP {status}: redirected; configure the final URL", error_type=f"http_{status}", status=status
        )
    if status in (401, 403):
        # The body may echo what was sent; say only what happened.
        raise PermanentError(f"HTTP {status}: not authorized", error_type=f"http_{status}", status=status)
    error_type, error = "", ""
    try:
        document = json.loads(body)
        if isinstance(document, dict):
            error_type = str(document.get("errorType", ""))
            error = str(document.get("error", ""))
    except ValueError:
        error = response.text[:_MAX_ERROR_TEXT].strip()
    detail = f"{error_type}: {error}" if error_type else error
    message = f"HTTP {status}" + (f": {detail}" if detail else "")
    if status in _TRANSIENT_STATUSES or status >= 500:
        retry_after = parse_retry_after(response.headers.get("Retry-After"), now=datetime.now(UTC))
        raise TransientError(message, status=status, retry_after_seconds=retry_after)
    raise PermanentError(message, error_type=error_type or f"http_{status}", status=status)


def answer_from_result(result: Any) -> Answer:
    """An `Answer` from the `data.result` the library returns (it drops `resultType`: read the shape)."""
    if isinstance(result, list) and len(result) == 2 and isinstance(result[0], int | float):
        # A scalar (or string) comes back as [time, "value"].
        return Answer(result_type="scalar", series=(Series({}, str(result[1]), float(result[0])),))
    if not isinstance(result, list):
        raise PermanentError("the answer is neither a vector nor a scalar", error_type="bad_response")
    series = []
    for item in result:
        if not isinstance(item, dict) or "metric" not in item:
            raise PermanentError("the answer holds a malformed series", error_type="bad_response")
        if "values" in item:
            return Answer(result_type="matrix", series=())
        sample_time, value = item["value"]
        series.append(Series(item["metric"], str(value), float(sample_time)))
    return Answer(result_type="vector", series=tuple(series))


class PrometheusClient:
    """Instant queries against one named server, with typed errors and bounded retries."""

    def __init__(
        self,
        name: str,
        server: PrometheusServer,
        *,
        pool_size: int = 8,
        sleep: Callable[[float], None] = _time.sleep,
    ) -> None:
        self.name = name
        self._server = server
        self._sleep = sleep
        session = requests.Session()
        session.headers.update(server.headers)
        if server.bearer_token_file is not None:
            session.auth = BearerTokenFileAuth(server.bearer_token_file)
        elif server.basic_auth is not None:
            session.auth = BasicAuthFile(server.basic_auth.username, server.basic_auth.password_file)
        tls = server.tls
        if tls is not None:
            session.verify = False if tls.insecure_skip_verify else (tls.ca_file or True)
            if tls.cert_file is not None and tls.key_file is not None:
                session.cert = (tls.cert_file, tls.key_file)
        session.hooks["response"].append(_raise_for_status)
        no_retry = Retry(total=0, raise_on_status=False)
        self._connect = PrometheusConnect(
            url=server.url, session=session, retry=no_retry, timeout=server.timeout_seconds
        )
        # The library mounts an adapter with a 10-connection pool; size it to our concurrency.
        session.mount(server.url, HTTPAdapter(max_retries=no_retry, pool_connections=1, pool_maxsize=pool_size))
        self._session = session

    def close(self) -> None:
        """Release the connection pool."""
        self._session.close()

    def query(self, promql: str, *, time: datetime, budget_seconds: float) -> Answer:
        """Run an instant query at `time`, retrying transient errors while the budget allows."""
        retry = self._server.retry
        budget = retry.budget_seconds if retry.budget_seconds is not None else budget_seconds

        def stop(state: tenacity.RetryCallState) -> bool:
            elapsed = state.seconds_since_start or 0.0
            return state.attempt_number >= retry.max_attempts or elapsed + state.upcoming_sleep > budget

        def before_sleep(state: tenacity.RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome is not None else None
            log.info(
                "prometheus_query_retrying",
                server=self.name,
                attempt=state.attempt_number,
                wait_seconds=round(state.upcoming_sleep, 3),
                error=str(error),
            )

        retrying = tenacity.Retrying(
            stop=stop,
            wait=_wait,
            retry=tenacity.retry_if_exception_type(TransientError),
            reraise=True,
            sleep=self._sleep,
            before_sleep=before_sleep,
        )
        try:
            return retrying(self._query_once, promql, time)
        except MetricsError as err:
            err.with_context(promql=promql, server=self.name)
            raise

    def _query_once(self, promql: str, time: datetime) -> Answer:
        timeout = self._server.timeout_seconds
        params: Mapping[str, str] = {
            **self._server.extra_query_params,
            "time": f"{time.timestamp():.3f}",
            # Plain seconds: Prometheus refuses fractional durations such as "0.3s" but takes "0.3".
            "timeout": f"{timeout:g}",
        }
        try:
            result = self._connect.custom_query(promql, params=dict(params), timeout=timeout)
        except MetricsError:
            raise
        except requests.exceptions.SSLError as err:
            raise PermanentError(f"TLS handshake failed ({_reason(err)})", error_type="tls") from err
        except requests.Timeout as err:
            raise TransientError(f"no answer within {timeout:g} s") from err
        except requests.ConnectionError as err:
            if _timed_out(err):  # with urllib3's retry off, a read timeout arrives as a ConnectionError
                raise TransientError(f"no answer within {timeout:g} s") from err
            raise TransientError(f"unreachable ({_reason(err)})") from err
        except requests.RequestException as err:
            raise TransientError(f"request failed ({type(err).__name__})") from err
        except PrometheusApiClientException as err:  # not expected: the hook raises first
            raise PermanentError("unexpected answer", error_type="bad_response") from err
        except (ValueError, KeyError, TypeError) as err:
            raise PermanentError("the answer is not Prometheus API JSON", error_type="bad_response") from err
        return answer_from_result(result)


def _wait(state: tenacity.RetryCallState) -> float:
    """Exponential backoff with jitter (0.2 s, 0.4 s, ... at most 2 s), or longer if Retry-After says so."""
    backoff = min(0.2 * 2 ** (state.attempt_number - 1), 2.0) + random.uniform(0.0, 0.1)
    error = state.outcome.exception() if state.outcome is not None else None
    retry_after = error.retry_after_seconds if isinstance(error, TransientError) else None
    return float(max(backoff, retry_after or 0.0))


def _timed_out(err: requests.ConnectionError) -> bool:
    """Whether a connection error wraps urllib3's read or connect timeout."""
    reason = getattr(err.args[0], "reason", None) if err.args else None
    if isinstance(reason, urllib3.exceptions.NewConnectionError):  # a subclass of ConnectTimeoutError
        return False
    return isinstance(reason, TimeoutError | urllib3.exceptions.TimeoutError)


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
