"""A wall-clock bound on one HTTP request made through a `requests.Session`.

requests' `timeout` bounds each socket operation, not the request: a server that sends one byte every half
second keeps a request alive for as long as it likes, in the status line, the headers or the body. A
`Deadline` arms a timer for one request on the calling thread. The connections of a `DeadlineAdapter`'s
pools attach themselves to the deadline of the thread that uses them; when the timer fires, the socket in
use is shut down, which ends at once whatever read or write is blocked on it, and the request fails (the
caller sees `fired` and reports a timeout). A shut-down connection is closed by urllib3, never reused.
This module knows nothing of Prometheus and raises nothing of its own.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Any

import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_current = threading.local()


class Deadline:
    """`with Deadline(seconds) as deadline:` bounds the requests this thread makes inside the block."""

    def __init__(self, seconds: float) -> None:
        self.seconds = max(seconds, 0.0)
        self.fired = False
        self._lock = threading.Lock()
        self._armed = False
        self._connections: list[HTTPConnection] = []
        self._timer = threading.Timer(self.seconds, self._fire)
        self._timer.daemon = True
        self._timer.name = "prometheus-deadline"

    def __enter__(self) -> Deadline:
        self._armed = True
        _current.deadline = self
        self._timer.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.disarm()

    def disarm(self) -> None:
        """Stop watching (before the connection goes back to the pool, so the timer cannot hit a reused one)."""
        with self._lock:
            self._armed = False
            self._connections.clear()
        self._timer.cancel()
        if getattr(_current, "deadline", None) is self:
            _current.deadline = None

    def attach(self, connection: HTTPConnection) -> None:
        """Watch a connection this thread is about to use (past the deadline: shut it down at once)."""
        with self._lock:
            if not self._armed:
                return
            if connection not in self._connections:
                self._connections.append(connection)
            if self.fired:
                _shut_down(connection)

    def _fire(self) -> None:
        with self._lock:
            if not self._armed:
                return
            self.fired = True
            for connection in self._connections:
                _shut_down(connection)


def _shut_down(connection: HTTPConnection) -> None:
    sock = getattr(connection, "sock", None)
    if sock is None:
        return  # not connected yet: the connect timeout bounds it, and `attach` after connecting shuts it
    # The plain socket's shutdown, also for TLS: SSLSocket.shutdown would drop its SSL object under the
    # reading thread's feet. Shutting down wakes a blocked recv with end-of-file. Closed already: nothing to do.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _attach_current(connection: HTTPConnection) -> None:
    deadline = getattr(_current, "deadline", None)
    if deadline is not None:
        deadline.attach(connection)


class _AttachOnUse(HTTPConnection):
    """A connection that hands its socket to the calling thread's Deadline whenever it is used."""

    def connect(self) -> None:
        _attach_current(self)
        super().connect()
        _attach_current(self)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _attach_current(self)
        super().request(*args, **kwargs)


class _HTTPConnection(_AttachOnUse):
    pass


class _HTTPSConnection(_AttachOnUse, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class DeadlineAdapter(HTTPAdapter):
    """An `HTTPAdapter` whose connections can be cut off by the calling thread's `Deadline`."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, *args: Any, **kwargs: Any) -> urllib3.PoolManager:
        manager: urllib3.PoolManager = super().proxy_manager_for(*args, **kwargs)
        manager.pool_classes_by_scheme = _POOLS
        return manager
