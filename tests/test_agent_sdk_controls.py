"""The Agent SDK's questions about the session, through the real Python SDK: context
usage, MCP status, toggle and reconnect, ``rewind_files``, ``stop_task``; and the
messages that go with them: ``session_state_changed``, replayed user messages,
thinking and usage in ``stream_event``, background jobs as task messages.

One ``ClaudeSDKClient`` process against the fake API; each answer and message is
checked against the shapes in ``tests/agent_sdk_shapes`` (written from the SDKs'
types). The stream's exact events are checked in-process, on ``Messages`` itself.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent_tui.protocol import (
    RequestPurpose,
    ResponseStarted,
    TextDelta,
    ThinkingDelta,
    ToolState,
    ToolStateChanged,
    Usage,
)
from agent_tui.sdk_protocol.messages import Messages
from tests.agent_sdk_support import cli_script, mismatches, shape
from tests.fake_api.replies import Reply
from tests.fake_api.usage import START_OUTPUT_TOKENS
from tests.print_agent import marked, wait_until

pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    ThinkingBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)

def check(name: str, value: Any) -> None:
    assert mismatches(value, shape(name)) == [], (name, value)


def test_shape_checker_catches_a_wrong_message():
    good = {"type": "system", "subtype": "session_state_changed", "state": "idle",
            "uuid": "u", "session_id": "s"}
    check("session_state_changed", good)
    assert mismatches({**good, "state": 3}, shape("session_state_changed")) == [
        ".state: 3 is not str"]
    assert mismatches({"canRewind": "yes"}, shape("rewind_files")) == [
        ".canRewind: 'yes' is not bool"]
    assert mismatches({"type": "user"}, shape("session_state_changed"))[0] == (
        ".type: 'user' != 'system'")
    assert mismatches({"x": True}, {"x": "int"}) == [".x: True is not int"]


def test_the_stream_carries_thinking_and_the_requests_usage_as_claude_codes_does():
    sent: list[dict[str, Any]] = []
    messages = Messages(sent.append, partial=True)
    messages(ResponseStarted(turn_id="t", model="m", message_id="msg_api1", input_tokens=90,
                             cache_read_input_tokens=30, cache_creation_input_tokens=4,
                             output_tokens=1))
    messages(ThinkingDelta(turn_id="t", text="let me "))
    messages(ThinkingDelta(turn_id="t", text="think"))
    messages(TextDelta(turn_id="t", text="hello"))
    messages(Usage(turn_id="t", model="m", input_tokens=120, output_tokens=7,
                   cache_read_input_tokens=30, cache_creation_input_tokens=4))
    events = [m["event"] for m in sent if m["type"] == "stream_event"]
    assert [e["type"] for e in events] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_stop", "content_block_start", "content_block_delta",
        "content_block_stop", "message_delta", "message_stop"]
    stream = [m for m in sent if m["type"] == "stream_event"]
    check("stream_message_start", stream[0])
    started = {"input_tokens": 90, "cache_creation_input_tokens": 4,
               "cache_read_input_tokens": 30, "output_tokens": 1}
    assert events[0]["message"]["usage"] == started  # message_start's, as the API said it
    assert events[0]["message"]["id"] == "msg_api1"
    check("stream_thinking_start", stream[1])
    check("stream_thinking_delta", stream[2])
    assert "".join(e["delta"].get("thinking", "") for e in events[2:4]) == "let me think"
    assert events[5]["index"] == 1 and events[6]["delta"] == {"type": "text_delta", "text": "hello"}
    check("stream_message_delta", stream[8])
    assert events[8]["delta"]["stop_reason"] == "end_turn"
    assert events[8]["usage"]["input_tokens"] == 120 and events[8]["usage"]["output_tokens"] == 7
    assert events[8]["usage"]["cache_read_input_tokens"] == 30
    thinking, text = [m for m in sent if m["type"] == "assistant"]
    check("assistant_thinking", thinking)
    assert thinking["message"]["content"][0]["thinking"] == "let me think"
    assert text["message"]["content"] == [{"type": "text", "text": "hello"}]
    kinds = [m["event"]["type"] if m["type"] == "stream_event" else m["type"] for m in sent]
    stops = [i for i, kind in enumerate(kinds) if kind == "content_block_stop"]
    assert [kinds[i - 1] for i in stops] == ["assistant", "assistant"]  # Claude Code's order
    for message in (thinking, text):  # the response's usage, as Claude Code's carry it
        assert message["message"]["usage"] == started and message["message"]["id"] == "msg_api1"


@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "stop_sequence", "pause_turn",
                                  "model_context_window_exceeded", "end_turn"])
def test_message_delta_carries_the_stop_reason_the_api_gave(stop):
    sent: list[dict[str, Any]] = []
    messages = Messages(sent.append, partial=True)
    messages(ResponseStarted(turn_id="t", model="m", input_tokens=5))
    messages(TextDelta(turn_id="t", text="cut"))
    messages(Usage(turn_id="t", model="m", input_tokens=5, output_tokens=9, stop_reason=stop))
    [delta] = [m["event"] for m in sent if m["type"] == "stream_event"
               and m["event"]["type"] == "message_delta"]
    assert delta["delta"]["stop_reason"] == stop and delta["usage"]["output_tokens"] == 9
    assert messages._stop_reason == stop  # the turn's result says it too


def test_a_sub_agents_messages_carry_its_own_usage_and_other_requests_open_no_message():
    sent: list[dict[str, Any]] = []
    messages = Messages(sent.append, partial=True)
    messages(ResponseStarted(turn_id="t", model="m", input_tokens=7,
                             purpose=RequestPurpose.COMPACTION))
    assert sent == []  # a compaction's request is not the conversation's
    messages(ResponseStarted(turn_id="t", model="m", input_tokens=11, parent_tool_use_id="call_1"))
    assert sent == []  # a sub-agent's stream is not forwarded
    messages(ToolStateChanged(turn_id="t", tool_use_id="call_2", name="read_file",
                              state=ToolState.QUEUED, input={"path": "a"},
                              parent_tool_use_id="call_1"))
    [call] = [m for m in sent if m["type"] == "assistant"]
    assert call["parent_tool_use_id"] == "call_1"
    assert call["message"]["usage"]["input_tokens"] == 11


def test_mcp_status_shows_how_a_server_is_reached_but_not_its_secrets():
    from agent_tui.mcp_catalog.status import ServerState, ServerStatus
    from agent_tui.sdk_protocol.controls import _server
    from agent_tui.settings.mcp_servers import Transport

    web = _server(ServerStatus(
        name="web", transport=Transport.HTTP, source="s", target="t", state=ServerState.READY,
        url="https://bob:hunter2@mcp.example/v1/mcp?token=abc#x", server_info=("Web", "2.1"),
        tools=["fetch"]))
    check("mcp_status", {"mcpServers": [web]})
    assert web["config"] == {"type": "http", "url": "https://mcp.example/v1/mcp"}
    assert web["serverInfo"] == {"name": "Web", "version": "2.1"}
    local = _server(ServerStatus(
        name="local", transport=Transport.STDIO, source="s", target="t",
        state=ServerState.STARTING, command="node", args=["srv.js"]))
    assert local["config"] == {"type": "stdio", "command": "node", "args": ["srv.js"]}
    assert "serverInfo" not in local and "tools" not in local


def test_the_context_grid_is_drawn_as_claude_codes():
    """Figures Claude Code 2.1.332 reported for a 1M window: a square per 5,000 tokens,
    a category's last square part full, the autocompact buffer drawn last."""
    from agent_tui.sdk_protocol.context_usage import grid

    def category(name: str, tokens: int, kind: str = "used") -> dict[str, Any]:
        return {"name": name, "tokens": tokens, "color": "c", "kind": kind}

    rows = grid([category("System prompt", 1835), category("System tools", 5654),
                 category("Messages", 2633), category("Autocompact buffer", 33000, "buffer"),
                 category("Free space", 957878, "free")], 1_000_000)
    squares = [(s["categoryName"], s["squareFullness"]) for row in rows for s in row]
    assert len(rows) == 10 and len(squares) == 200
    assert squares[:4] == [("System prompt", 0.37), ("System tools", 1.0), ("Messages", 0.53),
                           ("Free space", 1.0)]
    assert squares[-8:] == [("Free space", 1.0)] + [("Autocompact buffer", 1.0)] * 6 + [
        ("Autocompact buffer", 0.6)]


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict) -> dict:
    return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']:g}"}]}


async def _session(tmp_path: Path, fake_api: Any) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "f.txt").write_text("one\n")
    (workspace / "CLAUDE.md").write_text("Answer briefly.\n" * 20)
    opts = ClaudeAgentOptions(
        cli_path=str(cli_script(tmp_path, fake_api)), cwd=str(workspace),
        model="claude-sonnet-5-5", permission_mode="bypassPermissions",
        include_partial_messages=True, extra_args={"replay-user-messages": None},
        enable_file_checkpointing=True, env={"CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"},
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add]),
                     "broken": {"type": "stdio", "command": str(tmp_path / "no-such-server")}})
    seen: list[Any] = []

    async with ClaudeSDKClient(options=opts) as client:
        async def turn(prompt: str) -> list[Any]:
            await client.query(prompt)
            got = [m async for m in client.receive_response()]
            seen.extend(got)
            return got

        # thinking, text and usage in the stream; the user message echoed with its uuid
        fake_api.enqueue(Reply.message([{"type": "thinking", "thinking": "let me think"},
                                        {"type": "text", "text": "hello"}]))
        got = await turn("think first")
        [thinking] = [b for m in got if isinstance(m, AssistantMessage) for b in m.content
                      if isinstance(b, ThinkingBlock)]
        assert thinking.thinking == "let me think"
        deltas = [m.event for m in got if isinstance(m, StreamEvent)
                  and m.event["type"] == "message_delta"]
        counts = deltas[-1]["usage"]
        assert counts["output_tokens"] > 0 and counts["input_tokens"] + counts[
            "cache_creation_input_tokens"] + counts["cache_read_input_tokens"] > 0
        [echo] = [m for m in got if isinstance(m, UserMessage) and m.content == "think first"]
        assert echo.uuid

        # a message that starts no turn still gets its result, saying why
        got = await turn("/nope now")
        unknown = got[-1]
        assert isinstance(unknown, ResultMessage) and unknown.is_error and unknown.num_turns == 0
        assert not [m for m in got if isinstance(m, (AssistantMessage, StreamEvent))]
        assert "unknown command /nope" in str(unknown.errors)

        async def odd_message() -> Any:
            yield {"type": "user", "message": {"role": "user", "content": [
                {"type": "document", "source": {}}]}, "parent_tool_use_id": None}

        await client.query(odd_message())
        odd = [m async for m in client.receive_response()][-1]
        assert isinstance(odd, ResultMessage) and odd.is_error
        assert "content block of type 'document'" in str(odd.errors)

        # a file written in the next turn, and the state around it
        fake_api.enqueue(Reply.tool_use("write_file", {"path": "f.txt", "content": "two\n"}),
                         Reply.text("written"))
        got = await turn("write it")
        [written] = [m for m in got if isinstance(m, UserMessage) and m.content == "write it"]
        events = [m.event for m in got if isinstance(m, StreamEvent)]
        assert [e["type"] for e in events if e["type"].startswith("message")] == [
            "message_start", "message_delta", "message_stop"] * 2
        assert [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"] == [
            "tool_use", "end_turn"]
        # message_start has what the API said then; each assistant message carries it
        starts = [e["message"] for e in events if e["type"] == "message_start"]
        told = fake_api.usage[-2:]
        assert [m["usage"] for m in starts] == [
            {**u.as_usage(), "output_tokens": START_OUTPUT_TOKENS} for u in told]
        assert told[0].total_input_tokens > 0
        answers = [m for m in got if isinstance(m, AssistantMessage)]
        assert [(m.message_id, m.usage) for m in answers] == [
            (s["id"], s["usage"]) for s in starts]
        assert (workspace / "f.txt").read_text() == "two\n"

        # the context the conversation fills, with the last request's usage
        usage = await client.get_context_usage()
        check("context_usage", usage)
        ids = [c["id"] for c in usage["categories"]]
        assert ids == ["system_prompt", "memory_files", "system_tools", "messages",
                       "autocompact_buffer", "free_space"]  # Claude Code's order
        assert usage["model"] == "claude-sonnet-5-5" and 0 < usage["totalTokens"] < usage["maxTokens"]
        assert usage["apiUsage"]["output_tokens"] > 0
        tokens = {c["id"]: c["tokens"] for c in usage["categories"]}
        assert usage["autoCompactThreshold"] + tokens["autocompact_buffer"] == usage["maxTokens"]
        assert tokens["free_space"] == (usage["maxTokens"] - usage["totalTokens"]
                                        - tokens["autocompact_buffer"])
        grid = [square for row in usage["gridRows"] for square in row]
        assert len(usage["gridRows"]) == 10 and len(grid) in (100, 200)
        assert grid[0]["categoryName"] == "System prompt"
        assert grid[-1]["categoryName"] == "Autocompact buffer"  # drawn last, as Claude Code does
        [mcp_tool] = usage["mcpTools"]
        assert mcp_tool["name"] == "mcp__calc__add" and mcp_tool["serverName"] == "calc"
        assert mcp_tool["tokens"] > 0 and mcp_tool["isLoaded"]
        [memory] = usage["memoryFiles"]
        assert memory == {"path": str(workspace / "CLAUDE.md"), "type": "Project",
                          "tokens": memory["tokens"]} and memory["tokens"] > 50
        breakdown = usage["messageBreakdown"]
        [write] = breakdown["toolCallsByType"]
        assert write["name"] == "Write" and write["callTokens"] > 0 and write["resultTokens"] > 0
        assert breakdown["toolCallTokens"] == write["callTokens"]
        assert breakdown["userMessageTokens"] > 0 and breakdown["assistantMessageTokens"] > 0

        # MCP servers: status, off and on again, reconnect, unknown names
        status = await client.get_mcp_status()
        check("mcp_status", status)
        broken, calc = sorted(status["mcpServers"], key=lambda s: s["name"])
        assert calc["name"] == "calc" and calc["status"] == "connected"
        assert broken["status"] == "failed" and broken["error"] and "tools" not in broken
        assert calc["scope"] == "dynamic" and calc["source"] == "sdk"
        assert calc["transport"] == "sdk" and [t["name"] for t in calc["tools"]] == ["add"]
        assert calc["serverInfo"] == {"name": "calc", "version": "1.0.0"}  # its initialize's
        assert calc["config"] == {"type": "sdk", "name": "calc"}
        assert broken["config"] == {"type": "stdio", "command": str(tmp_path / "no-such-server"),
                                    "args": []}
        assert "serverInfo" not in broken
        async def calc_status() -> str:
            servers = (await client.get_mcp_status())["mcpServers"]
            return next(s["status"] for s in servers if s["name"] == "calc")

        await client.toggle_mcp_server("calc", False)
        assert await calc_status() == "disabled"
        await client.toggle_mcp_server("calc", True)  # answered once it is connected
        assert await calc_status() == "connected"
        await client.reconnect_mcp_server("calc")
        assert await calc_status() == "connected"
        with pytest.raises(Exception, match="Failed to connect to broken"):
            await client.reconnect_mcp_server("broken")
        for call in (client.toggle_mcp_server("nope", True), client.reconnect_mcp_server("nope")):
            with pytest.raises(Exception, match="Server not found: nope"):
                await call

        # rewind_files: a dry run says what would change; the rewind restores it
        query = client._query
        assert query is not None
        preview = await query._send_control_request({
            "subtype": "rewind_files", "user_message_id": written.uuid, "dry_run": True})
        check("rewind_files", preview)
        assert preview["canRewind"] and preview["filesChanged"] == [str(workspace / "f.txt")]
        assert (workspace / "f.txt").read_text() == "two\n"
        await client.rewind_files(written.uuid)
        assert (workspace / "f.txt").read_text() == "one\n"
        with pytest.raises(Exception, match="No file checkpoint found for this message"):
            await client.rewind_files("not-a-message")

        # a background command: task_started gives its id, stop_task ends it
        fake_api.enqueue(Reply.tool_use("bash", {"command": "sleep 41.3",
                                                 "run_in_background": True}),
                         Reply.text("started"))
        got = await turn("start it")
        [started] = [m for m in got if isinstance(m, SystemMessage) and m.subtype == "task_started"]
        check("task_started", started.data)
        assert started.data["task_type"] == "local_bash"
        [call] = [b for m in got if isinstance(m, AssistantMessage) for b in m.content
                  if isinstance(b, ToolUseBlock)]
        assert started.data["tool_use_id"] == call.id  # the call that started it
        assert await asyncio.to_thread(wait_until, lambda: len(marked("41.3")) >= 1)
        await client.stop_task(started.data["task_id"])
        ended: list[Any] = []

        async def until_notified() -> None:
            async for message in client.receive_messages():
                ended.append(message)
                if isinstance(message, SystemMessage) and message.subtype == "task_notification":
                    return

        await asyncio.wait_for(until_notified(), 30)
        [updated] = [m for m in ended if isinstance(m, SystemMessage) and m.subtype == "task_updated"]
        check("task_updated", updated.data)
        assert updated.data["patch"]["status"] == "killed"
        check("task_notification", ended[-1].data)
        assert ended[-1].data["status"] == "stopped"
        assert ended[-1].data["tool_use_id"] == call.id
        assert await asyncio.to_thread(wait_until, lambda: not marked("41.3"))
        # a task that has ended, or never was: success, nothing done (Claude Code's answer)
        for gone in (started.data["task_id"], "b999zzz"):
            answer = await query._send_control_request({"subtype": "stop_task", "task_id": gone})
            check("stop_task_unknown", {"type": "control_response", "response": {
                "subtype": "success", "request_id": "r", "response": answer}})
        seen.extend(ended)

    states = [m.data for m in seen if isinstance(m, SystemMessage)
              and m.subtype == "session_state_changed"]
    for state in states:
        check("session_state_changed", state)
        assert "sdk_host_only" not in state  # asked for by the app: it sees them
    assert [s["state"] for s in states][:3] == ["running", "idle", "running"]
    results = [m for m in seen if isinstance(m, ResultMessage)]
    assert [r.is_error for r in results] == [False, True, False, False]
    assert fake_api.errors == []


def test_context_mcp_rewind_tasks_and_session_state_through_the_sdk(fake_api, tmp_path):
    asyncio.run(asyncio.wait_for(_session(tmp_path, fake_api), 120))


def test_session_state_frames_are_sent_only_when_asked_for():
    from agent_tui.sdk_protocol.run import state_frames

    assert state_frames({}) is None
    assert state_frames({"CLAUDE_CODE_SDK_READS_SESSION_STATE": "1"}) is False  # sdk_host_only
    assert state_frames({"CLAUDE_CODE_SDK_READS_SESSION_STATE": "0"}) is None
    assert state_frames({"CLAUDE_CODE_SDK_READS_SESSION_STATE": "1",
                         "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "true"}) is True
