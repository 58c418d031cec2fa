"""The client's exceptions become typed errors at the edge, with context attributes."""

from __future__ import annotations

import json

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from autoscaler.kube import errors
from autoscaler.kube.errors import RequestContext, translating

CTX = RequestContext(
    verb="update", resource="deployments", group="apps", subresource="scale", namespace="shop", name="web"
)


def _api_exception(status: int, reason: str = "", headers: dict[str, str] | None = None) -> ApiException:
    err = ApiException(status=status, reason=reason)
    err.body = json.dumps({"kind": "Status", "reason": reason, "message": f"{reason} happened", "code": status})
    err.headers = headers or {}
    return err


@pytest.mark.parametrize(
    ("status", "reason", "expected"),
    [
        pytest.param(404, "NotFound", errors.TargetNotFound, id="404 on the target"),
        pytest.param(403, "Forbidden", errors.Forbidden, id="403 asks to fix RBAC"),
        pytest.param(409, "Conflict", errors.Conflict, id="409 conflict"),
        pytest.param(410, "Expired", errors.Expired, id="410 expired"),
        pytest.param(429, "TooManyRequests", errors.Unavailable, id="429"),
        pytest.param(500, "InternalError", errors.Unavailable, id="500"),
        pytest.param(503, "ServiceUnavailable", errors.Unavailable, id="503"),
        pytest.param(422, "Invalid", errors.InvalidRequest, id="422 validation"),
        pytest.param(400, "BadRequest", errors.InvalidRequest, id="400"),
    ],
)
def test_api_exceptions_are_typed(status: int, reason: str, expected: type[errors.KubeError]) -> None:
    with pytest.raises(expected) as info, translating(CTX, target=True):
        raise _api_exception(status, reason)
    err = info.value
    assert err.status == status
    assert (err.verb, err.namespace, err.name) == ("update", "shop", "web")
    assert isinstance(err.__cause__, ApiException)
    assert isinstance(err, errors.TransientError | errors.PermanentError)


def test_forbidden_names_the_missing_permission() -> None:
    with pytest.raises(errors.Forbidden, match=r"allow update on deployments.apps/scale"), translating(CTX):
        raise _api_exception(403, "Forbidden")


def test_conflict_and_already_exists_are_told_apart() -> None:
    with pytest.raises(errors.Conflict) as info, translating(CTX):
        raise _api_exception(409, "AlreadyExists")
    assert info.value.already_exists


def test_urllib3_errors_are_unavailable() -> None:
    with pytest.raises(errors.Unavailable) as info, translating(CTX):
        raise urllib3.exceptions.ReadTimeoutError(None, "/x", "read timed out")  # type: ignore[arg-type]
    assert isinstance(info.value.__cause__, urllib3.exceptions.HTTPError)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param("2", 2.0, id="delay-seconds"),
        pytest.param("Thu, 01 Jan 1970 00:00:00 GMT", 0.0, id="an HTTP-date in the past is no wait"),
        pytest.param("soon", None, id="garbage is no hint"),
    ],
)
def test_retry_after_reaches_the_error(header: str, expected: float | None) -> None:
    """The header is read by the core's parser (tests/core/test_retry_after.py has its cases)."""
    with pytest.raises(errors.Unavailable) as info, translating(CTX):
        raise _api_exception(429, "TooManyRequests", {"Retry-After": header})
    assert info.value.retry_after_seconds == expected
