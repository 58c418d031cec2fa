"""Credentials read from files at request time: a bearer token and a basic-auth password.

Kubernetes rotates mounted Secrets by swapping the file, so the file is re-read whenever its identity
(inode, size, modification time) changes, and only then. A credential's text never leaves these objects:
errors name the setting, never the content.
"""

from __future__ import annotations

import base64
import os
import threading

import requests
from requests.auth import AuthBase

from autoscaler.metrics.errors import PermanentError


class _FileSecret:
    """The stripped content of a file, re-read when the file changes. Thread-safe."""

    def __init__(self, path: str, *, setting: str) -> None:
        self._path = path
        self._setting = setting
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._value = ""

    def get(self) -> str:
        try:
            stat = os.stat(self._path)
            stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            with self._lock:
                if stamp != self._stamp:
                    with open(self._path, encoding="utf-8") as handle:
                        self._value = handle.read().strip()
                    self._stamp = stamp
                value = self._value
        except (OSError, UnicodeDecodeError) as err:
            raise PermanentError(f"cannot read {self._setting} ({type(err).__name__})", error_type="config") from err
        if not value or any(c in value for c in "\r\n"):
            raise PermanentError(f"{self._setting} holds no usable credential", error_type="config")
        return value


class BearerTokenFileAuth(AuthBase):
    """`Authorization: Bearer <token>` with the token read from a file."""

    def __init__(self, path: str) -> None:
        self._token = _FileSecret(path, setting="bearerTokenFile")

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self._token.get()}"
        return request


class BasicAuthFile(AuthBase):
    """HTTP basic authentication with the password read from a file."""

    def __init__(self, username: str, password_file: str) -> None:
        self._username = username
        self._password = _FileSecret(password_file, setting="basicAuth.passwordFile")

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        pair = f"{self._username}:{self._password.get()}".encode()
        request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        return request
