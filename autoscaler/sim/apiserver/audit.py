"""The audit log: one record per request, as the real server's audit events record them (simplified).

Each `AuditRecord` has the time (from the emulator's clock), the Kubernetes verb (get, list, watch, create,
update, patch, delete, deletecollection; the lower-case method for discovery and other paths), the API
group, resource, subresource, namespace and name, the response code, whether a fault was injected, who
asked (the User-Agent, the bearer token, the `Impersonate-User` header) and the request body as sent. Tests
read it through `AuditLog.records()` or, from another process, through `GET /_emulator/audit`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from autoscaler.sim.apiserver.clock import micro_timestamp

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class AuditRecord:
    time: datetime
    verb: str
    method: str
    path: str
    query: str
    code: int
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    user_agent: str = ""
    token: str = ""
    user: str = ""
    content_type: str = ""
    injected: bool = False
    request_body: str = ""  # the first 64 KiB, as sent

    def body_json(self) -> Any:
        """The request body decoded as JSON (None when there was none)."""
        return json.loads(self.request_body) if self.request_body else None

    def to_json(self) -> JSON:
        out = asdict(self)
        out["time"] = micro_timestamp(self.time)
        return out


_FILTERS = ("verb", "method", "group", "resource", "subresource", "namespace", "name", "user_agent", "token", "user")


class AuditLog:
    """A bounded, thread-safe list of `AuditRecord`s."""

    def __init__(self, *, limit: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._records: deque[AuditRecord] = deque(maxlen=limit)

    def append(self, record: AuditRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self, **where: Any) -> list[AuditRecord]:
        """Records whose fields equal every keyword given, oldest first: `records(verb="patch", code=409)`."""
        unknown = set(where) - set(_FILTERS) - {"code", "injected"}
        if unknown:
            raise TypeError(f"unknown audit fields: {sorted(unknown)}")
        with self._lock:
            records = list(self._records)
        return [r for r in records if all(getattr(r, k) == v for k, v in where.items())]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def query(self, params: dict[str, str]) -> list[JSON]:
        """The /_emulator/audit endpoint: string filters from the query string (`code` as an integer)."""
        where: dict[str, Any] = {k: v for k, v in params.items() if k in _FILTERS}
        if "code" in params:
            where["code"] = int(params["code"])
        if "injected" in params:
            where["injected"] = params["injected"].lower() in ("1", "true")
        return [r.to_json() for r in self.records(**where)]
