"""The Kubernetes layer's errors, and the one place where the client's exceptions are translated.

Everything above `autoscaler.kube` sees only these types: `TransientError` (retry, or wait for the next tick)
and `PermanentError` (fix the spec, the target or RBAC), each carrying what was being done as attributes
(`verb`, `resource`, `subresource`, `namespace`, `name`, `status`). The `kubernetes` client's `ApiException`
and urllib3's errors are caught by `translating(...)` at the call site of each request and never escape this
package. This module must not retry, log or sleep: it only names what went wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import urllib3.exceptions
from kubernetes.client.exceptions import ApiException

from autoscaler.core.formats import parse_retry_after


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a request was doing, for error messages and attributes (RBAC speaks verb + resource)."""

    verb: str
    resource: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    group: str = ""

    @property
    def resource_path(self) -> str:
        """`deployments/scale` or `prometheusautoscalers.autoscaler.dev/status`: how RBAC names it."""
        res = f"{self.resource}.{self.group}" if self.group else self.resource
        return f"{res}/{self.subresource}" if self.subresource else res

    def describe(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.verb} {self.resource_path} {where}".rstrip()


class KubeError(Exception):
    """Base class of every error the Kubernetes layer raises."""

    def __init__(self, message: str, *, context: RequestContext | None = None, status: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.context = context
        self.status = status

    @property
    def verb(self) -> str:
        return self.context.verb if self.context else ""

    @property
    def resource(self) -> str:
        return self.context.resource_path if self.context else ""

    @property
    def namespace(self) -> str:
        return self.context.namespace if self.context else ""

    @property
    def name(self) -> str:
        return self.context.name if self.context else ""


class TransientError(KubeError):
    """Worth retrying: the server or the network may answer differently soon."""


class PermanentError(KubeError):
    """Retrying cannot help: the request, the target or the permissions must change."""


class Unavailable(TransientError):
    """5xx, 429, a timeout or a refused/dropped connection. `retry_after_seconds` from Retry-After, if any."""

    def __init__(
        self,
        message: str,
        *,
        context: RequestContext | None = None,
        status: int = 0,
        retry_after_seconds: float | None = None,
    ) -> None:
        super().__init__(message, context=context, status=status)
        self.retry_after_seconds = retry_after_seconds


class Conflict(TransientError):
    """409 on a write: the object changed since it was read (stale resourceVersion) or already exists."""

    def __init__(
        self,
        message: str,
        *,
        context: RequestContext | None = None,
        status: int = 409,
        already_exists: bool = False,
    ) -> None:
        super().__init__(message, context=context, status=status)
        self.already_exists = already_exists


class Expired(TransientError):
    """410 Gone: a watch or list asked for a resourceVersion the server no longer has; list again."""


class NotFound(PermanentError):
    """404 on some object."""


class TargetNotFound(NotFound):
    """The scale target (or its kind, or its /scale subresource) does not exist."""


class Forbidden(PermanentError):
    """403: the daemon's ServiceAccount lacks a permission (fix RBAC, see docs/rbac.md); 401: bad credentials."""

    def __init__(self, message: str, *, context: RequestContext | None = None, status: int = 403) -> None:
        if status == 401:
            hint = " (the API server did not accept the credentials)"
        elif context is not None:
            hint = f" (fix RBAC: allow {context.verb} on {context.resource_path})"
        else:
            hint = ""
        super().__init__(message + hint, context=context, status=status)


class InvalidRequest(PermanentError):
    """A 4xx validation error (400, 405, 406, 415, 422...) or an answer this layer cannot read."""


def _status_body(err: ApiException) -> dict[str, Any]:
    body = err.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not body:
        return {}
    try:
        parsed = json.loads(body)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _header(err: ApiException, name: str) -> str | None:
    headers = err.headers or {}
    for key, value in dict(headers).items():
        if str(key).lower() == name.lower():
            return str(value)
    return None


def from_api_exception(err: ApiException, context: RequestContext, *, target: bool = False) -> KubeError:
    """The typed error for one HTTP error answer; `target=True` makes a 404 a `TargetNotFound`."""
    code = int(err.status or 0)
    status = _status_body(err)
    reason = str(status.get("reason") or err.reason or "")
    detail = str(status.get("message") or err.reason or f"HTTP {code}")
    message = f"{context.describe()}: {detail} ({code} {reason})".strip()
    if code == 404:
        cls = TargetNotFound if target else NotFound
        return cls(message, context=context, status=code)
    if code in (401, 403):
        return Forbidden(message, context=context, status=code)
    if code == 409:
        return Conflict(message, context=context, already_exists=reason == "AlreadyExists")
    if code == 410:
        return Expired(message, context=context, status=code)
    if code == 429 or code >= 500 or code == 0:
        # The edge reads the clock once, for an HTTP-date Retry-After; the parser itself never does.
        retry_after = parse_retry_after(_header(err, "Retry-After"), now=datetime.now(UTC))
        return Unavailable(message, context=context, status=code, retry_after_seconds=retry_after)
    return InvalidRequest(message, context=context, status=code)


@contextmanager
def translating(context: RequestContext, *, target: bool = False) -> Iterator[None]:
    """Turn the client's exceptions raised inside the block into this layer's typed errors."""
    try:
        yield
    except ApiException as err:
        raise from_api_exception(err, context, target=target) from err
    except urllib3.exceptions.HTTPError as err:
        # Timeouts, refused and dropped connections (MaxRetryError, ProtocolError, ReadTimeoutError...).
        raise Unavailable(f"{context.describe()}: {type(err).__name__}: {err}", context=context) from err
    except OSError as err:
        raise Unavailable(f"{context.describe()}: {type(err).__name__}: {err}", context=context) from err
    except ValueError as err:
        # An answer that is not the JSON we expect (json.JSONDecodeError is a ValueError).
        raise InvalidRequest(f"{context.describe()}: unreadable answer: {err}", context=context) from err
