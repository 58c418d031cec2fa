"""API errors as the real kube-apiserver words them, and the `Status` bodies that carry them.

Every failure the emulator answers is an `ApiError`: the HTTP code, the `reason` of the Kubernetes API
conventions (NotFound, AlreadyExists, Conflict, Invalid, BadRequest, Expired, ...), the message in the real
server's wording, and `details`. This module only builds values; it never writes to a socket.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]


class ApiError(Exception):
    """A failed API request, rendered as a `metav1.Status` body by `status()`."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: JSON | None = None,
        retry_after_seconds: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.retry_after_seconds = retry_after_seconds

    def status(self) -> JSON:
        body: JSON = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def qualified(group: str, plural: str) -> str:
    """The group-qualified resource name the real server prints: `deployments.apps`, `pods`."""
    return f"{plural}.{group}" if group else plural


def _details(group: str, plural: str, name: str) -> JSON:
    details: JSON = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = plural
    return details


def not_found(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{qualified(group, plural)} "{name}" not found',
        details=_details(group, plural, name),
    )


def already_exists(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified(group, plural)} "{name}" already exists',
        details=_details(group, plural, name),
    )


def conflict(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(group, plural)} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again",
        details=_details(group, plural, name),
    )


def invalid(group: str, kind: str, name: str, causes: list[tuple[str, str]]) -> ApiError:
    """422 Invalid; `causes` are (field path, detail) pairs, e.g. ("spec.replicas", "Invalid value: ...")."""
    kind_name = f"{kind}.{group}" if group else kind
    joined = ", ".join(f"{field}: {detail}" for field, detail in causes)
    if len(causes) > 1:
        joined = "[" + joined + "]"
    details: JSON = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [
        {"reason": _cause_reason(detail), "message": detail, "field": field} for field, detail in causes
    ]
    return ApiError(422, "Invalid", f'{kind_name} "{name}" is invalid: {joined}', details=details)


def _cause_reason(detail: str) -> str:
    if detail.startswith("Required value"):
        return "FieldValueRequired"
    if detail.startswith("Unsupported value"):
        return "FieldValueNotSupported"
    return "FieldValueInvalid"


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        details={},
    )


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
        details={},
    )


def not_acceptable(accepted: list[str]) -> ApiError:
    return ApiError(
        406,
        "NotAcceptable",
        f"only the following media types are accepted: {', '.join(accepted)}",
        details={},
    )


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def page_not_found() -> ApiError:
    """The server's answer to a path outside every API group: a 404 without details."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", details={})


def for_code(code: int, message: str, *, retry_after_seconds: int | None = None) -> ApiError:
    """A Status for an injected fault: the reason and wording the real server uses for that code."""
    if code == 409:
        return ApiError(409, "Conflict", message or "Operation cannot be fulfilled: injected conflict")
    if code == 429:
        seconds = retry_after_seconds if retry_after_seconds is not None else 1
        return ApiError(
            429,
            "TooManyRequests",
            message or "Too many requests, please try again later.",
            details={"retryAfterSeconds": seconds},
            retry_after_seconds=seconds,
        )
    if code == 500:
        text = message or "injected fault"
        return ApiError(
            500,
            "InternalError",
            f"Internal error occurred: {text}",
            details={"causes": [{"message": text}]},
        )
    if code == 503:
        return ApiError(
            503,
            "ServiceUnavailable",
            message or "The server is currently unable to handle the request",
            retry_after_seconds=retry_after_seconds,
        )
    if code == 504:
        return ApiError(504, "Timeout", message or "The server was unable to return a response in time.")
    reasons = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 410: "Expired"}
    return ApiError(code, reasons.get(code, "Unknown"), message or f"injected fault {code}")
