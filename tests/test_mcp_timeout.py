"""The tool timeout: a server's "timeout" (milliseconds, Claude Code's key) over
MCP_TOOL_TIMEOUT over the default; shown in /mcp's details; a tool that never answers
ends as unknown, saying which timeout ended it and where it is set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cancel import CancelReason
from agent_tui.mcp import load_config, load_mcp
from agent_tui.mcp.manager import DEFAULT_TOOL_TIMEOUT_S
from agent_tui.protocol import ToolState
from agent_tui.ui.commands.reports import mcp_report
from tests.mcp_support import SDK_SERVER, call, records, stdio, write


def test_a_servers_timeout_wins_over_the_environment_and_the_default(tmp_path: Path) -> None:
    ws, user = tmp_path / "ws", tmp_path / "cfg"
    write(user / "mcp.json", json.dumps({"mcpServers": {
        "slow": {"command": "x", "timeout": 1_800_000},
        "tiny": {"command": "x", "timeout": 500},  # below 1000: ignored, as in Claude Code
        "plain": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
        "bad": {"command": "x", "timeout": "soon"},
    }}))
    cfg = load_config(ws, user_config_dir=user, environ={})
    assert [str(p) for p in cfg.problems] == [
        f"{user / 'mcp.json'} (server 'bad'): \"timeout\" must be a whole number of milliseconds"]
    manager = load_mcp(ws, user_config_dir=user, environ={})
    timeouts = {s.name: s.tool_timeout_s for s in manager.status()}
    assert timeouts == {"slow": 1800.0, "tiny": DEFAULT_TOOL_TIMEOUT_S, "plain": DEFAULT_TOOL_TIMEOUT_S}
    manager = load_mcp(ws, user_config_dir=user, environ={"MCP_TOOL_TIMEOUT": "90000"})
    assert {s.name: s.tool_timeout_s for s in manager.status()} == {"slow": 1800.0, "tiny": 90.0, "plain": 90.0}
    assert "tool timeout: 1800 s" in mcp_report(manager.status()).plain



def test_a_servers_task_ttl_is_kept_within_a_minute_and_a_day_and_a_bad_one_is_named(tmp_path: Path) -> None:
    ws, user = tmp_path / "ws", tmp_path / "cfg"
    write(user / "mcp.json", json.dumps({"mcpServers": {
        "day": {"command": "x", "taskTtl": 86_400_000},
        "long": {"type": "http", "url": "http://127.0.0.1:9/mcp", "taskTtl": 86_400_001},
        "word": {"command": "x", "taskTtl": "1h"},
        "plain": {"command": "x"},
    }}))
    cfg = load_config(ws, user_config_dir=user, environ={})
    assert {s.name: s.task_ttl_ms for s in cfg.servers} == {"day": 86_400_000, "long": None, "word": None,
                                                            "plain": None}
    assert sorted(str(p) for p in cfg.problems) == [
        f"{user / 'mcp.json'} (server '{name}'): \"taskTtl\" must be a whole number of milliseconds from 60000 "
        f"(a minute) to 86400000 (a day), got {shown}: the default (an hour) is used"
        for name, shown in (("long", "86400001"), ("word", "'1h'"))]
    manager = load_mcp(ws, user_config_dir=user, environ={})
    assert {s.name: s.task_ttl_s for s in manager.status()} == {"day": 86400.0, "long": 3600.0, "word": 3600.0,
                                                               "plain": 3600.0}

@pytest.mark.asyncio
async def test_a_tool_that_never_answers_ends_unknown_at_the_servers_timeout(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    config = stdio("t", SDK_SERVER, str(record)).model_copy(update={"timeout_ms": 1000})
    _, tools = await make_manager(config, confirm_s=0.3)
    result, _ = await call(tools, "mcp__t__stubborn", {"seconds": 30})  # ignores the cancel
    assert result.outcome is ToolState.UNKNOWN and result.ended_by is CancelReason.TIMEOUT
    assert result.content.startswith("Timed out after 1 s (MCP server 't''s tool timeout: its \"timeout\" "
                                     "setting or MCP_TOOL_TIMEOUT, in milliseconds)")
    assert "may have completed, partly run, or not run" in result.content
    assert [r["event"] for r in records(record)] == ["start"]
