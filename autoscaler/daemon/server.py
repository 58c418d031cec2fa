"""The daemon's HTTP endpoints on the standard library's ThreadingHTTPServer.

`/metrics` (the Prometheus text format), `/healthz` (the loop is ticking), `/readyz` (specs loaded, caches
synced, leader or healthy standby), `/debug/snapshots` (the flight recorder as JSON, `?target=ns/name` for
one target: 400 when malformed, 404 when unknown); anything else is 404. Each answer comes from a callable
the daemon passes in: this module only serves, it must not compute health nor read the cluster.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import structlog

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Check:
    """A health answer: ok, and why not (or what is fine)."""

    ok: bool
    why: str


@dataclass(frozen=True, slots=True)
class Endpoints:
    """What the server answers with."""

    metrics: Callable[[], tuple[bytes, str]]
    healthz: Callable[[], Check]
    readyz: Callable[[], Check]
    snapshots: Callable[[str | None], Any]


class RequestError(Exception):
    """An answer callable's refusal of a request: its HTTP status (400, 404) and the reason, one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_address(text: str) -> tuple[str, int]:
    """ "host:port" ("0.0.0.0:8080", "[::1]:0", ":8080") into (host, port); ValueError naming the text."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"listen address {text!r} is not host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


def address_family(host: str) -> socket.AddressFamily:
    """AF_INET6 for an IPv6 literal ("::1", "::"), else AF_INET (an IPv4 address or a name)."""
    try:
        return socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:
        return socket.AF_INET


def format_address(host: str, port: int) -> str:
    """ "host:port", with an IPv6 host in brackets ("[::1]:8080"), as listenAddress spells it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    endpoints: Endpoints


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's signature
        pass  # every request would be a line: /metrics and the probes are polled all day

    def _send(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _check(self, check: Check) -> None:
        self._send(200 if check.ok else 503, (check.why + "\n").encode(), "text/plain; charset=utf-8")

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        endpoints = self.server.endpoints
        try:
            if url.path == "/metrics":
                body, content_type = endpoints.metrics()
                self._send(200, body, content_type)
            elif url.path == "/healthz":
                self._check(endpoints.healthz())
            elif url.path == "/readyz":
                self._check(endpoints.readyz())
            elif url.path == "/debug/snapshots":
                targets = parse_qs(url.query).get("target")
                target = targets[0] if targets else None
                body = json.dumps(endpoints.snapshots(target), indent=1).encode()
                self._send(200, body, "application/json")
            else:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
        except RequestError as err:
            self._send(err.status, (err.message + "\n").encode(), "text/plain; charset=utf-8")
        except Exception as err:  # one bad answer must not take the server down
            log.exception("http_handler_failed", path=url.path)
            self._send(500, f"internal error: {type(err).__name__}\n".encode(), "text/plain; charset=utf-8")

    do_HEAD = do_GET


class HttpServer:
    """The endpoints on `address` ("host:port"; port 0 picks a free one), served from a daemon thread."""

    def __init__(self, address: str, endpoints: Endpoints) -> None:
        host, port = parse_address(address)
        server = _Server6 if address_family(host) == socket.AF_INET6 else _Server
        self._server = server((host, port), _Handler)
        self._server.endpoints = endpoints
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The bound (host, port)."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
        return f"http://{format_address(host, port)}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, name="http", daemon=True)
        self._thread.start()
        host, port = self.address
        log.info("http_listening", address=format_address(host, port))

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
            self._thread = None
        self._server.server_close()
