"""The HTTP layer: parse a request, apply an injected fault, route it, answer JSON, record it in the audit log.

It speaks HTTP/1.1 with keep-alive (Content-Length on every answer, chunked encoding for watches) and
knows nothing of objects beyond passing them between the wire and `Operations`. Errors are `ApiError`s
rendered as Status bodies. The emulator's own endpoints live under /_emulator (audit log, faults, tick),
outside every Kubernetes path, and are never subject to injected faults.
"""

from __future__ import annotations

import contextlib
import json
import threading
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from autoscaler.sim.apiserver import discovery, errors, tables
from autoscaler.sim.apiserver.audit import AuditLog, AuditRecord
from autoscaler.sim.apiserver.clock import Clock
from autoscaler.sim.apiserver.faults import FaultInjector
from autoscaler.sim.apiserver.lifecycle import PodLifecycle
from autoscaler.sim.apiserver.operations import Filter, Operations
from autoscaler.sim.apiserver.routing import Discovery, ResourcePath, route
from autoscaler.sim.apiserver.watch import stream, watch_options
from autoscaler.sim.http import QuietHTTPServer

JSON = dict[str, Any]
TABLE_CONTENT_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@dataclass(slots=True)
class App:
    """Everything a request handler needs, shared by all handler threads."""

    operations: Operations
    faults: FaultInjector
    audit: AuditLog
    lifecycle: PodLifecycle
    clock: Clock
    bookmark_interval_seconds: float = 1.0
    stopping: threading.Event = field(default_factory=threading.Event)


class HttpServer(QuietHTTPServer):
    """The emulator's server: knows its App and can close its open connections on stop."""

    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: App) -> None:
        super().__init__(address, Handler)
        self.app = app
        self.connections: set[Any] = set()
        self.connections_lock = threading.Lock()


@dataclass(slots=True)
class _Call:
    """What the audit log records about a request, filled in as the request is understood."""

    verb: str = ""
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: HttpServer
    _audit_pending: tuple[str, str, _Call, bool, bytes] | None = None
    _streaming = False  # a watch's headers are out: errors can only end the connection

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the client went away
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the audit log is the record of requests."""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    # -- one request ------------------------------------------------------------------------------------

    def _serve(self) -> None:
        app = self.server.app
        url = urlsplit(self.path)
        path, query = url.path, dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            length = max(int(self.headers.get("Content-Length") or 0), 0)
        except ValueError:
            length = 0
            self.close_connection = True  # the body cannot be delimited: read none, and end the connection
        raw = self.rfile.read(length) if length else b""
        self._streaming = False
        call = _Call(verb=self.command.lower())
        target: Discovery | ResourcePath | None = None
        try:
            target = route(path, app.operations.registry)
        except errors.ApiError:
            target = None
        if isinstance(target, ResourcePath):
            call = _Call(
                verb=target.verb(self.command, watch=query.get("watch") in ("true", "1")),
                group=target.rtype.group,
                version=target.rtype.version,
                resource=target.rtype.plural,
                subresource=target.subresource,
                namespace=target.namespace or "",
                name=target.name,
            )
        fault = None if path.startswith("/_emulator/") else app.faults.take(self.command, path, url.query)
        # The record is written just before the answer goes out, so a client that has its answer finds it.
        self._audit_pending = (
            None if path.startswith("/_emulator/") else (path, url.query, call, fault is not None, raw)
        )
        try:
            if fault is not None:
                if fault.delay_seconds > 0:
                    app.stopping.wait(fault.delay_seconds)
                if fault.drop:
                    self.close_connection = True
                    self._audit(0)
                    return
                if fault.status is not None:
                    if fault.status == 409 and isinstance(target, ResourcePath) and target.name and not fault.message:
                        raise errors.conflict(target.rtype.group, target.rtype.plural, target.name)
                    raise errors.for_code(fault.status, fault.message, retry_after_seconds=fault.retry_after_seconds)
            self._dispatch(path, query, raw, target, call)
        except errors.ApiError as err:
            if self._streaming:
                self.close_connection = True  # the answer has begun: nothing sensible can follow
                return
            headers = {}
            if err.retry_after_seconds is not None:
                headers["Retry-After"] = str(err.retry_after_seconds)
            self._send_json(err.code, err.status(), headers=headers)
        except ConnectionError:  # BrokenPipe, ConnectionReset, ConnectionAborted: the client went away
            self.close_connection = True
        except Exception as err:  # a bug in the emulator: answer as the real server answers a panic
            traceback.print_exc()
            if self._streaming:
                self.close_connection = True
                return
            failure = errors.for_code(500, f"{type(err).__name__}: {err}")
            with contextlib.suppress(OSError):
                self._send_json(500, failure.status())
        finally:
            self._audit(0)

    def _audit(self, code: int) -> None:
        """Record this request once (later calls do nothing); code 0 means no answer was sent."""
        if self._audit_pending is None:
            return
        path, query, call, injected, raw = self._audit_pending
        self._audit_pending = None
        authorization = self.headers.get("Authorization") or ""
        token = authorization[7:].strip() if authorization.lower().startswith("bearer ") else ""
        self.server.app.audit.append(
            AuditRecord(
                time=self.server.app.clock.now(),
                verb=call.verb,
                method=self.command,
                path=path,
                query=query,
                code=code,
                group=call.group,
                version=call.version,
                resource=call.resource,
                subresource=call.subresource,
                namespace=call.namespace,
                name=call.name,
                user_agent=self.headers.get("User-Agent") or "",
                token=token,
                user=self.headers.get("Impersonate-User") or self.headers.get("X-Remote-User") or "",
                content_type=(self.headers.get("Content-Type") or "").split(";")[0].strip(),
                injected=injected,
                request_body=raw[:65536].decode("utf-8", errors="replace"),
            )
        )

    def _dispatch(
        self, path: str, query: dict[str, str], raw: bytes, target: Discovery | ResourcePath | None, call: _Call
    ) -> int:
        app = self.server.app
        if path in ("/healthz", "/livez", "/readyz"):
            return self._send_bytes(200, b"ok", "text/plain; charset=utf-8")
        if path.startswith("/_emulator/"):
            return self._emulator(path, query, raw)
        if path.startswith("/openapi/"):
            return self._openapi(path)
        if target is None:
            route(path, app.operations.registry)  # raises the 404 of a served prefix, if that is the case
            raise errors.page_not_found()
        if isinstance(target, Discovery):
            return self._discovery(target)
        self._check_accept()
        return self._resource(target, query, raw, call)

    # -- discovery and other documents ------------------------------------------------------------------

    def _discovery(self, target: Discovery) -> int:
        registry = self.server.app.operations.registry
        if self.command != "GET":
            raise errors.method_not_allowed()
        body: JSON | None
        if target.kind == "version":
            body = discovery.version()
        elif target.kind == "api":
            host, port = self.server.server_address[:2]
            host = host.decode() if isinstance(host, bytes) else host
            body = discovery.core_versions(f"{host}:{port}")
        elif target.kind == "apis":
            body = discovery.group_list(registry)
        elif target.kind == "group":
            body = discovery.group(registry, target.group)
        else:
            body = discovery.resource_list(registry, target.group, target.version)
        if body is None:
            raise errors.page_not_found()
        return self._send_json(200, body)

    def _openapi(self, path: str) -> int:
        registry = self.server.app.operations.registry
        if path.rstrip("/") == "/openapi/v2":
            return self._send_json(200, discovery.openapi_v2())
        if path.rstrip("/") == "/openapi/v3":
            return self._send_json(200, discovery.openapi_v3(registry))
        document = discovery.openapi_v3_group(registry, path) if path.startswith("/openapi/v3/") else None
        if document is None:
            raise errors.page_not_found()
        return self._send_json(200, document)

    def _emulator(self, path: str, query: dict[str, str], raw: bytes) -> int:
        app = self.server.app
        if path == "/_emulator/audit":
            if self.command == "DELETE":
                app.audit.clear()
                return self._send_json(200, {"items": []})
            return self._send_json(200, {"items": app.audit.query(query)})
        if path == "/_emulator/faults":
            if self.command == "POST":
                try:
                    fault = app.faults.add_json(json.loads(raw))
                except (ValueError, KeyError, TypeError) as err:
                    raise errors.bad_request(f"invalid fault: {err}") from err
                return self._send_json(201, fault.to_json())
            if self.command == "DELETE":
                app.faults.clear()
            return self._send_json(200, {"items": [f.to_json() for f in app.faults.active()]})
        if path == "/_emulator/tick" and self.command == "POST":
            app.lifecycle.tick()
            return self._send_json(200, {"resourceVersion": str(app.operations.store.resource_version)})
        raise errors.page_not_found()

    # -- resources --------------------------------------------------------------------------------------

    def _check_accept(self) -> None:
        accept = self.headers.get("Accept") or ""
        if accept and not any(t in accept for t in ("json", "*/*", "application/*")):
            raise errors.not_acceptable(["application/json", "application/yaml"])

    def _wants_table(self) -> bool:
        return "as=Table" in (self.headers.get("Accept") or "")

    def _body(self, raw: bytes) -> Any:
        content_type = (self.headers.get("Content-Type") or "application/json").split(";")[0].strip()
        if "protobuf" in content_type:
            raise errors.unsupported_media_type(content_type, ["application/json", "application/yaml"])
        try:
            if "yaml" in content_type:
                return yaml.safe_load(raw)
            return json.loads(raw or b"null")
        except (ValueError, yaml.YAMLError) as err:
            raise errors.bad_request(f"the body of the request could not be decoded: {err}") from err

    def _resource(self, target: ResourcePath, query: dict[str, str], raw: bytes, call: _Call) -> int:
        ops = self.server.app.operations
        rtype, namespace, name, sub = target.rtype, target.namespace, target.name, target.subresource
        ns = namespace or ""
        verb = call.verb
        if verb == "get":
            obj = ops.get(rtype, ns, name, sub)
            if self._wants_table() and not sub:
                return self._send_table(
                    target, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, query
                )
            return self._send_json(200, obj)
        if verb == "list":
            listed = ops.list(
                rtype,
                namespace if namespace else None,
                label_selector=query.get("labelSelector", ""),
                field_selector=query.get("fieldSelector", ""),
                limit=_int(query, "limit"),
                continue_token=query.get("continue", ""),
                resource_version=query.get("resourceVersion", ""),
                resource_version_match=query.get("resourceVersionMatch", ""),
            )
            if self._wants_table():
                items = [dict(i, kind=rtype.kind, apiVersion=rtype.api_version) for i in listed["items"]]
                return self._send_table(target, items, listed["metadata"], query)
            return self._send_json(200, listed)
        if verb == "watch":
            return self._watch(target, query)
        dry_run = query.get("dryRun") == "All"
        if rtype.namespaced and namespace is None and verb in ("create", "deletecollection"):
            raise errors.method_not_allowed()
        if verb == "create":
            if name:
                raise errors.method_not_allowed()
            return self._send_json(201, ops.create(rtype, ns, self._body(raw), dry_run=dry_run))
        if verb == "update":
            return self._send_json(200, ops.update(rtype, ns, name, self._body(raw), sub, dry_run=dry_run))
        if verb == "patch":
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            body = self._body(raw) if content_type != "application/apply-patch+yaml" else None
            return self._send_json(200, ops.patch(rtype, ns, name, body, content_type, sub, dry_run=dry_run))
        if verb == "delete":
            if sub:
                raise errors.method_not_allowed()
            options = self._body(raw) if raw else None
            return self._send_json(200, ops.delete(rtype, ns, name, options, dry_run=dry_run))
        if verb == "deletecollection":
            return self._send_json(
                200,
                ops.delete_collection(
                    rtype, namespace or None, label_selector=query.get("labelSelector", ""),
                    field_selector=query.get("fieldSelector", ""),
                ),
            )  # fmt: skip
        raise errors.method_not_allowed()

    def _send_table(self, target: ResourcePath, items: list[JSON], meta: JSON, query: dict[str, str]) -> int:
        body = tables.table(
            target.rtype,
            items,
            now=self.server.app.clock.now(),
            include_object=query.get("includeObject", "Metadata"),
            list_meta=meta,
        )
        return self._send_json(200, body, content_type=TABLE_CONTENT_TYPE)

    def _watch(self, target: ResourcePath, query: dict[str, str]) -> int:
        app = self.server.app
        rtype = target.rtype
        initial_events, bookmarks = watch_options(query)
        resource_version = query.get("resourceVersion", "")
        if resource_version and not resource_version.isdigit():
            raise errors.bad_request(f'invalid resource version "{resource_version}"')
        selection = Filter.parse(rtype, query.get("labelSelector", ""), query.get("fieldSelector", ""))
        timeout = query.get("timeoutSeconds")
        events = stream(
            app.operations.store,
            rtype,
            target.namespace if target.namespace else None,
            selection,
            resource_version=resource_version,
            timeout_seconds=float(timeout) if timeout else None,
            bookmarks=bookmarks,
            bookmark_interval_seconds=app.bookmark_interval_seconds,
            initial_events=initial_events,
        )
        as_table = self._wants_table()
        self._audit(200)
        self.send_response(200)
        self.send_header("Content-Type", TABLE_CONTENT_TYPE if as_table else "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self._streaming = True
        for event in events:
            if as_table and event["type"] not in ("ERROR", "BOOKMARK"):
                event = {"type": event["type"], "object": tables.table(rtype, [event["object"]], now=app.clock.now())}
            self._chunk(json.dumps(event, separators=(",", ":")).encode() + b"\n")
        self._chunk(b"")
        return 200

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # -- writing answers --------------------------------------------------------------------------------

    def _send_json(
        self, code: int, body: JSON, *, content_type: str = "application/json", headers: dict[str, str] | None = None
    ) -> int:
        return self._send_bytes(code, json.dumps(body, separators=(",", ":")).encode(), content_type, headers)

    def _send_bytes(self, code: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> int:
        self._audit(code)
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        return code


def _int(query: dict[str, str], key: str) -> int:
    try:
        return int(query.get(key) or 0)
    except ValueError as err:
        raise errors.bad_request(f"invalid {key}: {query[key]!r}") from err
