"""A scripted fake of the Anthropic Messages API, served over real HTTP on loopback.

The real ``anthropic`` SDK talks to it unchanged::

    with FakeAnthropicServer() as srv:
        srv.enqueue(Reply.text("hello world", chunk=5))
        client = anthropic.Anthropic(base_url=srv.url, api_key="test", max_retries=0)
        ...

Only the standard library is used (``http.server`` with one thread per connection).
The server only ever binds 127.0.0.1.

Scripting
---------
Each ``POST /v1/messages`` that passes validation takes the next :class:`Reply` from
the queue (or a copy of ``default_reply``, ``Reply.text("ok")``, when it is empty).
Requests rejected by validation (400) do **not** consume a queued reply: invalid
requests never "reach the model".

With ``"stream": true`` the reply is sent as Server-Sent Events exactly like the real
API (``message_start``, ``content_block_start``, ``ping``, ``content_block_delta``
with ``text_delta`` / ``input_json_delta``, ``content_block_stop``, ``message_delta``,
``message_stop``) using HTTP/1.1 chunked transfer encoding (keep-alive). Without
``stream`` the whole message is returned as JSON.

Observation
-----------
``requests`` (parsed JSON bodies, in order; index = request index),
``request_headers``, ``rejections`` (400 validation messages), ``disconnects``
(``(request_index, time.monotonic())`` when the client went away during a stalled or
streaming reply), ``wait_for_requests`` and ``wait_for_disconnect``.
"""

from __future__ import annotations

import copy
import json
import random
import select
import socket
import string
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import urlsplit

from .validate import validate_messages

__all__ = ["FakeAnthropicServer", "Reply"]

POLL_INTERVAL = 0.015  # seconds between client-disconnect checks while waiting

_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

_DEFAULT_ERROR_MESSAGE = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out",
    "overloaded_error": "Overloaded",
}

_ALNUM = string.ascii_letters + string.digits


def _rand_id(prefix: str) -> str:
    return prefix + "01" + "".join(random.choice(_ALNUM) for _ in range(22))


def new_tool_use_id() -> str:
    """A fresh id in the real API's format (``toolu_01...``)."""
    return _rand_id("toolu_")


def _split(s: str, n: int) -> list[str]:
    n = max(1, int(n))
    return [s[i : i + n] for i in range(0, len(s), n)] or []


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def error_body(error_type: str, message: str, request_id: str | None = None) -> dict:
    body: dict[str, Any] = {"type": "error", "error": {"type": error_type, "message": message}}
    if request_id:
        body["request_id"] = request_id
    return body


# --------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer. Build it with the class-method factories.

    ``blocks`` are complete content blocks (``{"type": "text", "text": ...}`` or
    ``{"type": "tool_use", "id", "name", "input"}``). ``partial`` is an optional last
    block that is left unfinished (text, or tool_use with ``partial_json``) before the
    ``end`` behaviour kicks in:

    * ``"complete"``   - normal message end (``message_delta`` + ``message_stop``);
    * ``"stall"``      - stop sending bytes until the client disconnects, the server
      stops, or ``stall_seconds`` pass; then ``stall_then`` = ``"close"`` (drop the
      connection without finishing the chunked body) or ``"finish"`` (finish the
      message normally, the partial text becoming a complete block);
    * ``"error_event"`` - send an SSE ``event: error`` (mid-stream error) and end the
      stream. Non-streaming requests get the equivalent HTTP error instead.
    """

    kind: str = "message"  # "message" | "error"
    blocks: list[dict] = field(default_factory=list)
    partial: dict | None = None
    end: str = "complete"
    stop_reason: str | None = "end_turn"
    chunk: int = 5
    json_chunk: int = 8
    delay_between_events: float = 0.0
    stall_seconds: float = 30.0
    stall_then: str = "close"
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    model: str | None = None  # default: echo the request's model
    output_tokens: int | None = None

    # ---- factories ---------------------------------------------------------------

    @classmethod
    def text(
        cls,
        text: str,
        chunk: int = 5,
        *,
        delay_between_events: float = 0.0,
        stop_reason: str = "end_turn",
        model: str | None = None,
    ) -> "Reply":
        """A plain text answer streamed as ``text_delta`` pieces of ``chunk`` chars."""
        return cls(
            blocks=[{"type": "text", "text": text}],
            chunk=chunk,
            delay_between_events=delay_between_events,
            stop_reason=stop_reason,
            model=model,
        )

    @classmethod
    def slow_text(cls, text: str, chunk: int = 5, delay: float = 0.05, **kw: Any) -> "Reply":
        """``Reply.text`` with ``delay`` seconds between SSE events."""
        return cls.text(text, chunk, delay_between_events=delay, **kw)

    @classmethod
    def message(
        cls,
        content: Sequence[dict],
        *,
        stop_reason: str = "end_turn",
        chunk: int = 5,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Any sequence of text / tool_use blocks (tool_use ``id`` is filled if missing)."""
        blocks = []
        for b in content:
            b = dict(b)
            if b.get("type") == "tool_use":
                b.setdefault("id", new_tool_use_id())
                if b["id"] is None:
                    b["id"] = new_tool_use_id()
            blocks.append(b)
        return cls(
            blocks=blocks,
            stop_reason=stop_reason,
            chunk=chunk,
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def tool_use(
        cls,
        name: str,
        input: dict,
        *,
        text_before: str | None = None,
        id: str | None = None,
        chunk: int = 5,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """One tool_use block (optionally after a text block); ``stop_reason`` tool_use."""
        return cls.tool_uses(
            [(name, input, id)],
            text_before=text_before,
            chunk=chunk,
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def tool_uses(
        cls,
        calls: Iterable[tuple],
        *,
        text_before: str | None = None,
        chunk: int = 5,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Several tool_use blocks in one message: ``[(name, input), (name, input, id), ...]``."""
        blocks: list[dict] = []
        if text_before:
            blocks.append({"type": "text", "text": text_before})
        for call in calls:
            name, inp = call[0], call[1]
            tid = call[2] if len(call) > 2 and call[2] else new_tool_use_id()
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        return cls(
            blocks=blocks,
            stop_reason="tool_use",
            chunk=chunk,
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def stall(
        cls,
        after_text: str = "",
        seconds: float = 30.0,
        *,
        then: str = "close",
        chunk: int = 5,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Stream ``after_text`` (if any), then send nothing until the client disconnects
        or ``seconds`` pass; then ``then="close"`` drops the connection mid-body and
        ``then="finish"`` completes the message normally."""
        if then not in ("close", "finish"):
            raise ValueError("then must be 'close' or 'finish'")
        return cls(
            partial={"type": "text", "text": after_text} if after_text else None,
            end="stall",
            stall_seconds=seconds,
            stall_then=then,
            chunk=chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def half_tool_use(
        cls,
        name: str,
        partial_json: str,
        *,
        text_before: str | None = None,
        id: str | None = None,
        seconds: float = 30.0,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Start a tool_use block, send ``partial_json`` as input_json_delta pieces, then
        stall until the client disconnects (or ``seconds`` pass: connection dropped)."""
        blocks = [{"type": "text", "text": text_before}] if text_before else []
        return cls(
            blocks=blocks,
            partial={
                "type": "tool_use",
                "id": id or new_tool_use_id(),
                "name": name,
                "partial_json": partial_json,
            },
            end="stall",
            stall_seconds=seconds,
            stall_then="close",
            stop_reason="tool_use",
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def stream_error(
        cls,
        after_text: str = "",
        error_type: str = "overloaded_error",
        message: str | None = None,
        *,
        chunk: int = 5,
    ) -> "Reply":
        """Start streaming (optionally some text), then send an SSE ``error`` event, like
        the real API does when it gets overloaded mid-stream. The SDK raises an
        ``APIStatusError`` (status is the HTTP 200 of the stream) from the iteration."""
        return cls(
            partial={"type": "text", "text": after_text} if after_text else None,
            end="error_event",
            error_type=error_type,
            error_message=message or _DEFAULT_ERROR_MESSAGE.get(error_type, error_type),
            chunk=chunk,
        )

    @classmethod
    def error(
        cls,
        status: int,
        error_type: str,
        message: str | None = None,
        *,
        retry_after: float | int | None = None,
        headers: dict[str, str] | None = None,
    ) -> "Reply":
        """An HTTP error with the Anthropic error JSON body (and ``retry-after`` header)."""
        hdrs = dict(headers or {})
        if retry_after is not None:
            hdrs["retry-after"] = str(retry_after)
        return cls(
            kind="error",
            status=status,
            error_type=error_type,
            error_message=message or _DEFAULT_ERROR_MESSAGE.get(error_type, error_type),
            headers=hdrs,
        )

    # ---- helpers -----------------------------------------------------------------

    @property
    def tool_ids(self) -> list[str]:
        """Ids of the tool_use blocks of this reply (complete ones, then the partial one)."""
        ids = [b["id"] for b in self.blocks if b.get("type") == "tool_use"]
        if self.partial and self.partial.get("type") == "tool_use":
            ids.append(self.partial["id"])
        return ids

    def copy(self) -> "Reply":
        return replace(self, blocks=copy.deepcopy(self.blocks), partial=copy.deepcopy(self.partial),
                       headers=dict(self.headers))

    def _complete_blocks(self) -> list[dict]:
        """Content of the final message (for non-streaming / 'finish' replies)."""
        blocks = copy.deepcopy(self.blocks)
        if self.partial and self.partial["type"] == "text":
            blocks.append({"type": "text", "text": self.partial["text"]})
        return blocks

    def _output_tokens(self, blocks: list[dict]) -> int:
        if self.output_tokens is not None:
            return self.output_tokens
        n = 0
        for b in blocks:
            if b["type"] == "text":
                n += len(b["text"])
            elif b["type"] == "tool_use":
                n += len(_dumps(b.get("input", {}))) + len(b.get("name", ""))
        return max(1, n // 4)


# ---- SSE plan ---------------------------------------------------------------------

# plan items: ("event", name, payload) | ("stall",) | ("tail",) marker for finish


def _block_events(index: int, block: dict, reply: Reply, *, finished: bool) -> list[tuple]:
    ev: list[tuple] = []
    if block["type"] == "text":
        ev.append(("event", "content_block_start",
                   {"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}))
        for piece in _split(block["text"], reply.chunk):
            ev.append(("event", "content_block_delta",
                       {"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": piece}}))
    elif block["type"] == "tool_use":
        ev.append(("event", "content_block_start",
                   {"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"],
                                      "input": {}}}))
        raw = block["partial_json"] if "partial_json" in block else json.dumps(block.get("input", {}),
                                                                                ensure_ascii=False)
        if raw == "{}":
            raw = ""
        # like the real API, the first input_json_delta is empty
        ev.append(("event", "content_block_delta",
                   {"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": ""}}))
        for piece in _split(raw, reply.json_chunk):
            ev.append(("event", "content_block_delta",
                       {"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}))
    else:
        raise ValueError(f"fake server cannot stream block type {block['type']!r}")
    if finished:
        ev.append(("event", "content_block_stop", {"type": "content_block_stop", "index": index}))
    return ev


def _message_start(msg_id: str, model: str, input_tokens: int) -> tuple:
    return ("event", "message_start", {
        "type": "message_start",
        "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 1,
                      "service_tier": "standard"},
        },
    })


def _message_end(reply: Reply, output_tokens: int, stop_reason: str | None) -> list[tuple]:
    return [
        ("event", "message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                    "usage": {"output_tokens": output_tokens}}),
        ("event", "message_stop", {"type": "message_stop"}),
    ]


def _stream_plan(reply: Reply, model: str, input_tokens: int) -> tuple[list[tuple], list[tuple]]:
    """Return (events before the end behaviour, events after it: tail for 'finish')."""
    msg_id = _rand_id("msg_")
    plan: list[tuple] = [_message_start(msg_id, model, input_tokens)]
    index = 0
    pinged = False
    for block in reply.blocks:
        ev = _block_events(index, block, reply, finished=True)
        plan.append(ev[0])
        if not pinged:
            plan.append(("event", "ping", {"type": "ping"}))
            pinged = True
        plan.extend(ev[1:])
        index += 1
    tail: list[tuple] = []
    if reply.partial is not None:
        ev = _block_events(index, reply.partial, reply, finished=False)
        plan.append(ev[0])
        if not pinged:
            plan.append(("event", "ping", {"type": "ping"}))
            pinged = True
        plan.extend(ev[1:])
        tail.append(("event", "content_block_stop", {"type": "content_block_stop", "index": index}))
    if not pinged:
        plan.append(("event", "ping", {"type": "ping"}))

    out_tokens = reply._output_tokens(reply._complete_blocks())
    if reply.end == "complete":
        plan.extend(_message_end(reply, out_tokens, reply.stop_reason))
    elif reply.end == "stall":
        plan.append(("stall",))
        tail.extend(_message_end(reply, out_tokens, reply.stop_reason))
    elif reply.end == "error_event":
        plan.append(("event", "error", error_body(reply.error_type or "api_error",
                                                  reply.error_message or "error")))
        tail = []
    else:
        raise ValueError(f"unknown reply end {reply.end!r}")
    return plan, tail


# --------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------


class _ClientGone(Exception):
    pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    request_queue_size = 64
    fake: "FakeAnthropicServer"

    def handle_error(self, request: Any, client_address: Any) -> None:  # quiet
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, _ClientGone)):
            return  # client went away between requests: not a server bug
        if not self.fake._stopping.is_set():
            import traceback

            with self.fake._lock:
                self.fake._errors.append(traceback.format_exc())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    server_version = "fake-anthropic/1.0"
    sys_version = ""

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
                    raise _ClientGone()
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
            raise _ClientGone()
        return data

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = _dumps(obj).encode()
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
            raise _ClientGone() from e

    def _write_chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as e:
            raise _ClientGone() from e
        except OSError as e:
            raise _ClientGone() from e

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

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path.rstrip("/")
        try:
            raw = self._read_body()
        except _ClientGone:
            self.close_connection = True
            return
        try:
            if path == "/v1/messages":
                self._handle_messages(raw)
            elif path == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
            else:
                self._send_json(404, error_body("not_found_error", f"Not found: {self.path}"))
        except _ClientGone:
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        try:
            self._send_json(404, error_body("not_found_error", f"Not found: {self.path}"))
        except _ClientGone:
            self.close_connection = True

    def _handle_messages(self, raw: bytes) -> None:
        fake = self.server.fake
        request_id = _rand_id("req_")
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
            parse_error = "There was an error parsing the body of your request. Expected valid JSON."
        else:
            parse_error = None
        idx = fake._record_request(body, {k.lower(): v for k, v in self.headers.items()})
        base_headers = {"request-id": request_id}

        # --- auth / headers / validation -----------------------------------------------
        if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
            self._send_json(401, error_body("authentication_error", "x-api-key header is required",
                                            request_id), base_headers)
            return
        err = parse_error
        if err is None and not self.headers.get("anthropic-version"):
            err = "anthropic-version: header is required"
        if err is None and fake.validate:
            err = validate_messages(body, allow_assistant_last=fake.allow_assistant_last)
        elif err is None and not isinstance(body, dict):
            err = "Request body must be a JSON object"
        if err is not None:
            fake._record_rejection(err)
            self._send_json(400, error_body("invalid_request_error", err, request_id), base_headers)
            return

        reply = fake._next_reply(body)
        stream = bool(body.get("stream"))
        model = reply.model or body.get("model") or "claude-fake"
        input_tokens = max(1, len(raw) // 4)

        if reply.kind == "error":
            status = reply.status
            self._send_json(status,
                            error_body(reply.error_type or "api_error", reply.error_message or "error",
                                       request_id),
                            {**base_headers, **reply.headers})
            return

        try:
            if stream:
                self._stream_reply(idx, reply, model, input_tokens, base_headers)
            else:
                self._json_reply(idx, reply, model, input_tokens, base_headers)
        except _ClientGone:
            fake._record_disconnect(idx)
            self.close_connection = True

    # ---- replies --------------------------------------------------------------------

    def _json_reply(self, idx: int, reply: Reply, model: str, input_tokens: int,
                    headers: dict[str, str]) -> None:
        if reply.delay_between_events > 0:
            res = self._wait(reply.delay_between_events * 4)
            if res == "closed":
                raise _ClientGone()
            if res == "stopped":
                return self._abort()
        if reply.end == "stall":
            res = self._wait(reply.stall_seconds)
            if res == "closed":
                raise _ClientGone()
            if res == "stopped" or reply.stall_then == "close" or (
                reply.partial and reply.partial["type"] == "tool_use"
            ):
                return self._abort()
        if reply.end == "error_event":
            et = reply.error_type or "api_error"
            self._send_json(_ERROR_STATUS.get(et, 500),
                            error_body(et, reply.error_message or "error", headers.get("request-id")),
                            headers)
            return
        blocks = reply._complete_blocks()
        stop = reply.stop_reason
        msg = {
            "id": _rand_id("msg_"), "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": reply._output_tokens(blocks),
                      "service_tier": "standard"},
        }
        self._send_json(200, msg, headers)

    def _stream_reply(self, idx: int, reply: Reply, model: str, input_tokens: int,
                      headers: dict[str, str]) -> None:
        plan, tail = _stream_plan(reply, model, input_tokens)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.flush()
        except OSError as e:
            raise _ClientGone() from e

        first = True
        items = list(plan)
        i = 0
        while i < len(items):
            item = items[i]
            i += 1
            if item[0] == "stall":
                res = self._wait(reply.stall_seconds)
                if res == "closed":
                    raise _ClientGone()
                if res == "stopped" or reply.stall_then == "close":
                    return self._abort()
                items.extend(tail)  # finish the message
                continue
            _, name, payload = item
            if not first and reply.delay_between_events > 0:
                res = self._wait(reply.delay_between_events)
                if res == "closed":
                    raise _ClientGone()
                if res == "stopped":
                    return self._abort()
            first = False
            self._write_chunk(f"event: {name}\ndata: {_dumps(payload)}\n\n".encode())
        self._write_chunk(b"")  # terminating zero-length chunk


# --------------------------------------------------------------------------------------
# Public server object
# --------------------------------------------------------------------------------------


class FakeAnthropicServer:
    """Fake Messages API on ``http://127.0.0.1:<free port>``. Context manager.

    ``validate`` (default True) enables strict request validation (see
    :mod:`tests.fake_api.validate`); ``allow_assistant_last`` allows a final assistant
    message (prefill); ``default_reply`` is used (copied) when the queue is empty.
    """

    def __init__(
        self,
        *,
        validate: bool = True,
        allow_assistant_last: bool = False,
        default_reply: Reply | None = None,
    ) -> None:
        self.validate = validate
        self.allow_assistant_last = allow_assistant_last
        self.default_reply = default_reply or Reply.text("ok")
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._queue: deque[Reply | Callable[[dict], Reply]] = deque()
        self._requests: list[Any] = []
        self._request_headers: list[dict[str, str]] = []
        self._disconnects: list[tuple[int, float]] = []
        self._rejections: list[str] = []
        self._errors: list[str] = []
        self._conns: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ------------------------------------------------------------------

    def start(self) -> "FakeAnthropicServer":
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name=f"fake-anthropic-{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        httpd = self._httpd
        if httpd is None:
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
            threads = list(self._threads)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        deadline = time.monotonic() + timeout
        if self._thread is not None:
            self._thread.join(max(0.0, deadline - time.monotonic()))
        for t in threads:
            if t is not threading.current_thread():
                t.join(max(0.0, deadline - time.monotonic()))
        self._httpd = None
        self._thread = None

    close = stop

    def __enter__(self) -> "FakeAnthropicServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- scripting ------------------------------------------------------------------

    def enqueue(self, *replies: Reply | Callable[[dict], Reply]) -> None:
        """Queue replies, used in order by valid ``POST /v1/messages`` requests.

        An item may also be a callable ``f(request_body) -> Reply`` for replies that
        depend on the request. A ``Reply`` carries fixed tool_use ids, so enqueueing
        the same tool-using ``Reply`` twice gives duplicate ids (which the validator
        would then reject in the follow-up request) - build a new one instead.
        """
        with self._lock:
            for r in replies:
                if not isinstance(r, Reply) and not callable(r):
                    raise TypeError(f"expected Reply or callable, got {type(r).__name__}")
                self._queue.append(r)

    def clear_queue(self) -> None:
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        """Number of queued replies not yet used."""
        with self._lock:
            return len(self._queue)

    # ---- observation ----------------------------------------------------------------

    @property
    def requests(self) -> list[Any]:
        """Parsed JSON bodies of every POST /v1/messages, in order (None if unparsable)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        with self._lock:
            return [dict(h) for h in self._request_headers]

    @property
    def disconnects(self) -> list[tuple[int, float]]:
        with self._lock:
            return list(self._disconnects)

    @property
    def rejections(self) -> list[str]:
        with self._lock:
            return list(self._rejections)

    @property
    def errors(self) -> list[str]:
        """Tracebacks of unexpected exceptions in handler threads (should stay empty)."""
        with self._lock:
            return list(self._errors)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._requests) >= n, timeout)

    def wait_for_disconnect(self, timeout: float = 5.0, count: int = 1) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._disconnects) >= count, timeout)

    # ---- internal (handler threads) -------------------------------------------------

    def _register(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.add(conn)
            self._threads.add(threading.current_thread())

    def _unregister(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)
            self._threads.discard(threading.current_thread())

    def _record_request(self, body: Any, headers: dict[str, str]) -> int:
        with self._cond:
            self._requests.append(body)
            self._request_headers.append(headers)
            self._cond.notify_all()
            return len(self._requests) - 1

    def _record_rejection(self, msg: str) -> None:
        with self._cond:
            self._rejections.append(msg)
            self._cond.notify_all()

    def _record_disconnect(self, idx: int) -> None:
        with self._cond:
            self._disconnects.append((idx, time.monotonic()))
            self._cond.notify_all()

    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None:
            return self.default_reply.copy()
        if isinstance(item, Reply):
            return item
        reply = item(body)  # a callable(request_body) -> Reply
        if not isinstance(reply, Reply):
            raise TypeError(f"reply factory returned {type(reply).__name__}, expected Reply")
        return reply
