"""Credentials read from files at request time (a bearer token, a basic-auth password), and the scrubber
that keeps every configured credential out of what is quoted or logged.

Kubernetes rotates mounted Secrets by swapping the file, so the file is re-read whenever its identity
(inode, size, modification time) changes, and only then. A credential's text never leaves these objects:
errors name the setting, never the content. A server may still echo what it was sent (a 400 quoting the
request's headers): `Redactor` replaces each credential, in every form it travels in, by `***`.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterable

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
        self._seen: tuple[str, ...] = ()  # the values read lately (after a rotation, the old one may be echoed)

    def get(self) -> str:
        try:
            stat = os.stat(self._path)
            stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            with self._lock:
                if stamp != self._stamp:
                    with open(self._path, encoding="utf-8") as handle:
                        self._value = handle.read().strip()
                    self._stamp = stamp
                    if self._value and self._value not in self._seen:
                        self._seen = (self._value, *self._seen)[:2]
                value = self._value
        except (OSError, UnicodeDecodeError) as err:
            raise PermanentError(f"cannot read {self._setting} ({type(err).__name__})", error_type="config") from err
        if not value or any(c in value for c in "\r\n"):
            raise PermanentError(f"{self._setting} holds no usable credential", error_type="config")
        return value

    def seen(self) -> tuple[str, ...]:
        """The values read so far (the newest first, at most two)."""
        with self._lock:
            return self._seen


class BearerTokenFileAuth(AuthBase):
    """`Authorization: Bearer <token>` with the token read from a file."""

    def __init__(self, path: str) -> None:
        self._token = _FileSecret(path, setting="bearerTokenFile")

    def secrets(self) -> list[str]:
        """The token's values sent so far."""
        return list(self._token.seen())

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self._token.get()}"
        return request


class BasicAuthFile(AuthBase):
    """HTTP basic authentication with the password read from a file."""

    def __init__(self, username: str, password_file: str) -> None:
        self._username = username
        self._password = _FileSecret(password_file, setting="basicAuth.passwordFile")

    def secrets(self) -> list[str]:
        """The passwords sent so far, and the header value each travelled in (base64 of `user:password`)."""
        forms = []
        for password in self._password.seen():
            encoded = base64.b64encode(f"{self._username}:{password}".encode()).decode("ascii")
            forms += [password, encoded, encoded.rstrip("=")]
        return forms

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        pair = f"{self._username}:{self._password.get()}".encode()
        request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        return request


class Redactor:
    """Replaces every configured credential by `***` in text that is quoted or logged.

    `secrets` (file credentials: a token, a password, the base64 pair it travels in) are replaced wherever
    they occur; `words` (header values, which may be short plain words such as a tenant) wherever they stand
    as a whole word, not glued to a letter or digit (a tenant `prod` leaves `product` alone; a URL escape
    such as `%20` before it counts as a boundary). Both are asked for at each call (file contents change on
    rotation), and each is also matched URL-encoded and JSON-escaped.
    """

    def __init__(
        self, *, secrets: Callable[[], Iterable[str]] = tuple, words: Callable[[], Iterable[str]] = tuple
    ) -> None:
        self._secrets = secrets
        self._words = words
        self._lock = threading.Lock()
        self._cache: tuple[tuple[frozenset[str], frozenset[str]], re.Pattern[str] | None] = (
            (frozenset(), frozenset()),
            None,
        )

    def __call__(self, text: str) -> str:
        pattern = self._pattern()
        return text if pattern is None or not text else pattern.sub("***", text)

    def _pattern(self) -> re.Pattern[str] | None:
        key = (frozenset(v for v in self._secrets() if v), frozenset(v for v in self._words() if v))
        with self._lock:
            known, pattern = self._cache
            if key == known:
                return pattern
        secrets, words = key
        alternatives = {re.escape(form): len(form) for value in secrets for form in _forms(value)}
        alternatives |= {_whole_word(form): len(form) for value in words for form in _forms(value)}
        ordered = sorted(alternatives, key=lambda regex: (-alternatives[regex], regex))  # longest first
        compiled = re.compile("|".join(ordered)) if ordered else None
        with self._lock:
            self._cache = (key, compiled)
        return compiled


def _forms(value: str) -> set[str]:
    """The forms a value travels in: as is, URL-encoded (both ways), JSON-escaped."""
    forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}
    forms |= {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return {form for form in forms if form}


def _whole_word(form: str) -> str:
    """A regex for `form` not glued to a letter or digit on a side where it begins or ends with one."""
    before = r"(?:(?<![A-Za-z0-9])|(?<=%[0-9A-Fa-f]{2}))" if form[0].isalnum() else ""
    after = r"(?![A-Za-z0-9])" if form[-1].isalnum() else ""
    return f"{before}{re.escape(form)}{after}"
