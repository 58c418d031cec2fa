"""The HTTP server base of the emulator and the load model's exporter."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class QuietHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer on daemon threads for which a client gone mid-answer is no error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (it gave up, timed out, or was stopped) is not an error of the
        server's; anything else is printed as socketserver does."""
        if isinstance(sys.exc_info()[1], ConnectionError):  # BrokenPipe, ConnectionReset, ConnectionAborted
            return
        super().handle_error(request, client_address)
