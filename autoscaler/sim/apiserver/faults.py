"""The fault injector: make the next N requests matching a method and a path fail, stall or drop.

A fault is checked before the request is routed, so an injected failure never changes stored state. Kinds:

- `status`: answer with that HTTP code and the real server's Status body for it (409 Conflict, 429
  TooManyRequests with Retry-After, 500 InternalError, 503 ServiceUnavailable, ...);
- `delay_seconds`: wait, then serve the request normally (or fail, when a status is given too);
- `drop`: close the connection without answering.

Paths are regular expressions searched in the URL path (`glob=True` for shell-style patterns matched against
the whole path); `query`, a regular expression searched in the query string, narrows further (`watch=true`).
`times=None` means every matching request until the fault is removed. `probability` (0..1, default 1) answers
only that share of the matching requests, drawn at random (from `seed` when given, for a repeatable run); a
request the draw passes over goes on to the next fault, or is served normally, and does not use up `times`.
"""

from __future__ import annotations

import fnmatch
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


@dataclass(slots=True)
class Fault:
    """One injected fault. `remaining` counts down; `hits` counts the requests it answered."""

    method: str
    path: str
    status: int | None = None
    delay_seconds: float = 0.0
    drop: bool = False
    retry_after_seconds: int | None = None
    message: str = ""
    remaining: int | None = 1
    glob: bool = False
    query: str = ""
    probability: float = 1.0
    hits: int = 0
    _pattern: re.Pattern[str] = field(init=False, repr=False)
    _query: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._pattern = re.compile(fnmatch.translate(self.path) if self.glob else self.path)
        self._query = re.compile(self.query)

    def matches(self, method: str, path: str, query: str = "") -> bool:
        if self.method not in ("*", method.upper()) or not self._query.search(query):
            return False
        return bool(self._pattern.match(path) if self.glob else self._pattern.search(path))

    def to_json(self) -> JSON:
        return {
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "delaySeconds": self.delay_seconds,
            "drop": self.drop,
            "retryAfterSeconds": self.retry_after_seconds,
            "message": self.message,
            "remaining": self.remaining,
            "glob": self.glob,
            "query": self.query,
            "probability": self.probability,
            "hits": self.hits,
        }


class FaultInjector:
    """The faults in force; the first one matching a request answers it (see the module docstring)."""

    def __init__(self, *, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._random = random.Random(seed)

    def add(
        self,
        path: str,
        *,
        method: str = "*",
        status: int | None = None,
        times: int | None = 1,
        delay_seconds: float = 0.0,
        drop: bool = False,
        retry_after_seconds: int | None = None,
        message: str = "",
        glob: bool = False,
        query: str = "",
        probability: float = 1.0,
    ) -> Fault:
        if status is None and not drop and delay_seconds <= 0:
            raise ValueError("a fault needs a status, a delay or drop=True")
        if not 0.0 < probability <= 1.0:
            raise ValueError(f"probability must be more than 0 and at most 1, not {probability!r}")
        fault = Fault(
            method=method.upper(),
            path=path,
            status=status,
            delay_seconds=delay_seconds,
            drop=drop,
            retry_after_seconds=retry_after_seconds,
            message=message,
            remaining=times,
            glob=glob,
            query=query,
            probability=probability,
        )
        with self._lock:
            self._faults.append(fault)
        return fault

    def add_json(self, spec: JSON) -> Fault:
        """A fault from its JSON form (the /_emulator/faults endpoint): the keys of `Fault.to_json`."""
        return self.add(
            str(spec["path"]),
            method=str(spec.get("method", "*")),
            status=spec.get("status"),
            times=spec.get("times", 1),
            delay_seconds=float(spec.get("delaySeconds", 0.0)),
            drop=bool(spec.get("drop", False)),
            retry_after_seconds=spec.get("retryAfterSeconds"),
            message=str(spec.get("message", "")),
            glob=bool(spec.get("glob", False)),
            query=str(spec.get("query", "")),
            probability=float(spec.get("probability", 1.0)),
        )

    def take(self, method: str, path: str, query: str = "") -> Fault | None:
        """The fault that answers this request, if any, counted down (and removed when used up)."""
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path, query):
                    if fault.probability < 1.0 and self._random.random() >= fault.probability:
                        continue
                    fault.hits += 1
                    if fault.remaining is not None:
                        fault.remaining -= 1
                        if fault.remaining <= 0:
                            self._faults.remove(fault)
                    return fault
        return None

    def remove(self, fault: Fault) -> None:
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def active(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)
