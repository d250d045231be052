"""MCP tasks (protocol 2025-11-25): tool calls run as tasks through the real manager,
against tests/mcp_servers/task_server.py (hand-written: the SDK's server has no tasks).

A ``required`` tool runs as a task; an ``optional`` one once it proved slow; polling
follows ``pollInterval`` and wakes on ``notifications/tasks/status``; Esc sends
``tasks/cancel`` and the call ends cancelled, or unknown when the server stays silent.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.mcp import ServerConfig, tool_name
from agent_tui.mcp.call import POLL_DEFAULT_S, POLL_MAX_S, POLL_MIN_S, poll_seconds
from agent_tui.mcp.connection import NEEDS_TASKS
from agent_tui.protocol import ToolState
from agent_tui.ui.commands.reports import mcp_report
from tests.mcp_support import SERVERS, ctx_for, records, stdio, wait_for_record

TASK_SERVER = str(SERVERS / "task_server.py")


def task_server(record: Path, mode: str = "tasks", poll_ms: int = 100) -> ServerConfig:
    return stdio("tk", TASK_SERVER, str(record), mode, str(poll_ms))


def seen(record: Path, event: str) -> list[dict[str, Any]]:
    return [r for r in records(record) if r["event"] == event]


async def run(tools: Any, name: str, args: dict[str, Any], *, cancel_on: Path | None = None,
              event: str = "start") -> tuple[Any, float, list[str]]:
    """One call (cancelled as Esc would, once the server started the work); returns the
    result, the seconds since the cancel (or the start), and what the call emitted."""
    tool = tools.get(tool_name("tk", name))
    assert tool is not None, tools.names()
    scope, emitted, marks = CancelScope(), [], [time.monotonic()]

    async def cancel_when_started() -> None:
        assert cancel_on is not None
        await wait_for_record(cancel_on, event, timeout=20.0)
        marks.append(time.monotonic())
        scope.cancel(CancelReason.USER_INTERRUPT)

    watcher = asyncio.create_task(cancel_when_started()) if cancel_on is not None else None
    ctx = ctx_for(scope)
    ctx.emit_output = emitted.append
    try:
        result = await tool.run(tool.parse(args), ctx)
    finally:
        if watcher is not None:
            watcher.cancel()
    return result, time.monotonic() - marks[-1], emitted


@pytest.mark.asyncio
async def test_a_required_task_tool_runs_as_a_task_polled_at_the_servers_interval(
        make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(task_server(record, poll_ms=200).model_copy(update={"task_ttl_ms": 120_000}))
    assert manager.status()[0].left_out == {}
    assert "as MCP tasks: research (always), either (once a call takes 5 s); kept 120 s on the server" in (
        mcp_report(manager.status()).plain)
    result, _, emitted = await run(tools, "research", {"seconds": 1.0})
    assert result.outcome is ToolState.SUCCEEDED, result.content
    assert result.content == "worked 1 s" and result.details["task_id"] == "task-1"
    [created] = seen(record, "tools/call")
    assert created["task"] == {"ttl": 120_000}  # the server's "taskTtl"
    gets = [r["t"] for r in seen(record, "tasks/get")]
    assert len(gets) >= 2, records(record)
    assert min(b - a for a, b in zip(gets, gets[1:])) >= 0.18  # pollInterval 200 ms, honoured
    assert len(seen(record, "tasks/result")) == 1
    assert emitted[0] == "[task working: started]\n" and "[task completed: done]\n" in emitted


@pytest.mark.asyncio
async def test_status_notifications_end_the_wait_without_waiting_out_a_long_poll_interval(
        make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(task_server(record, "notify", poll_ms=8000))
    t0 = time.monotonic()
    result, _, emitted = await run(tools, "research", {"seconds": 0.4})
    assert result.outcome is ToolState.SUCCEEDED and result.content == "worked 0.4 s"
    assert time.monotonic() - t0 < 5.0  # the 8 s poll was cut short by the notification
    assert seen(record, "tasks/get") == []
    assert "[task working: half way]\n" in emitted
    assert [r["task"] for r in seen(record, "tools/call")] == [{"ttl": 3_600_000}]  # an hour by default


@pytest.mark.asyncio
async def test_esc_cancels_the_task_on_the_server_and_the_call_ends_cancelled(
        make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(task_server(record), confirm_s=1.0)
    result, since_cancel, _ = await run(tools, "research", {"seconds": 60}, cancel_on=record)
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING, result.content
    assert result.ended_by is CancelReason.USER_INTERRUPT and result.details["confirmed"] is True
    assert "confirmed it cancelled task task-1 (research)" in result.content
    assert since_cancel < 1.5  # within the cancel budget
    assert [r["task"] for r in seen(record, "tasks/cancel")] == ["task-1"]
    assert seen(record, "notifications/cancelled") == []  # a task is cancelled with tasks/cancel only


@pytest.mark.asyncio
async def test_a_server_silent_on_tasks_cancel_leaves_the_call_unknown_within_the_budget(
        make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(task_server(record, "deaf"), confirm_s=0.5)
    result, since_cancel, _ = await run(tools, "research", {"seconds": 60}, cancel_on=record)
    assert result.outcome is ToolState.UNKNOWN, result.content
    assert "cancel task task-1 (research), but the server did not confirm within 0.5 s" in result.content
    assert since_cancel < 1.5
    assert len(seen(record, "tasks/cancel")) == 1


@pytest.mark.asyncio
async def test_a_task_that_ends_before_the_cancel_gives_its_result(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(task_server(record, "late"), confirm_s=1.0)
    result, since_cancel, _ = await run(tools, "research", {"seconds": 60}, cancel_on=record)
    assert result.outcome is ToolState.SUCCEEDED and result.content == "worked 60 s"  # the fact
    assert result.details["arrived_after_cancel"] is True and since_cancel < 1.5


@pytest.mark.asyncio
async def test_a_cancel_while_the_task_is_being_created_cancels_it_once_it_exists(
        make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(task_server(record, "slow"), confirm_s=1.0)
    result, since_cancel, _ = await run(tools, "research", {"seconds": 60}, cancel_on=record, event="creating")
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING, result.content
    assert since_cancel < 1.5
    [notice] = seen(record, "notifications/cancelled")  # for the tools/call, before the task existed
    assert [r["task"] for r in seen(record, "tasks/cancel")] == ["task-1"]
    assert notice["t"] < seen(record, "tasks/cancel")[0]["t"]


@pytest.mark.asyncio
async def test_the_tool_timeout_cancels_a_task_on_the_server(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(task_server(record), call_timeout_s=0.5, confirm_s=1.0)
    result, _, _ = await run(tools, "research", {"seconds": 60})
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING and result.ended_by is CancelReason.TIMEOUT
    assert result.details["confirmed"] is True and "confirmed it cancelled task task-1" in result.content
    assert len(seen(record, "tasks/cancel")) == 1


@pytest.mark.asyncio
async def test_an_optional_task_tool_runs_plainly_until_a_call_of_it_proved_slow(
        make_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_tui.mcp import tool as mcp_tool

    monkeypatch.setattr(mcp_tool, "TASK_AFTER_S", 0.3)
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(task_server(record))
    quick, _, _ = await run(tools, "either", {"seconds": 0})
    slow, _, _ = await run(tools, "either", {"seconds": 0.4})
    assert manager.status()[0].task_tools == {"research": "always", "either": "now: a call took 0.3 s"}
    tasked, _, _ = await run(tools, "either", {"seconds": 0.2})
    plain, _, _ = await run(tools, "plain", {"seconds": 0.4})
    again, _, _ = await run(tools, "plain", {"seconds": 0})
    assert [r.outcome for r in (quick, slow, tasked, plain, again)] == [ToolState.SUCCEEDED] * 5
    assert [r["task"] is not None for r in seen(record, "tools/call")] == [False, False, True, False, False]
    assert "task_id" in tasked.details and "task_id" not in slow.details


@pytest.mark.asyncio
async def test_without_the_servers_task_capability_a_required_tool_is_left_out(
        make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(task_server(record, "nocap"))
    [status] = manager.status()
    assert status.left_out == {"research": NEEDS_TASKS}
    assert set(tools.names()) == {"mcp__tk__either", "mcp__tk__plain"}
    either = tools.get("mcp__tk__either")
    either.slow = True  # even a slow optional tool is called plainly here
    result, _, _ = await run(tools, "either", {"seconds": 0})
    assert result.outcome is ToolState.SUCCEEDED
    assert [r["task"] for r in seen(record, "tools/call")] == [None]


@pytest.mark.asyncio
async def test_a_task_the_server_loses_track_of_ends_unknown_and_its_status_is_shown_printable(
        make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(task_server(record, "forget"))
    result, _, emitted = await run(tools, "research", {"seconds": 30})
    assert result.outcome is ToolState.UNKNOWN, result.content
    assert "ran research as task task-1, then could not tell its state" in result.content
    assert "no such task" in result.content and "may or may not have taken effect" in result.content
    assert emitted == ["[task working: started [2J]\n"]  # the escape character is not passed on


def test_the_poll_interval_is_honoured_within_bounds() -> None:
    assert poll_seconds(250) == 0.25
    assert poll_seconds(None) == POLL_DEFAULT_S
    assert poll_seconds(0) == POLL_MIN_S  # a hostile 0 does not spin us
    assert poll_seconds(10**12) == POLL_MAX_S
