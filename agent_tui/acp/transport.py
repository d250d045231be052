"""The stdio transport of the ACP server: newline-delimited JSON-RPC frames.

Owns two guarantees the SDK's own stdio path does not give:

- **stdout carries protocol frames only.** :func:`claim_stdout` moves the real
  stdout to a private descriptor and points fd 1 at stderr, so a stray ``print``,
  a library's chatter or an inherited descriptor can never corrupt the stream.
- **A malformed message gets a JSON-RPC error, not silence or a crash.** A line
  that is not JSON is answered with ``-32700 Parse error``; JSON that is not a
  request, notification or response (an array, a number, a non-string method) with
  ``-32600 Invalid request``. The SDK then sees only well-formed messages (it
  answers unknown methods and bad params itself).

It implements the SDK's message-level ``Transport`` protocol (``send`` /
``receive`` / ``close``), which ``run_agent`` accepts in place of byte streams.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from typing import Any

from agent_tui.acp.editor_files import note_sent

log = logging.getLogger("agent_tui.acp")

LINE_LIMIT = 50 * 1024 * 1024  # bytes in one frame (prompts may carry big context)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def claim_stdout() -> int:
    """Keep the real stdout for frames; send everything else written to fd 1 to stderr.

    Returns the private descriptor that now holds the original stdout.
    """
    sys.stdout.flush()
    proto_fd = os.dup(1)  # non-inheritable: tool processes never see it
    os.dup2(2, 1)
    return proto_fd


def _error(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": error}


def check_message(message: Any) -> dict[str, Any] | None:
    """The error to answer for a decoded frame that is not a JSON-RPC message, or None."""
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid request",
                      {"details": "expected a JSON object (batches are not supported)"})
    id_ = message.get("id")
    if isinstance(id_, bool) or (id_ is not None and not isinstance(id_, (str, int))):
        return _error(None, INVALID_REQUEST, "Invalid request", {"details": "bad id"})
    if "method" in message:
        if not isinstance(message["method"], str):
            return _error(id_, INVALID_REQUEST, "Invalid request",
                          {"details": "method must be a string"})
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return _error(id_, INVALID_REQUEST, "Invalid request",
                          {"details": "params must be an object"})
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to one of our requests
    return _error(id_, INVALID_REQUEST, "Invalid request",
                  {"details": "neither a request, a notification nor a response"})


class StdioTransport:
    """Frames over asyncio streams, with the checks above."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("transport closed")
        note_sent(message)  # an editor request's id, for $/cancel_request
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:
                log.warning("unparsable frame (%d bytes): %s", len(line), exc)
                await self._answer(_error(None, PARSE_ERROR, "Parse error", {"details": str(exc)}))
                continue
            error = check_message(message)
            if error is not None:
                log.warning("invalid frame: %s", error["error"].get("data"))
                await self._answer(error)
                continue
            assert isinstance(message, dict)  # check_message answered anything else
            return message

    async def _answer(self, error: dict[str, Any]) -> None:
        try:
            await self.send(error)
        except (ConnectionError, OSError):
            pass

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    chunks.append(await self._reader.readuntil(b"\n"))
                    return b"".join(chunks)
                except asyncio.LimitOverrunError as exc:
                    chunks.append(await self._reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._writer.close()
        except Exception:
            pass


class _BlockingWriter:
    """For a stdout that is a regular file (asyncio pipes refuse those)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass


async def open_stdio(proto_fd: int) -> StdioTransport:
    """A transport reading stdin and writing frames to ``proto_fd``."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    try:
        protocol = asyncio.StreamReaderProtocol(reader)
        await loop.connect_read_pipe(lambda: protocol, sys.stdin)
    except ValueError:  # stdin is a regular file: feed it from a thread
        _feed_from_thread(loop, reader)
    out = os.fdopen(proto_fd, "wb", buffering=0, closefd=False)
    try:
        transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, out
        )
        writer: Any = asyncio.StreamWriter(transport, write_protocol, None, loop)
    except ValueError:
        writer = _BlockingWriter(proto_fd)
    return StdioTransport(reader, writer)


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    def pump() -> None:
        try:
            for line in sys.stdin.buffer:
                loop.call_soon_threadsafe(reader.feed_data, line)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()
