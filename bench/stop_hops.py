"""Esc in a stalled stream, hop by hop: where the time from the key to the closed socket goes.

The stalled-stream figure (``bench/interrupts.py``) times Esc -> the server sees the connection
closed. :class:`HopClock` stamps two points on the way in the agent's own process: the socket's
``close()`` called, and the SDK stream's ``close()`` entered. The socket goes first: the cancel
reaches the HTTP client's pending read, which drops its connection; the provider's ``finally``
closes the SDK stream after that. So the hops are

1. Esc, sent from another thread -> the socket closed: the thread hop, the loop's wake-up,
   the cancel through the core's turn, the SDK's and the HTTP client's read. Floor: a task
   on another thread's loop reading the same stalled reply with an asyncio stream, cancelled
   with ``call_soon_threadsafe``, closing its stream (:func:`cancelled_read_reference_ms`).
2. the socket closed -> the server sees it: the fake server's detection. Floor: a raw
   socket client closing (``interrupts.stalled_close_reference_ms``).

Beside them, Esc -> the SDK stream's ``close()`` (the core's unwinding done), beside the bare
thread hop: ``call_soon_threadsafe`` to a loop idle in ``select`` (:func:`thread_hop_reference_ms`).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class HopClock:
    """While :meth:`installed`, the times the SDK's async streams and the sockets to one
    port are closed in this process."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.stream_closes: list[float] = []
        self.socket_closes: list[float] = []

    @contextmanager
    def installed(self) -> Iterator[HopClock]:
        from anthropic._streaming import AsyncStream

        clock, sock_close, stream_close = self, socket.socket.close, AsyncStream.close

        def close_socket(sock: socket.socket) -> None:
            if clock._ours(sock):
                clock.socket_closes.append(time.monotonic())
            sock_close(sock)

        async def close_stream(stream: Any) -> None:
            clock.stream_closes.append(time.monotonic())
            await stream_close(stream)

        socket.socket.close = close_socket  # type: ignore[method-assign]
        AsyncStream.close = close_stream  # type: ignore[method-assign]
        try:
            yield self
        finally:
            socket.socket.close = sock_close  # type: ignore[method-assign]
            AsyncStream.close = stream_close  # type: ignore[method-assign]

    def _ours(self, sock: socket.socket) -> bool:
        try:
            return sock.fileno() >= 0 and sock.getpeername()[1] == self.port
        except (OSError, IndexError, TypeError):
            return False

    def after(self, t0: float) -> dict[str, float | None]:
        """The first stream close and socket close at or after ``t0``."""
        def first(times: list[float]) -> float | None:
            return next((t for t in times if t >= t0), None)

        return {"stream_closed": first(self.stream_closes), "socket_closed": first(self.socket_closes)}


def thread_hop_reference_ms() -> float:
    """ms from ``call_soon_threadsafe`` on this thread to the callback running on another
    thread's loop, idle in ``select`` until then."""
    ready, done = threading.Event(), threading.Event()
    box: dict[str, Any] = {}

    def main() -> None:
        async def run() -> None:
            box["loop"] = asyncio.get_running_loop()
            ready.set()
            while not done.is_set():
                await asyncio.sleep(0.5)

        asyncio.run(run())

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    ready.wait(5)
    time.sleep(0.02)  # the loop is in select by now

    def ran() -> None:
        box["ran"] = time.monotonic()
        done.set()

    t0 = time.monotonic()
    box["loop"].call_soon_threadsafe(ran)
    thread.join(5)
    return (box["ran"] - t0) * 1000


def cancelled_read_reference_ms(srv: Any, clock: HopClock) -> float:
    """A task on another thread's loop reads the first words of a stalled reply from ``srv``
    with an asyncio stream and closes it when cancelled; ms from ``call_soon_threadsafe(
    task.cancel)`` on this thread to its socket's close (``clock`` installed)."""
    from tests.fake_api import Reply

    srv.enqueue(Reply.stall(after_text="Thinking about it", seconds=60))
    body = json.dumps({"model": "claude-bench", "max_tokens": 64, "stream": True,
                       "messages": [{"role": "user", "content": "think"}]}).encode()
    head = ("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: k\r\n"
            "anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode()
    before = len(srv.disconnects)
    reading = threading.Event()
    box: dict[str, Any] = {}

    async def read() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        try:
            writer.write(head + body)
            got = b""
            while b"text_delta" not in got:
                chunk = await reader.read(65536)
                if not chunk:
                    raise RuntimeError("reference stream ended early")
                got += chunk
            reading.set()
            while await reader.read(65536):  # stalled: until cancelled
                pass
            box["ended"] = True
        finally:
            writer.close()

    async def run() -> None:
        box["loop"] = asyncio.get_running_loop()
        box["task"] = asyncio.current_task()
        try:
            await read()
        except asyncio.CancelledError:
            pass  # what it waits for

    thread = threading.Thread(target=lambda: asyncio.run(run()), daemon=True)
    thread.start()
    if not reading.wait(10):
        raise RuntimeError("reference: no text arrived")
    time.sleep(0.02)
    t0 = time.monotonic()
    box["loop"].call_soon_threadsafe(box["task"].cancel)
    thread.join(10)
    if box.get("ended"):
        raise RuntimeError("reference stream ended early")
    srv.wait_for_disconnect(10, count=before + 1)
    closed = clock.after(t0)["socket_closed"]
    if closed is None:
        raise RuntimeError("reference: the socket's close was not seen")
    return (closed - t0) * 1000
