"""A loopback HTTP(S) proxy in front of Prometheus that logs every request, checks credentials and can
answer with scripted faults: a status with headers and body (or one built from the request's headers), a
delay, the real answer rewritten, a body or head trickled byte by byte, a connection dropped mid-body.
"""

from __future__ import annotations

import http.client
import ssl
import sys
import threading
import urllib.parse
from collections.abc import Callable, Mapping
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
    """A scripted answer for the next request whose PromQL contains `match` (any request if empty); it is
    used once unless `repeat`.

    `delay_seconds` waits before answering. With a `status`, the proxy answers it with `headers` and `body`
    (or `echo(request_headers)`) instead of forwarding; without one it forwards and answers Prometheus's
    real answer, passed through `rewrite` (bytes to bytes). `trickle_seconds` sends the body one byte per
    interval (and the status line and headers too with `trickle_head`); `drop_after` sends only that many
    bytes of a body whose Content-Length promises all of it, then closes the connection.
    """

    status: int = 0
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_seconds: float = 0.0
    match: str = ""
    repeat: bool = False
    echo: Callable[[Mapping[str, str]], bytes] | None = None
    rewrite: Callable[[bytes], bytes] | None = None
    trickle_seconds: float = 0.0
    trickle_head: bool = False
    drop_after: int | None = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away mid-answer (a cut-off query does) is expected, not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


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

        self._server = _Server(("127.0.0.1", 0), Handler)
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
            query = params.get("query", "")
            fault = next((f for f in self.faults if f.match in query), None)
            if fault is not None and not fault.repeat:
                self.faults.remove(fault)
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
        if fault is not None and fault.delay_seconds and self._release.wait(fault.delay_seconds):
            return  # stopping
        if fault is not None and fault.status:
            payload = fault.echo(dict(handler.headers.items())) if fault.echo is not None else fault.body
            self._answer(handler, fault.status, payload, fault.headers, fault)
            return
        connection = http.client.HTTPConnection(self.upstream.hostname or "", self.upstream.port, timeout=30)
        try:
            connection.request(handler.command, handler.path, body=body or None)
            response = connection.getresponse()
            status, payload = response.status, response.read()
        except OSError:
            return  # the client went away (a timeout test)
        finally:
            connection.close()
        if fault is not None and fault.rewrite is not None:
            payload = fault.rewrite(payload)
        headers = {"Content-Type": "application/json", **(fault.headers if fault is not None else {})}
        self._answer(handler, status, payload, headers, fault)

    def _answer(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        headers: Mapping[str, str],
        fault: Fault | None = None,
    ) -> None:
        declared = len(body)
        if fault is not None and fault.drop_after is not None:
            body = body[: fault.drop_after]
            handler.close_connection = True
        lines = [f"HTTP/1.1 {status} {http.client.responses.get(status, 'Status')}"]
        lines += [f"{name}: {value}" for name, value in headers.items()] + [f"Content-Length: {declared}"]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        interval = fault.trickle_seconds if fault is not None else 0.0
        try:
            if interval and fault is not None and fault.trickle_head:
                self._trickle(handler, head, interval)
            else:
                handler.wfile.write(head)
            if interval:
                self._trickle(handler, body, interval)
            else:
                handler.wfile.write(body)
        except OSError:
            handler.close_connection = True  # the client timed out and closed the connection

    def _trickle(self, handler: BaseHTTPRequestHandler, data: bytes, interval: float) -> None:
        """One byte per `interval`, until done, the client leaves (OSError) or the proxy stops."""
        for index in range(len(data)):
            handler.wfile.write(data[index : index + 1])
            handler.wfile.flush()
            if self._release.wait(interval):
                raise OSError("the proxy is stopping")
