"""A loopback HTTP(S) proxy in front of Prometheus that logs every request, checks credentials and can
answer with scripted faults (a status with headers and body, or a delay) before forwarding.
"""

from __future__ import annotations

import http.client
import ssl
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Recorded:
    """One request that reached the proxy."""

    method: str
    path: str
    params: Mapping[str, str]
    headers: Mapping[str, str]


@dataclass(frozen=True)
class Fault:
    """A scripted answer: `delay_seconds` before forwarding, or a status with headers and body instead."""

    status: int = 0
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_seconds: float = 0.0


class Proxy:
    """Start with `start()`, stop with `stop()`. `require` maps header names to the only values accepted."""

    def __init__(self, upstream: str, *, tls: ssl.SSLContext | None = None) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.require: dict[str, str] = {}
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.delay_seconds = 0.0  # added to every request, to measure concurrency
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                proxy._handle(self)

            def do_POST(self) -> None:
                proxy._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})

    def start(self) -> Proxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def queries(self) -> list[str]:
        """The PromQL of every query request logged so far."""
        with self._lock:
            return [r.params.get("query", "") for r in self.requests if r.path.endswith("/api/v1/query")]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urllib.parse.urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        params = dict(urllib.parse.parse_qsl(parts.query))
        if handler.command == "POST" and body:
            params.update(urllib.parse.parse_qsl(body.decode()))
        with self._lock:
            self.requests.append(Recorded(handler.command, parts.path, params, dict(handler.headers.items())))
            fault = self.faults.pop(0) if self.faults else None
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_seconds:
                self._release.wait(self.delay_seconds)
            self._respond(handler, fault, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _respond(self, handler: BaseHTTPRequestHandler, fault: Fault | None, body: bytes) -> None:
        for name, value in self.require.items():
            if handler.headers.get(name) != value:
                self._answer(handler, 401, b"unauthorized", {})
                return
        if fault is not None and fault.delay_seconds:
            self._release.wait(fault.delay_seconds)
        elif fault is not None:
            self._answer(handler, fault.status, fault.body, fault.headers)
            return
        connection = http.client.HTTPConnection(self.upstream.hostname or "", self.upstream.port, timeout=30)
        try:
            connection.request(handler.command, handler.path, body=body or None)
            response = connection.getresponse()
            self._answer(handler, response.status, response.read(), {"Content-Type": "application/json"})
        except OSError:
            return  # the client went away (a timeout test)
        finally:
            connection.close()

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        try:
            handler.send_response(status)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            pass  # the client timed out and closed the connection
