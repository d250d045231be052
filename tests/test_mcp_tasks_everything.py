"""MCP tasks against the reference TypeScript server, ``@modelcontextprotocol/server-everything``
(its ``simulate-research-query`` tool has ``taskSupport: required``), through the real
manager over stdio. Skips, saying why, where ``.ci/run`` could not install it."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.mcp import ServerConfig
from agent_tui.protocol import ToolState
from agent_tui.settings.mcp_servers import Transport
from tests.mcp_support import ctx_for, free_port, listening

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / ".ci" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = shutil.which("node")
RESEARCH = "mcp__everything__simulate-research-query"

pytestmark = pytest.mark.skipif(
    NODE is None or not EVERYTHING.is_file(),
    reason="@modelcontextprotocol/server-everything is not installed (.ci/run installs it "
    "from the npm registry; node or the registry was not available)",
)


async def research_tool(make_manager: Any, url: str | None = None, **options: Any) -> Any:
    """The manager's tool for the research task (it is registered after initialize and
    announced with tools/list_changed, so it arrives a moment after the start)."""
    assert NODE is not None
    if url is None:
        config = ServerConfig(name="everything", transport=Transport.STDIO, source=Path("test"),
                              command=NODE, args=[str(EVERYTHING), "stdio"])
    else:
        config = ServerConfig(name="everything", transport=Transport.HTTP, source=Path("test"), url=url)
    _, tools = await make_manager(config, **options)
    deadline = time.monotonic() + 10
    while tools.get(RESEARCH) is None:
        assert time.monotonic() < deadline, tools.names()
        await asyncio.sleep(0.05)
    return tools.get(RESEARCH)


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_research_task_runs_through_input_required_to_its_report(
        make_manager: Any, tmp_path: Path, transport: str) -> None:
    if transport == "http":
        assert NODE is not None
        port = free_port()
        with listening([NODE, str(EVERYTHING), "streamableHttp"], port, tmp_path / "everything.log",
                       {**os.environ, "PORT": str(port)}) as url:
            await research(await research_tool(make_manager, url))
    else:
        await research(await research_tool(make_manager))


async def research(tool: Any) -> None:
    emitted: list[str] = []
    ctx = ctx_for(CancelScope())
    ctx.emit_output = emitted.append
    # Ambiguous: the task asks for a clarification (input_required), which comes on the
    # tasks/result stream; the test's elicitor declines it, and the task goes on.
    result = await tool.run(tool.parse({"topic": "python", "ambiguous": True}), ctx)
    assert result.outcome is ToolState.SUCCEEDED, result.content
    assert "# Research Report: python (User declined" in result.content
    assert result.details["task_id"]
    assert any(line.startswith("[task working: Gathering sources") for line in emitted), emitted
    assert any(line.startswith("[task input_required: ") for line in emitted), emitted


@pytest.mark.asyncio
async def test_esc_cancels_the_research_task_and_the_server_confirms(make_manager: Any) -> None:
    tool = await research_tool(make_manager, confirm_s=1.0)
    scope, emitted = CancelScope(), asyncio.Event()
    ctx = ctx_for(scope)
    ctx.emit_output = lambda _text: emitted.set()
    running = asyncio.create_task(tool.run(tool.parse({"topic": "rust"}), ctx))
    await asyncio.wait_for(emitted.wait(), 20)  # the task exists and works
    scope.cancel(CancelReason.USER_INTERRUPT)
    t0 = time.monotonic()
    result = await running
    assert time.monotonic() - t0 < 1.5
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING, result.content
    assert result.details["confirmed"] is True and "confirmed it cancelled task" in result.content
