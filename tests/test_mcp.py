"""MCP tools against real servers: tests/mcp_servers/sdk_server.py (the official SDK,
over stdio and streamable HTTP) and raw_server.py (hand-written answers the SDK never
gives: malformed results, a result after a cancel, a confirmed cancel over stdio)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.protocol import SideEffects, ToolState
from agent_tui.core.calls.tool import InvalidInput
from agent_tui.mcp import McpManager, ServerConfig, ServerState, load_config, load_mcp, tool_name
from agent_tui.settings.mcp_servers import Transport
from tests.harness import told
from tests.mcp_support import (RAW_SERVER, SDK_SERVER, call, ctx_for, free_port, listening,
                               records, stdio, wait_for_record, write)


# ----------------------------------------------------------------------------- helpers


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The SDK server over streamable HTTP on a free port; yields (url, record file)."""
    record = tmp_path / "http-record.jsonl"
    port = free_port()
    argv = [sys.executable, SDK_SERVER, str(record), "--http", str(port)]
    with listening(argv, port, tmp_path / "http-server.log") as url:
        yield url, record


# ----------------------------------------------------------------------------- config


def test_config_project_and_user_files_load_and_project_wins(tmp_path: Path) -> None:
    ws, user = tmp_path / "ws", tmp_path / "cfg"
    write(user / "mcp.json", json.dumps({"mcpServers": {
        "shared": {"command": "user-cmd"},
        "mine": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    }}))
    write(ws / ".mcp.json", json.dumps({"mcpServers": {
        "shared": {"command": "proj-cmd", "args": ["--x", "${HOME_DIR:-/home}"], "env": {"K": "v"}},
    }}))
    cfg = load_config(ws, user_config_dir=user, environ={"TOKEN": "t0k"})
    assert cfg.problems == []
    by_name = {s.name: s for s in cfg.servers}
    assert by_name["shared"].command == "proj-cmd"
    assert by_name["shared"].args == ["--x", "/home"]
    assert by_name["shared"].source == ws / ".mcp.json"
    assert by_name["mine"].transport is Transport.HTTP
    assert by_name["mine"].headers == {"Authorization": "Bearer t0k"}


def test_config_json_error_names_file_line_and_column_and_others_still_load(tmp_path: Path) -> None:
    ws, user = tmp_path / "ws", tmp_path / "cfg"
    write(user / "mcp.json", json.dumps({"mcpServers": {"good": {"command": "ok"}}}))
    bad = write(ws / ".mcp.json", '{"mcpServers": {\n  "x": {"command": "a",}\n}}')
    cfg = load_config(ws, user_config_dir=user, environ={})
    assert [s.name for s in cfg.servers] == ["good"]
    [problem] = cfg.problems
    assert problem.file == bad and problem.line == 2 and problem.column is not None
    assert f"{bad}:2:" in str(problem)


def test_config_bad_server_entries_are_reported_and_skipped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".mcp.json", json.dumps({"mcpServers": {
        "ok": {"command": "fine"},
        "nocmd": {"args": ["x"]},
        "old": {"type": "sse", "url": "h/sse"},
        "bad name": {"command": "x"},
        "a__b": {"command": "x"},
        "novar": {"command": "${MISSING_VAR}"},
        "weird": {"type": "carrier-pigeon"},
    }}))
    cfg = load_config(ws, user_config_dir=tmp_path / "none", environ={})
    assert [s.name for s in cfg.servers] == ["ok"]
    problems = {p.server: p.message for p in cfg.problems}
    assert set(problems) == {"nocmd", "old", "bad name", "a__b", "novar", "weird"}
    assert "command" in problems["nocmd"] and "http://" in problems["old"]
    assert "MISSING_VAR" in problems["novar"]


def test_load_mcp_reads_user_dir_from_xdg_and_starts_nothing(tmp_path: Path) -> None:
    write(tmp_path / "xdg" / "agent-tui" / "mcp.json", json.dumps({"mcpServers": {"u": {"command": "x"}}}))
    manager = load_mcp(tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "MCP_TOOL_TIMEOUT": "2500"},
                       log_dir=tmp_path / "logs")
    [status] = manager.status()
    assert status.name == "u" and status.state is ServerState.NOT_STARTED
    assert manager.call_timeout_s == 2.5


def test_tool_names_are_safe_and_bounded() -> None:
    assert tool_name("srv", "get-thing") == "mcp__srv__get-thing"
    assert tool_name("srv", "a.b/c") == "mcp__srv__a_b_c"
    long = tool_name("srv", "x" * 100)
    assert len(long) == 64 and long.startswith("mcp__srv__")


# ----------------------------------------------------------------------------- stdio


@pytest.mark.asyncio
async def test_stdio_tools_are_named_with_server_schema_and_read_only_hint(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("t", SDK_SERVER, str(record)))
    assert set(tools.names()) == {"mcp__t__echo", "mcp__t__slow", "mcp__t__stubborn", "mcp__t__peek",
                                  "mcp__t__crash", "mcp__t__picture", "mcp__t__add_tool"}
    echo, slow = tools.get("mcp__t__echo"), tools.get("mcp__t__slow")
    assert echo.read_only and not slow.read_only
    assert echo.input_schema()["required"] == ["text"]
    assert echo.spec()["input_schema"]["properties"]["text"]["type"] == "string"
    with pytest.raises(InvalidInput, match="text"):
        echo.parse({})
    with pytest.raises(InvalidInput, match="seconds"):
        slow.parse({"seconds": "soon"})
    [status] = manager.status()
    assert status.state is ServerState.READY and status.pid and len(status.tools) == 7

    result, _ = await call(tools, "mcp__t__echo", {"text": "hi"}, op="op-echo")
    assert result.outcome is ToolState.SUCCEEDED and result.content == "echo: hi"
    assert result.side_effects is SideEffects.NONE
    [rec] = records(record)
    assert rec["meta"]["agent_tui/operation_id"] == "op-echo"
    assert rec["request_id"] == result.details["request_id"]


@pytest.mark.asyncio
async def test_stdio_cancel_reaches_the_right_request_and_silence_is_unknown(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("t", SDK_SERVER, str(record)), confirm_s=1.0)
    pid = manager.status()[0].pid

    result, _ = await call(tools, "mcp__t__slow", {"seconds": 30}, cancel_on_start=record, op="op-slow")
    # The SDK's stdio server stops the tool but, as the spec says, does not answer a
    # cancelled request: nothing confirms it, so the outcome is unknown.
    assert result.outcome is ToolState.UNKNOWN and result.is_error
    text = told(result)
    assert text.startswith("Result unknown") and text.endswith("Verify before retrying.")
    assert text.count("before retrying") == 1 and ".)" not in text, text
    assert result.ended_by is CancelReason.USER_INTERRUPT  # not waited out: no "slept 30"
    cancelled = await wait_for_record(record, "cancelled")
    assert cancelled["request_id"] == result.details["request_id"]
    assert cancelled["meta"]["agent_tui/operation_id"] == "op-slow"

    # Esc never kills the server, and the session is still usable.
    assert psutil.pid_exists(pid) and manager.status()[0].state is ServerState.READY
    again, _ = await call(tools, "mcp__t__slow", {"seconds": 0.05}, op="op-2")
    assert again.outcome is ToolState.SUCCEEDED and again.content == "slept 0.05"


@pytest.mark.asyncio
async def test_an_unconfirmed_read_only_call_is_worded_once_without_a_retry_warning(
    make_manager: Any, tmp_path: Path,
) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(stdio("t", SDK_SERVER, str(record)), confirm_s=0.5)
    result, _ = await call(tools, "mcp__t__peek", {"seconds": 30}, cancel_on_start=record)
    assert result.outcome is ToolState.UNKNOWN and result.side_effects is SideEffects.NONE
    assert told(result) == (
        "Result unknown: the outcome of this call could not be confirmed (Interrupted by the "
        "user: asked MCP server 't' to cancel peek, but the server did not confirm within 0.5 s; "
        "no result). It changed nothing (read-only): call it again if the result is needed."
    )


@pytest.mark.asyncio
async def test_stdio_server_that_ignores_cancel_is_unknown_within_bound(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(stdio("t", SDK_SERVER, str(record)), confirm_s=0.5)
    result, _ = await call(tools, "mcp__t__stubborn", {"seconds": 3}, cancel_on_start=record)
    assert result.outcome is ToolState.UNKNOWN  # not waited out: it would have succeeded
    assert "did not confirm within 0.5 s" in result.content
    assert [r["event"] for r in records(record)] == ["start"]  # still running remotely


@pytest.mark.asyncio
async def test_call_timeout_cancels_like_an_interrupt(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    _, tools = await make_manager(stdio("t", SDK_SERVER, str(record)), call_timeout_s=0.3, confirm_s=0.3)
    result, _ = await call(tools, "mcp__t__slow", {"seconds": 30})
    assert result.outcome is ToolState.UNKNOWN and result.ended_by is CancelReason.TIMEOUT
    assert result.content.startswith("Timed out")
    await wait_for_record(record, "cancelled")


# ----------------------------------------------------------------------------- http


@pytest.mark.asyncio
async def test_http_cancel_is_confirmed_and_server_stays_usable(make_manager: Any, http_server: Any) -> None:
    url, record = http_server
    web = ServerConfig(name="web", transport=Transport.HTTP, source=Path("test"), url=url)
    manager, tools = await make_manager(web, confirm_s=5.0)
    assert manager.status()[0].state is ServerState.READY
    assert tools.get("mcp__web__echo").read_only

    result, _ = await call(tools, "mcp__web__slow", {"seconds": 30}, cancel_on_start=record, op="op-web")
    # Over streamable HTTP the SDK server ends a cancelled request with -32800:
    # the server confirmed it stopped.
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING, result.content
    assert result.details["confirmed"] is True  # so the 5 s confirm window was not waited out
    text = told(result)
    assert "confirmed it stopped" in text and "may have partly run" in text
    assert text.count("Interrupted") == 1, text
    cancelled = await wait_for_record(record, "cancelled")
    assert cancelled["request_id"] == result.details["request_id"]
    assert cancelled["meta"]["agent_tui/operation_id"] == "op-web"

    again, _ = await call(tools, "mcp__web__echo", {"text": "still here"}, op="op-web-2")
    assert again.outcome is ToolState.SUCCEEDED and again.content == "echo: still here"
    assert records(record)[-1]["meta"]["agent_tui/operation_id"] == "op-web-2"


@pytest.mark.asyncio
async def test_http_server_that_ignores_cancel_is_unknown(make_manager: Any, http_server: Any) -> None:
    url, record = http_server
    web = ServerConfig(name="web", transport=Transport.HTTP, source=Path("test"), url=url)
    _, tools = await make_manager(web, confirm_s=0.5)
    result, _ = await call(tools, "mcp__web__stubborn", {"seconds": 2}, cancel_on_start=record)
    assert result.outcome is ToolState.UNKNOWN  # not waited out: it would have succeeded
    assert "did not confirm within 0.5 s" in result.content


@pytest.mark.asyncio
async def test_http_server_not_listening_fails_clearly(make_manager: Any) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    web = ServerConfig(name="web", transport=Transport.HTTP, source=Path("test"), url=url)
    manager, _ = await make_manager(web)
    [status] = manager.status()
    assert status.state is ServerState.FAILED and url in (status.error or "")


# ----------------------------------------------------------------------------- raw answers


@pytest.mark.asyncio
async def test_result_after_cancel_is_recorded_as_the_fact(make_manager: Any) -> None:
    _, tools = await make_manager(stdio("late", RAW_SERVER, "late"))
    result, _ = await call(tools, "mcp__late__work", {"n": 1}, cancel_after=0.2)
    assert result.outcome is ToolState.SUCCEEDED and result.content == "finished anyway"
    assert result.details["arrived_after_cancel"] is True


@pytest.mark.asyncio
async def test_error_answer_after_cancel_over_stdio_is_a_confirmed_cancel(make_manager: Any) -> None:
    _, tools = await make_manager(stdio("conf", RAW_SERVER, "confirm"))
    result, _ = await call(tools, "mcp__conf__work", {"n": 1}, cancel_after=0.2)
    assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING and result.details["confirmed"]


@pytest.mark.asyncio
async def test_malformed_result_is_a_clear_tool_error(make_manager: Any) -> None:
    manager, tools = await make_manager(stdio("bad", RAW_SERVER, "malformed"))
    result, _ = await call(tools, "mcp__bad__work", {"n": 1})
    assert result.outcome is ToolState.FAILED and result.is_error
    assert "malformed result" in result.content and "content" in result.content
    assert manager.status()[0].state is ServerState.READY


# ----------------------------------------------------------------------------- failures


@pytest.mark.asyncio
async def test_crash_mid_call_is_unknown_and_the_next_call_restarts(make_manager: Any, tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    manager, tools = await make_manager(stdio("t", SDK_SERVER, str(record)))
    first_pid = manager.status()[0].pid
    result, _ = await call(tools, "mcp__t__crash", {})
    assert result.outcome is ToolState.UNKNOWN and result.is_error
    assert "closed the connection" in result.content and "crashing on purpose" in result.content
    deadline = time.monotonic() + 5
    while manager.status()[0].state is not ServerState.FAILED and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    status = manager.status()[0]
    assert status.state is ServerState.FAILED and "crashing on purpose" in (status.error or "")

    again, _ = await call(tools, "mcp__t__echo", {"text": "back"})
    assert again.outcome is ToolState.SUCCEEDED
    status = manager.status()[0]
    assert status.restarts == 1 and status.pid != first_pid


@pytest.mark.asyncio
async def test_hang_at_start_fails_within_start_timeout_and_calls_fail_fast(make_manager: Any, tmp_path: Path) -> None:
    hang = stdio("hang", SDK_SERVER, str(tmp_path / "rec.jsonl"), "--hang-start")
    manager, tools = await make_manager(hang, start_timeout_s=1.0)
    [status] = manager.status()
    assert status.state is ServerState.FAILED
    assert "did not start within 1 s" in (status.error or "") and "hanging at start" in (status.error or "")
    assert tools.names() == []  # never listed: the model never sees its tools


@pytest.mark.asyncio
async def test_cancel_while_waiting_for_a_starting_server(tmp_path: Path) -> None:
    hang = stdio("hang", SDK_SERVER, str(tmp_path / "rec.jsonl"), "--hang-start")
    manager = McpManager([hang], workspace=tmp_path, log_dir=tmp_path / "logs", start_timeout_s=10)
    try:
        conn = manager.connections["hang"]
        from mcp_types import Tool as Spec

        from agent_tui.mcp.tool import McpTool

        tool = McpTool(conn, Spec(name="x", input_schema={"type": "object"}))
        scope = CancelScope()
        asyncio.get_running_loop().call_later(0.3, scope.cancel)
        result = await tool.run(tool.parse({}), ctx_for(scope))
        # Not the 10 s start timeout's failure: the cancel ended the wait.
        assert result.outcome is ToolState.CANCELLED_WHILE_RUNNING
        assert result.side_effects is SideEffects.NONE and "was not called" in result.content
    finally:
        await manager.shutdown()


@pytest.mark.asyncio
async def test_command_not_found_is_a_clear_error(make_manager: Any) -> None:
    missing = ServerConfig(name="nope", transport=Transport.STDIO, source=Path("test"), command="/no/such/server")
    manager, _ = await make_manager(missing)
    [status] = manager.status()
    assert status.state is ServerState.FAILED and "command not found" in (status.error or "")


# ----------------------------------------------------------------------------- shutdown


@pytest.mark.asyncio
async def test_shutdown_ends_the_stdio_server_process(tmp_path: Path) -> None:
    manager = McpManager([stdio("t", SDK_SERVER, str(tmp_path / "rec.jsonl"))], workspace=tmp_path,
                         log_dir=tmp_path / "logs")
    seen: list[ServerState] = []
    manager.on_status(lambda s: seen.append(s.state))
    manager.start()
    await manager.wait_started(15)
    pid = manager.status()[0].pid
    assert pid is not None and psutil.pid_exists(pid)
    proc = psutil.Process(pid)
    assert await manager.shutdown() == []
    assert not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    assert manager.status()[0].state is ServerState.STOPPED
    assert seen == [ServerState.STARTING, ServerState.READY, ServerState.STOPPED]


@pytest.mark.asyncio
async def test_without_cgroups_a_stdio_server_runs_tagged_and_shutdown_ends_it(
    tmp_path: Path,
) -> None:
    """Where no cgroup can be made, a server starts as before: tagged, in no cgroup of
    ours, and ended by its group and tag."""
    from agent_tui.mcp import procs
    from agent_tui.runtime.process.cgroup_tree import set_enabled

    set_enabled(False)
    try:
        manager = McpManager([stdio("t", SDK_SERVER, str(tmp_path / "rec.jsonl"))],
                             workspace=tmp_path, log_dir=tmp_path / "logs")
        manager.start()
        await manager.wait_started(15)
        [status] = manager.status()
        assert status.state is ServerState.READY and status.pid is not None
        conn = manager.connections["t"]
        assert procs.cgroup_of(conn.tag) is None
        proc = psutil.Process(status.pid)
        assert "sdk_server" in " ".join(proc.cmdline())  # the program itself, no wrapper
        assert proc.environ().get(procs.SERVER_TAG_ENV) == conn.tag
        assert await manager.shutdown() == []
        assert not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    finally:
        set_enabled(True)


# ----------------------------------------------------------------------------- content


@pytest.mark.asyncio
async def test_images_reach_the_model_as_image_blocks_and_resources_as_text(make_manager: Any, tmp_path: Path) -> None:
    from agent_tui.core.history.history import check_model_view, model_view
    from agent_tui.core.journal.records import AssistantMessageRecord, ToolResultRecord, UserMessageRecord

    _, tools = await make_manager(stdio("t", SDK_SERVER, str(tmp_path / "rec.jsonl")))
    result, _ = await call(tools, "mcp__t__picture", {})
    assert result.outcome is ToolState.SUCCEEDED
    [image] = result.blocks
    assert image["type"] == "image" and image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png" and image["source"]["data"].startswith("iVBOR")
    lines = result.content.splitlines()
    assert lines[0] == "a picture:"
    assert lines[1].startswith("[image image/png, ") and "attached" in lines[1]
    assert lines[2] == "embedded notes"  # a text resource's text
    assert lines[3] == "[resource file:///data.bin: application/octet-stream, 300 bytes]"

    # The image rides inside the tool_result, after the text.
    records = [
        UserMessageRecord(turn_id="t1", text="show me"),
        AssistantMessageRecord(turn_id="t1", ended="tool_use", blocks=[
            {"type": "tool_use", "id": "toolu_p", "name": "mcp__t__picture", "input": {}}]),
        ToolResultRecord(turn_id="t1", tool_use_id="toolu_p", name="mcp__t__picture",
                         state=result.outcome, content=result.content, blocks=result.blocks),
    ]
    view = model_view(records)
    check_model_view(view)
    [block] = view[-1]["content"]
    assert block["content"] == [{"type": "text", "text": result.content}, image]


@pytest.mark.asyncio
async def test_an_image_over_the_size_cap_is_named_not_sent(make_manager: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_tui.mcp import content

    monkeypatch.setattr(content, "MAX_IMAGE_BYTES", 10)
    _, tools = await make_manager(stdio("t", SDK_SERVER, str(tmp_path / "rec.jsonl")))
    result, _ = await call(tools, "mcp__t__picture", {})
    assert not result.blocks
    assert "[image image/png, " in result.content and "too large to pass on" in result.content


# ----------------------------------------------------------------------------- tool lists


@pytest.mark.asyncio
async def test_a_tool_that_needs_mcp_tasks_is_left_out_and_the_status_says_why(make_manager: Any) -> None:
    manager, tools = await make_manager(stdio("tk", RAW_SERVER, "tasks"))
    assert set(tools.names()) == {"mcp__tk__work", "mcp__tk__either"}
    [status] = manager.status()
    assert status.tools == ["work", "either"]
    assert status.left_out == {"research": "needs MCP tasks (taskSupport: required), which the server does not "
                               "offer (no tasks.requests.tools.call capability on protocol 2025-11-25)"}


@pytest.mark.asyncio
async def test_a_changed_tool_list_is_applied_at_the_turn_boundary_and_told(make_manager: Any, tmp_path: Path) -> None:
    from agent_tui.protocol import TurnEnded, TurnStarted

    manager, tools = await make_manager(stdio("t", SDK_SERVER, str(tmp_path / "rec.jsonl")))
    changes: list[Any] = []
    manager.on_tools_changed(changes.append)
    manager.observe(TurnStarted(turn_id="t1", text="add one"))
    result, _ = await call(tools, "mcp__t__add_tool", {"name": "extra"})
    assert result.content == "added extra"
    conn = manager.connections["t"]
    deadline = time.monotonic() + 5
    while "extra" not in [t.name for t in conn.tools] and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert "extra" in [t.name for t in conn.tools]  # listed again at once...
    assert tools.get("mcp__t__extra") is None and changes == []  # ...offered at the turn's end
    manager.observe(TurnEnded(turn_id="t1", status="completed"))
    assert tools.get("mcp__t__extra") is not None
    [change] = changes
    assert change.server == "t" and change.added == ["mcp__t__extra"] and not change.removed
    again, _ = await call(tools, "mcp__t__extra", {"text": "hi"})
    assert again.outcome is ToolState.SUCCEEDED and again.content == "extra: hi"

    # While idle, a change is applied at once.
    await call(tools, "mcp__t__add_tool", {"name": "more"})
    deadline = time.monotonic() + 5
    while tools.get("mcp__t__more") is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert tools.get("mcp__t__more") is not None
