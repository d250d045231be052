"""Interrupt figures: a real Session, the real BashTool, a scripted model.

- Trees (TERM exits / TERM ignored / setsid escape): interrupt -> turn_ended, and
  interrupt -> every marked process gone (PIDs found by marker before the interrupt,
  polled every ms; afterwards a full marker scan counts residue). Reference: the same
  tree started directly and killed with killpg(SIGKILL) + reap.
- A stalled stream (fake API ``Reply.stall``): interrupt -> the server sees the
  connection close. Reference: a raw socket client closing the same kind of stream.
- A retry back-off (``Reply.error(529, retry_after=30)``): interrupt -> turn_ended.
  Reference: a task sleeping on another thread's loop, cancelled from this thread.
"""

from __future__ import annotations

import asyncio
import json
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from agent_tui.protocol import UserMessage
from agent_tui.tools.bash import BashTool
from bench.host import HostedSession
from bench.procs import (
    kill_marked,
    new_marker,
    procs_with,
    reference_kill,
    tree_command,
    wait_all_gone,
    wait_for_procs,
)
from bench.providers import CommandProvider

BENCH_GRACE_S = 0.5  # SIGTERM -> SIGKILL in the bench (the default is 2 s; same code path)


class TreeBench:
    """One hosted session that runs the tree commands turn after turn."""

    def __init__(self, workspace: Path, grace: float = BENCH_GRACE_S) -> None:
        self.grace = grace
        self.provider = CommandProvider("true")
        self.host = HostedSession(self.provider, [BashTool(grace=grace)], workspace)

    def run(self, kind: str) -> dict:
        """One interrupt of one tree: ms to every process gone, ms to turn_ended, residue."""
        host = self.host
        marker = new_marker()
        command, count = tree_command(kind, marker)
        self.provider.command = command
        ended_before = len(host.events.of("turn_ended"))
        host.submit(UserMessage(text=f"run the {kind} tree"))
        try:
            found = wait_for_procs(marker, count, 10)
            if len(found) < count:
                raise RuntimeError(f"{kind}: tree did not start ({len(found)} of {count})")
            time.sleep(0.02)  # let the tree settle (traps installed, waits entered)
            pids = [p.pid for p in found]
            t0 = host.interrupt()
            gone = wait_all_gone(pids, self.grace + 5)
            host.events.wait(lambda: len(host.events.of("turn_ended")) > ended_before, 15)
            ended = host.events.of("turn_ended")
            t_end = ended[-1][0] if len(ended) > ended_before else None
            residue = len(procs_with(marker))
            host.wait_idle(15)
            return {
                "gone_ms": None if gone is None else (gone - t0) * 1000,
                "ended_ms": None if t_end is None else (t_end - t0) * 1000,
                "residue": residue,
            }
        finally:
            kill_marked(marker)

    def close(self) -> None:
        self.host.close()


def tree_reference_ms(kind: str) -> float:
    return reference_kill(kind) * 1000


# ------------------------------------------------------------------ the model's side


def _anthropic(srv):  # imported lazily: the SDK takes about a second to import
    from agent_tui.providers.anthropic import AnthropicProvider

    return AnthropicProvider(api_key="bench-key", base_url=srv.url)


class ApiBench:
    """A hosted session on the real SDK against the strict fake API server."""

    def __init__(self, workspace: Path) -> None:
        from tests.fake_api import FakeAnthropicServer

        self.srv = FakeAnthropicServer().start()
        self.host = HostedSession(_anthropic(self.srv), [], workspace)

    def stalled_stream(self) -> dict:
        from tests.fake_api import Reply

        host, srv = self.host, self.srv
        self.srv.enqueue(Reply.stall(after_text="Thinking about it", seconds=60))
        deltas = len(host.events.of("text_delta"))
        ended_before = len(host.events.of("turn_ended"))
        disconnects = len(srv.disconnects)
        host.submit(UserMessage(text="think"))
        if not host.events.wait(lambda: len(host.events.of("text_delta")) > deltas, 10):
            raise RuntimeError("stalled stream: no text arrived")
        time.sleep(0.02)
        t0 = host.interrupt()
        srv.wait_for_disconnect(10, count=disconnects + 1)
        host.events.wait(lambda: len(host.events.of("turn_ended")) > ended_before, 10)
        host.wait_idle(10)
        seen = srv.disconnects
        closed = seen[-1][1] if len(seen) > disconnects else None
        return {"close_ms": None if closed is None else (closed - t0) * 1000,
                "ended_ms": (host.events.of("turn_ended")[-1][0] - t0) * 1000,
                "t0": t0, "closed": closed}

    def stalled_stream_reference(self) -> float:
        return stalled_close_reference_ms(self.srv)

    def backoff(self) -> float:
        from tests.fake_api import Reply

        host = self.host
        self.srv.enqueue(Reply.error(529, "overloaded_error", retry_after=30))
        retries = len(host.events.of("retry_scheduled"))
        ended_before = len(host.events.of("turn_ended"))
        host.submit(UserMessage(text="try"))
        if not host.events.wait(lambda: len(host.events.of("retry_scheduled")) > retries, 10):
            raise RuntimeError("back-off: no retry was scheduled")
        time.sleep(0.02)
        t0 = host.interrupt()
        host.events.wait(lambda: len(host.events.of("turn_ended")) > ended_before, 10)
        host.wait_idle(10)
        return (host.events.of("turn_ended")[-1][0] - t0) * 1000

    def close(self) -> None:
        self.host.close()
        self.srv.stop()


def stalled_close_reference_ms(srv: Any) -> float:
    """A raw client reads the first bytes of a stalled stream, then closes: ms until
    the server sees it (the server's own detection latency, the floor)."""
    from tests.fake_api import Reply

    srv.enqueue(Reply.stall(after_text="Thinking about it", seconds=60))
    body = json.dumps({
        "model": "claude-bench", "max_tokens": 64, "stream": True,
        "messages": [{"role": "user", "content": "think"}],
    }).encode()
    head = (
        "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: k\r\n"
        "anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode()
    before = len(srv.disconnects)
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        sock.sendall(head + body)
        got = b""
        while b"text_delta" not in got:
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("reference stream ended early")
            got += chunk
        time.sleep(0.02)
        t0 = time.monotonic()
    finally:
        sock.close()
    srv.wait_for_disconnect(10, count=before + 1)
    seen = srv.disconnects
    return (seen[-1][1] - t0) * 1000


def backoff_reference_ms() -> float:
    """A task sleeping 30 s on another thread's loop, cancelled from this thread: ms
    until it has finished (the cross-thread wake-up floor)."""
    ready = threading.Event()
    box: dict = {}

    def main() -> None:
        async def sleeper() -> None:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                box["done"] = time.monotonic()

        async def run() -> None:
            box["loop"] = asyncio.get_running_loop()
            task = asyncio.create_task(sleeper())
            box["task"] = task
            ready.set()
            await asyncio.gather(task, return_exceptions=True)

        asyncio.run(run())

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    ready.wait(5)
    time.sleep(0.02)
    t0 = time.monotonic()
    box["loop"].call_soon_threadsafe(box["task"].cancel)
    thread.join(5)
    return (box["done"] - t0) * 1000


def workspace() -> Path:
    return Path(tempfile.mkdtemp(prefix="atui-bench-"))
