"""The real ``agent-tui acp`` process for tests: an ACP client (the SDK's) that records
what the agent sends and answers permission requests when the test says, and the
agent spawned against the fake API."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, connect_to_agent
from acp.schema import RequestPermissionResponse
from acp.transports import default_environment

from tests.forked_runs import end_agent, popen_agent


AGENT = [sys.executable, "-m", "agent_tui.cli", "acp"]
META = "agent_tui"


class RecordingClient:
    """An ACP client that records updates; its permission handler waits for the test."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[Any] = []
        self.answers: asyncio.Queue[RequestPermissionResponse] = asyncio.Queue()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, options: Any, session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests.append((session_id, tool_call, options))
        return await self.answers.get()  # waits until the test answers

    # -- reading what arrived -------------------------------------------------------

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [u for s, u in self.updates
                if u.session_update == kind and (session_id is None or s == session_id)]

    def text(self, session_id: str | None = None) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk", session_id))

    def tool_updates(self, tool_call_id: str) -> list[Any]:
        return [u for _, u in self.updates
                if u.session_update in ("tool_call", "tool_call_update")
                and u.tool_call_id == tool_call_id]

    def last_status(self, tool_call_id: str) -> str | None:
        statuses = [u.status for u in self.tool_updates(tool_call_id) if u.status]
        return statuses[-1] if statuses else None

    def last_state(self, tool_call_id: str) -> str | None:
        metas = [u.field_meta for u in self.tool_updates(tool_call_id) if u.field_meta]
        return metas[-1][META]["state"] if metas else None

    async def wait_for(self, pred: Any, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; updates: {self.updates!r}"[:3000])
            await asyncio.sleep(0.01)


def agent_env(tmp_path: Path, fake_api: Any) -> dict[str, str]:
    return {
        "AGENT_TUI_HOME": str(tmp_path / "home"),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
    }


def spawn(client: RecordingClient, tmp_path: Path, fake_api: Any, *args: str) -> Any:
    return acp_agent(client, [*args, "--cwd", str(tmp_path)], env=agent_env(tmp_path, fake_api),
                     cwd=tmp_path)


@asynccontextmanager
async def acp_agent(client: Any, args: list[str], *, env: dict[str, str], cwd: Path,
                    **connection_kwargs: Any) -> AsyncIterator[tuple[Any, Any]]:
    """What ``acp.spawn_agent_process`` does for ``agent-tui acp``, with the agent forked
    (tests/forked_runs.py) and its stderr in ``cwd/agent-stderr.log``. The environment
    is the library's trimmed one plus ``env``, as it gives its agents; the agent gets
    15 s to leave once its stdin is closed."""
    with open(cwd / "agent-stderr.log", "ab") as stderr:
        proc = popen_agent(["acp", *args], env=default_environment() | env, cwd=cwd,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                           bufsize=0)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), proc.stdout)
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, proc.stdin)
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    conn = connect_to_agent(client, writer, reader, **connection_kwargs)
    try:
        yield conn, proc
    finally:
        await conn.close()
        writer.close()  # the agent reads the end of its stdin and leaves
        await asyncio.to_thread(end_agent, proc, 15.0)
        read_transport.close()


async def start(conn: Any, cwd: Path) -> str:
    init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert init.agent_capabilities.load_session is True
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    return session.session_id
