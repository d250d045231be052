"""ACP: a ``usage_update`` after each model request (the context filled, the window, the
cost so far), and ``session/load`` restoring the mode the session was in, never a
wider one than the agent was started with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block

from agent_tui.acp.modes import restored_mode
from agent_tui.acp.usage import UsageTracker
from agent_tui.core.journal.records import PermissionModeRecord
from agent_tui.protocol import PermissionMode as M
from agent_tui.protocol import Usage
from tests.acp_client import RecordingClient, spawn, start
from tests.fake_api import Reply


@pytest.mark.asyncio
async def test_usage_is_told_and_a_loaded_session_is_back_in_plan_mode(tmp_path: Path, fake_api: Any) -> None:
    fake_api.enqueue(Reply.text("first"), Reply.text("planning"))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        sid = await start(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        [usage] = client.of("usage_update", sid)
        assert usage.used > 0 and usage.size >= 200_000
        assert usage.cost is None  # the fake's model has no known price
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        await client.wait_for(lambda: [u.current_mode_id for u in client.of("current_mode_update", sid)][-1:] == ["plan"])
        await conn.prompt(session_id=sid, prompt=[text_block("plan something")])
        assert len(client.of("usage_update", sid)) == 2
    again = RecordingClient()
    async with spawn(again, tmp_path, fake_api, "--permission-mode", "auto") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        loaded = await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "plan"


def test_the_cost_adds_up_and_the_context_is_the_main_conversations() -> None:
    tracker = UsageTracker()
    main = Usage(turn_id="t", model="m", input_tokens=100, cache_read_input_tokens=50, output_tokens=10,
                 cost_usd=0.25, context_window=200_000)
    sub = main.model_copy(update={"input_tokens": 9_000, "parent_tool_use_id": "toolu_task", "cost_usd": 0.5})
    assert tracker.update(main).used == 160
    update = tracker.update(sub)
    assert (update.used, update.size, update.cost.amount if update.cost else None) == (160, 200_000, 0.75)
    assert tracker.update(main.model_copy(update={"cost_usd": None})).cost is None  # unknown from then on


def test_a_load_never_widens_the_mode_the_agent_started_in() -> None:
    def told(mode: M) -> list[Any]:
        return [PermissionModeRecord(mode=mode, previous=M.ASK)]

    assert restored_mode(told(M.PLAN), M.ASK) is M.PLAN
    assert restored_mode(told(M.ACCEPT_EDITS), M.AUTO) is M.ACCEPT_EDITS
    assert restored_mode(told(M.ACCEPT_EDITS), M.ASK) is None  # wider than asked for now
    assert restored_mode(told(M.AUTO), M.ASK) is None
    assert restored_mode([], M.ASK) is None
