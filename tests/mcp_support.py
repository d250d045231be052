"""MCP servers for tests: the real ones under tests/mcp_servers (the official SDK's,
raw answers, OAuth), their configs, one call with a cancel at a chosen point, the
record files the servers write, and an HTTP server run until it listens."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request
import urllib.error
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.calls.tool import ToolContext, ToolResult, ToolSet
from agent_tui.settings.mcp_servers import Transport
from agent_tui.mcp import ServerConfig


SERVERS = Path(__file__).parent / "mcp_servers"
SDK_SERVER = str(SERVERS / "sdk_server.py")
RAW_SERVER = str(SERVERS / "raw_server.py")


def stdio(name: str, *args: str) -> ServerConfig:
    return ServerConfig(name=name, transport=Transport.STDIO, source=Path("test"),
                        command=sys.executable, args=list(args))


def records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ctx_for(scope: CancelScope, op: str = "op-1") -> ToolContext:
    return ToolContext(scope=scope, workspace=Path("."), tool_use_id=f"tu-{op}", operation_id=op)


async def call(tools: ToolSet, name: str, args: dict[str, Any], *, cancel_after: float | None = None,
               cancel_on_start: Path | None = None, op: str = "op-1") -> tuple[ToolResult, float]:
    """Run one call; cancel it after a delay, or once the server recorded its start.

    The returned time runs from the cancel (or from the start, without one).
    """
    tool = tools.get(name)
    assert tool is not None, f"{name} not in {tools.names()}"
    scope = CancelScope()
    cancelled_at: list[float] = []

    def cancel() -> None:
        cancelled_at.append(time.monotonic())
        scope.cancel(CancelReason.USER_INTERRUPT)

    async def cancel_when_started(record: Path) -> None:
        await wait_for_record(record, "start")
        cancel()

    if cancel_after is not None:
        asyncio.get_running_loop().call_later(cancel_after, cancel)
    watcher = asyncio.create_task(cancel_when_started(cancel_on_start)) if cancel_on_start else None
    t0 = time.monotonic()
    try:
        result = await tool.run(tool.parse(args), ctx_for(scope, op))
    finally:
        if watcher is not None:
            watcher.cancel()
    return result, time.monotonic() - (cancelled_at[0] if cancelled_at else t0)


async def wait_for_record(path: Path, event: str, timeout: float = 5.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for rec in records(path):
            if rec["event"] == event:
                return rec
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {event!r} record in {records(path)}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def listening(argv: list[str], port: int, log_path: Path, env: dict[str, str] | None = None,
              timeout: float = 20.0) -> Iterator[str]:
    """Run an HTTP MCP server until it listens on ``port``; yields its /mcp URL."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, env=env)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log_path.read_text()) from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


OAUTH = str(SERVERS / "oauth_server.py")


def oauth_server(tmp_path: Path, *args: str) -> Iterator[tuple[str, Path]]:
    record = tmp_path / "oauth-record.jsonl"
    port = free_port()
    argv = [sys.executable, OAUTH, str(record), str(port), *args]
    with listening(argv, port, tmp_path / "oauth-server.log") as url:
        yield url, record


# -- OAuth logins: the browser a test plays, the records of tests/mcp_servers/oauth_server.py


def browser(seen: list[str], answers: list[Any]) -> Any:
    """A browser: follows the URL (and its redirects) on a thread, as a real one
    would while agent-tui waits."""

    def open_url(url: str) -> None:
        seen.append(url)

        def follow() -> None:
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    answers.append((response.status, response.read().decode()))
            except urllib.error.HTTPError as exc:
                answers.append((exc.code, exc.read().decode()))

        threading.Thread(target=follow, daemon=True).start()

    return open_url


async def answered(answers: list[Any]) -> list[Any]:
    """The browser's thread reads its page after the login has gone on: wait for it."""
    for _ in range(200):
        if answers:
            break
        await asyncio.sleep(0.05)
    return answers


def web(url: str) -> ServerConfig:
    return ServerConfig(name="web", transport=Transport.HTTP, source=Path("test"), url=url)


def events(record: Path, kind: str) -> list[dict[str, Any]]:
    return [r for r in records(record) if r["event"] == kind]


# A hostile MCP server's world for the OAuth guard tests: its origin, the authorization server's.
MCP = "https://mcp.example"
AS = "https://as.example"


def protected(granted: bool) -> httpx2.Response:
    """The MCP server's answer: through with a good token, else a 401 naming its metadata."""
    if granted:
        return httpx2.Response(200, json={"ok": True})
    return httpx2.Response(401, headers={"WWW-Authenticate": (
        f'Bearer resource_metadata="{MCP}/.well-known/oauth-protected-resource/mcp"')})
