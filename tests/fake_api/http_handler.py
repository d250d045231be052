"""HTTP plumbing of the fake API: one thread per connection, keep-alive, chunked SSE.

Routes: ``POST /v1/messages``, ``POST /v1/messages/count_tokens``, ``GET /v1/models``,
``GET /v1/models/{id}``; anything else is a 404 ``not_found_error``. Every route needs
an ``x-api-key`` or ``authorization`` header (else 401) and the messages routes an
``anthropic-version`` header (else 400). What each route answers is decided in
:mod:`tests.fake_api.endpoints`; this module reads bodies, writes JSON or the SSE plan,
waits through stalls while watching the socket, and records disconnects.

The clouds' fakes (:mod:`tests.fake_api.vertex`, :mod:`tests.fake_api.bedrock`) are
subclasses: they route their own paths here and override the hooks marked *hook*
(who is let in, how an error and a stream event are written, the body the Messages
logic sees), so the same scripted replies drive all three.
"""

from __future__ import annotations

import json
import math
import select
import socket
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import endpoints
from .errors import DEFAULT_ERROR_MESSAGE, ERROR_STATUS, error_body
from .ids import rand_id
from .replies import Reply
from .sse import Emission, dumps, message_json, stream_plan

__all__ = ["HTTPServer", "Handler", "POLL_INTERVAL"]

POLL_INTERVAL = 0.015  # seconds between client-disconnect checks while waiting
_DELTA_TEXT_KEYS = ("text", "thinking", "partial_json")


class ClientGone(Exception):
    pass


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    request_queue_size = 64
    fake: Any  # the FakeAnthropicServer (set by it; typed loosely to keep imports one-way)

    def handle_error(self, request: Any, client_address: Any) -> None:  # quiet
        if isinstance(sys.exc_info()[1], (ConnectionError, ClientGone)):
            return  # client went away between requests: not a server bug
        if not self.fake._stopping.is_set():
            self.fake._record_error(traceback.format_exc())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HTTPServer
    server_version = "fake-anthropic/1.0"
    sys_version = ""
    stream_content_type = "text/event-stream; charset=utf-8"
    # TCP_NODELAY, as the real API's servers stream: each event leaves when it is written
    # (with Nagle a small write waits for the client's delayed ACK, up to 40 ms, on a
    # connection kept alive from an earlier request)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence
        pass

    def setup(self) -> None:
        super().setup()
        self.server.fake._register(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.fake._unregister(self.connection)

    # ---- low level ------------------------------------------------------------------

    def _read_body(self) -> bytes:
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise ClientGone()
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while True:  # trailers
                        t = self.rfile.readline(65537)
                        if t in (b"\r\n", b"\n", b""):
                            break
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline(65537)
        n = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(n) if n else b""
        if len(data) < n:
            raise ClientGone()
        return data

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        try:
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as e:
            raise ClientGone() from e

    def _write_chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError as e:
            raise ClientGone() from e

    def _wait(self, seconds: float) -> str:
        """Wait up to ``seconds`` while watching the socket.

        Returns "closed" (client went away), "stopped" (server stopping) or "timeout".
        """
        fake = self.server.fake
        sock = self.connection
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            if fake._stopping.is_set():
                return "stopped"
            remaining = deadline - time.monotonic()
            try:
                r, _, _ = select.select([sock], [], [], max(0.0, min(POLL_INTERVAL, remaining)))
            except (OSError, ValueError):
                return "stopped" if fake._stopping.is_set() else "closed"
            if fake._stopping.is_set():
                return "stopped"
            if r:
                try:
                    peek = sock.recv(1, socket.MSG_PEEK)
                except BlockingIOError:
                    peek = b"x"
                except OSError:
                    return "closed"
                if peek == b"":
                    return "closed"
                # The client sent unexpected bytes; don't spin on them.
                time.sleep(POLL_INTERVAL)
            if remaining <= 0:
                return "timeout"

    def _abort(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # ---- dispatch -------------------------------------------------------------------

    def _authorized(self, request_id: str, raw: bytes = b"") -> bool:
        """*hook*: whether the request may pass (else the refusal is sent)."""
        # The key as the SDK sends it: ``x-api-key``, or ``Authorization: Bearer KEY``.
        bearer = self.headers.get("authorization") or ""
        key = self.headers.get("x-api-key") or bearer.removeprefix("Bearer ").strip()
        if not (key or bearer):
            message = "x-api-key header is required"
        elif self.server.fake.refuses_key(key):
            message = "invalid x-api-key"
        else:
            return True
        self._send_json(401, error_body("authentication_error", message, request_id),
                        {"request-id": request_id})
        return False

    def _send_error(self, status: int, error_type: str, message: str, request_id: str | None,
                    headers: dict[str, str]) -> None:
        """*hook*: an error answer in the service's shape."""
        self._send_json(status, error_body(error_type, message, request_id), headers)

    def _write_event(self, name: str, payload: dict) -> None:
        """*hook*: one stream event on the wire (here: Server-Sent Events)."""
        self._write_chunk(f"event: {name}\ndata: {dumps(payload)}\n\n".encode())

    def _api_body(self, body: Any) -> Any:
        """*hook*: the body as the Messages logic reads it, or an ``endpoints.Rejection``
        (a cloud's body has its model in the path and its own fields)."""
        return body

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path.rstrip("/")
        try:
            raw = self._read_body()
        except ClientGone:
            self.close_connection = True
            return
        try:
            if path == "/v1/messages":
                self._handle_messages(raw)
            elif path == "/v1/messages/count_tokens":
                self._handle_count_tokens(raw)
            else:
                self._send_json(404, error_body("not_found_error", f"Not found: {self.path}"))
        except ClientGone:
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/")
        request_id = rand_id("req_")
        try:
            models = path == "/v1/models" or path.startswith("/v1/models/")
            if models and self.server.fake.models_api:
                if not self._authorized(request_id):
                    return
                self.server.fake._model_lookup(path)  # held while the test says so
                status, obj = endpoints.models(self.server.fake, path, parse_qs(parts.query))
                if status != 200:
                    obj = error_body(obj["type"], obj["message"], request_id)
                self._send_json(status, obj, {"request-id": request_id})
            else:
                self._send_json(404, error_body("not_found_error", f"Not found: {self.path}"))
        except ClientGone:
            self.close_connection = True

    def _parse(self, raw: bytes) -> tuple[Any, str | None]:
        try:
            return (json.loads(raw.decode("utf-8")) if raw else None), None
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None, "There was an error parsing the body of your request. Expected valid JSON."

    def _header_error(self, parse_error: str | None) -> str | None:
        """*hook*: what is wrong with the headers (or the JSON), if anything."""
        if parse_error is None and not self.headers.get("anthropic-version"):
            return "anthropic-version: header is required"
        return parse_error

    def _handle_count_tokens(self, raw: bytes) -> None:
        request_id = rand_id("req_")
        if not self._authorized(request_id):
            return
        body, parse_error = self._parse(raw)
        hdrs = {"request-id": request_id}
        err = self._header_error(parse_error)
        if err is not None:
            self._send_json(400, error_body("invalid_request_error", err, request_id), hdrs)
            return
        status, obj = endpoints.count_tokens(self.server.fake, body)
        if status != 200:
            obj = error_body(obj["type"], obj["message"], request_id)
        self._send_json(status, obj, hdrs)

    def _handle_messages(self, raw: bytes) -> None:
        fake = self.server.fake
        request_id = rand_id("req_")
        body, parse_error = self._parse(raw)
        idx = fake._record_request(body, {k.lower(): v for k, v in self.headers.items()})
        base_headers = {"request-id": request_id}
        if not self._authorized(request_id, raw):
            return
        err = self._header_error(parse_error)
        if len(raw) > endpoints.MAX_REQUEST_BYTES:  # checked before anything else, as the API
            outcome: Any = endpoints.Rejection(413, "request_too_large",
                                               DEFAULT_ERROR_MESSAGE["request_too_large"])
        elif err is not None:
            outcome = endpoints.Rejection.bad(err)
        else:
            body = self._api_body(body)
            outcome = (body if isinstance(body, endpoints.Rejection)
                       else endpoints.prepare_messages(fake, idx, body))
        if isinstance(outcome, endpoints.Rejection):
            if outcome.status == 400:
                fake._record_rejection(outcome.message)
            self._send_error(outcome.status, outcome.error_type, outcome.message, request_id,
                             base_headers)
            return
        reply = outcome.reply
        if outcome.emission is None:  # a scripted HTTP error
            self._send_error(reply.status, reply.error_type or "api_error",
                             reply.error_message or "error", request_id,
                             {**base_headers, **reply.headers})
            return
        try:
            if body.get("stream"):
                self._stream_reply(outcome, base_headers)
            else:
                self._json_reply(outcome, base_headers)
        except ClientGone:
            fake._record_disconnect(idx)
            self.close_connection = True

    # ---- replies --------------------------------------------------------------------

    def _json_reply(self, prepared: endpoints.Prepared, headers: dict[str, str]) -> None:
        reply: Reply = prepared.reply
        em: Emission = prepared.emission  # type: ignore[assignment]
        if reply.delay_between_events > 0:
            res = self._wait(reply.delay_between_events * 4)
            if res == "closed":
                raise ClientGone()
            if res == "stopped":
                return self._abort()
        if reply.end == "stall":
            res = self._wait(reply.stall_seconds)
            if res == "closed":
                raise ClientGone()
            if res == "stopped" or reply.stall_then == "close" or (
                reply.partial and reply.partial["type"] == "tool_use"
            ):
                return self._abort()
        if reply.end == "error_event":
            et = reply.error_type or "api_error"
            self._send_error(ERROR_STATUS.get(et, 500), et, reply.error_message or "error",
                             headers.get("request-id"), headers)
            return
        self._send_json(200, message_json(em), headers)
        self.server.fake._update_usage(prepared.usage_index, completed=True,
                                       output_tokens=em.output_tokens)

    def _stream_reply(self, prepared: endpoints.Prepared, headers: dict[str, str]) -> None:
        fake = self.server.fake
        reply: Reply = prepared.reply
        plan, tail = stream_plan(prepared.emission, reply)  # type: ignore[arg-type]
        self.send_response(200)
        self.send_header("Content-Type", self.stream_content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.flush()
        except OSError as e:
            raise ClientGone() from e

        first = True
        items = list(plan)
        streamed_chars = 0
        i = 0
        while i < len(items):
            item = items[i]
            i += 1
            if item[0] == "stall":
                res = self._wait(reply.stall_seconds)
                if res == "closed":
                    raise ClientGone()
                if res == "stopped" or reply.stall_then == "close":
                    return self._abort()
                items.extend(tail)  # finish the message
                continue
            _, name, payload = item
            if not first and reply.delay_between_events > 0:
                res = self._wait(reply.delay_between_events)
                if res == "closed":
                    raise ClientGone()
                if res == "stopped":
                    return self._abort()
            first = False
            self._write_event(name, payload)
            if name == "content_block_delta":
                delta = payload["delta"]
                streamed_chars += sum(len(delta.get(k, "")) for k in _DELTA_TEXT_KEYS)
                fake._update_usage(prepared.usage_index,
                                   streamed_output_tokens=math.ceil(streamed_chars / 4))
            elif name == "message_delta":
                fake._update_usage(prepared.usage_index, output_tokens=payload["usage"]["output_tokens"])
            elif name == "message_stop":
                fake._update_usage(prepared.usage_index, completed=True)
        self._write_chunk(b"")  # terminating zero-length chunk
