"""MCP against the reference TypeScript server, ``@modelcontextprotocol/server-everything``
(installed from the npm registry by ``.ci/run`` into ``.ci/node_modules``, pinned in
``.ci/package-lock.json``), over stdio and streamable HTTP. The tests skip, saying why,
where it is not installed (no node, or the registry was unreachable)."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cancel import CancelReason
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.mcp import ServerConfig, ServerState
from agent_tui.settings.mcp_servers import Transport
from tests.harness import told
from tests.mcp_support import free_port, call, listening

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / ".ci" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None or not EVERYTHING.is_file(),
    reason="@modelcontextprotocol/server-everything is not installed (.ci/run installs it "
    "from the npm registry; node or the registry was not available)",
)

TASK_TOOL = "simulate-research-query"


def everything_stdio() -> ServerConfig:
    assert NODE is not None
    return ServerConfig(name="everything", transport=Transport.STDIO, source=Path("test"),
                        command=NODE, args=[str(EVERYTHING), "stdio"])


async def until(pred: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_stdio_tools_images_resources_and_a_task_only_tool(make_manager: Any) -> None:
    manager, tools = await make_manager(everything_stdio(), confirm_s=1.0)
    conn = manager.connections["everything"]
    assert conn.state is ServerState.READY
    # Its task tool is registered once the session is initialized and announced with
    # tools/list_changed: the new list arrives, and that tool is offered (it runs as an
    # MCP task: tests/test_mcp_tasks_everything.py).
    await until(lambda: TASK_TOOL in manager.status()[0].tools)
    assert manager.status()[0].left_out == {}
    assert tools.get("mcp__everything__echo") is not None

    echo, _ = await call(tools, "mcp__everything__echo", {"message": "hi there"})
    assert echo.outcome is ToolState.SUCCEEDED and "hi there" in echo.content

    image, _ = await call(tools, "mcp__everything__get-tiny-image", {})
    assert image.outcome is ToolState.SUCCEEDED
    [block] = image.blocks
    assert block["source"]["media_type"] == "image/png"
    assert "attached as image 1" in image.content and "MCP logo" in image.content

    text_ref, _ = await call(tools, "mcp__everything__get-resource-reference",
                             {"resourceType": "Text", "resourceId": 1})
    blob_ref, _ = await call(tools, "mcp__everything__get-resource-reference",
                             {"resourceType": "Blob", "resourceId": 2})
    assert text_ref.outcome is blob_ref.outcome is ToolState.SUCCEEDED
    assert "[resource " not in text_ref.content  # its text is given
    assert "[resource " in blob_ref.content and " bytes]" in blob_ref.content


@pytest.mark.asyncio
async def test_stdio_cancel_reaches_the_typescript_server_and_it_stays_up(make_manager: Any) -> None:
    manager, tools = await make_manager(everything_stdio(), confirm_s=0.5)
    pid = manager.status()[0].pid
    result, _ = await call(tools, "mcp__everything__trigger-long-running-operation",
                           {"duration": 30, "steps": 30}, cancel_after=0.5)
    # Over stdio the server stops the request and, as the spec says, does not answer.
    assert result.outcome is ToolState.UNKNOWN and result.ended_by is CancelReason.USER_INTERRUPT
    assert result.side_effects is SideEffects.NONE  # read-only (readOnlyHint)
    assert "It changed nothing (read-only)" in told(result)
    assert manager.status()[0].state is ServerState.READY and manager.status()[0].pid == pid
    again, _ = await call(tools, "mcp__everything__echo", {"message": "still here"})
    assert again.outcome is ToolState.SUCCEEDED


@pytest.fixture
def everything_http(tmp_path: Path) -> Iterator[str]:
    assert NODE is not None
    port = free_port()
    argv = [NODE, str(EVERYTHING), "streamableHttp"]
    with listening(argv, port, tmp_path / "everything-http.log", {**os.environ, "PORT": str(port)}) as url:
        yield url


@pytest.mark.asyncio
async def test_http_cancel_is_not_confirmed_by_the_typescript_server(make_manager: Any,
                                                                     everything_http: str) -> None:
    web = ServerConfig(name="everything", transport=Transport.HTTP, source=Path("test"), url=everything_http)
    manager, tools = await make_manager(web, confirm_s=1.0)
    assert manager.status()[0].state is ServerState.READY
    result, _ = await call(tools, "mcp__everything__trigger-long-running-operation",
                           {"duration": 30, "steps": 30}, cancel_after=0.5)
    # Unlike the Python SDK's server (test_mcp.py), this one never answers a cancelled
    # request over HTTP: nothing confirms it, so the outcome is unknown.
    assert result.outcome is ToolState.UNKNOWN and not result.details["confirmed"]
    again, _ = await call(tools, "mcp__everything__echo", {"message": "over http"})
    assert again.outcome is ToolState.SUCCEEDED and "over http" in again.content
