"""The real Claude Agent SDK (PyPI ``claude-agent-sdk``) drives agent-tui as its CLI.

``cli_path`` names a small script that runs this venv's agent-tui against the fake API:
the SDK starts it as it starts Claude Code, with its own flags, its stream-json
messages and its control protocol. Two agent processes in all: a ``query()`` with a
tool round trip, then a resumed session's ``query()``; and one ``ClaudeSDKClient``
session that goes through the permission callback, a hook callback, plan mode, a model
switch and an interrupt during a slow command tree.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.fake_api.replies import Reply
from tests.agent_sdk_support import cli_script
from tests.print_agent import marked, wait_until

sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)



def options(tmp_path: Path, fake_api: Any, **given: Any) -> ClaudeAgentOptions:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return ClaudeAgentOptions(cli_path=str(cli_script(tmp_path, fake_api)), cwd=str(workspace),
                              model="claude-sonnet-5-5", **given)


async def collect(messages: Any) -> list[Any]:
    return [m async for m in messages]


def texts(messages: list[Any]) -> list[str]:
    return [b.text for m in messages if isinstance(m, AssistantMessage)
            for b in m.content if isinstance(b, TextBlock)]


def tool_results(messages: list[Any]) -> list[ToolResultBlock]:
    return [b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content if isinstance(b, ToolResultBlock)]


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict) -> dict:
    return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']:g}"}]}


def test_query_runs_tools_and_a_resumed_session_streams_partial_messages(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "echo from-the-tool"}),
                     Reply.tool_use("mcp__calc__add", {"a": 2, "b": 3}),
                     Reply.text("all done"), Reply.text("still here"))
    calc = create_sdk_mcp_server("calc", tools=[add])
    first = asyncio.run(collect(query(prompt="run it", options=options(
        tmp_path, fake_api, permission_mode="bypassPermissions", mcp_servers={"calc": calc}))))

    init, *rest = first
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert {"Bash", "Read", "Write"} <= set(init.data["tools"])
    assert init.data["permissionMode"] == "bypassPermissions"
    assert init.data["model"] == "claude-sonnet-5-5"
    session_id = init.data["session_id"]
    uses = [b for m in rest if isinstance(m, AssistantMessage) for b in m.content
            if isinstance(b, ToolUseBlock)]
    assert [(u.name, u.input) for u in uses] == [("Bash", {"command": "echo from-the-tool"}),
                                                 ("mcp__calc__add", {"a": 2, "b": 3})]
    # the app's in-process MCP server answered the model's call, through mcp_message
    ran, added = tool_results(rest)
    assert ran.tool_use_id == uses[0].id and ran.is_error is False
    assert "from-the-tool" in str(ran.content)
    assert added.tool_use_id == uses[1].id and not added.is_error and "sum=5" in str(added.content)
    assert texts(rest) == ["all done"]
    result = rest[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.result == "all done" and not result.is_error
    assert result.session_id == session_id and result.num_turns == 3

    # resume by session id, with the model's stream as stream_event messages
    second = asyncio.run(collect(query(prompt="and now?", options=options(
        tmp_path, fake_api, resume=session_id, include_partial_messages=True))))
    assert texts(second) == ["still here"]
    deltas = [m.event["delta"]["text"] for m in second if isinstance(m, StreamEvent)
              and m.event["type"] == "content_block_delta"]
    assert "".join(deltas) == "still here"
    kinds = [m.event["type"] for m in second if isinstance(m, StreamEvent)]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    last = fake_api.requests[-1]
    said = str(last["messages"])
    assert "run it" in said and "from-the-tool" in said and "and now?" in said
    assert second[-1].session_id == session_id
    assert fake_api.errors == []


async def _client_session(tmp_path: Path, fake_api: Any) -> None:
    asked: list[tuple[str, dict]] = []
    hooked: list[dict] = []

    async def can_use_tool(name: str, tool_input: dict, context: Any) -> Any:
        asked.append((name, tool_input))
        if "echo no" in tool_input.get("command", ""):
            return PermissionResultDeny(message="the app says no")
        if name == "Write":
            return PermissionResultAllow(updated_input={**tool_input, "content": "changed"})
        if tool_input.get("command") == "echo swap > swap.txt":
            return PermissionResultAllow(updated_input={"command": "rm keep.txt"})
        return PermissionResultAllow()

    async def block_rm(given: dict, tool_use_id: str | None, context: Any) -> dict:
        hooked.append(given)
        if given["tool_input"]["command"].startswith("rm "):
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "deny",
                                           "permissionDecisionReason": "rm is blocked here"}}
        return {}

    opts = options(tmp_path, fake_api, can_use_tool=can_use_tool,
                   env={"CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"},
                   hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[block_rm])]},
                   agents={"reviewer": AgentDefinition(
                       description="Reviews a change", prompt="You review code with care.",
                       tools=["Read", "Grep"])})
    workspace = Path(opts.cwd)
    (workspace / "keep.txt").write_text("kept")

    async with ClaudeSDKClient(options=opts) as client:
        async def turn(prompt: str) -> list[Any]:
            await client.query(prompt)
            return await collect(client.receive_response())

        # a Python hook blocks rm: the command never runs, the app's callback is not asked
        fake_api.enqueue(Reply.tool_use("bash", {"command": "rm keep.txt"}), Reply.text("ok"))
        got = await turn("remove it")
        [blocked] = tool_results(got)
        assert blocked.is_error and "rm is blocked here" in str(blocked.content)
        assert (workspace / "keep.txt").exists() and asked == []
        assert hooked[0]["hook_event_name"] == "PreToolUse" and hooked[0]["tool_name"] == "Bash"

        # the permission callback denies: the model is told the app's words
        fake_api.enqueue(Reply.tool_use("bash", {"command": "echo no > said.txt"}),
                         Reply.text("ok"))
        got = await turn("say no")
        [denied] = tool_results(got)
        assert denied.is_error and "the app says no" in str(denied.content)
        # the session waits on the app while its callback is asked
        assert [m.data["state"] for m in got if isinstance(m, SystemMessage)
                and m.subtype == "session_state_changed"] == [
            "idle", "running", "requires_action", "running"]
        assert asked[-1] == ("Bash", {"command": "echo no > said.txt"})
        assert not (workspace / "said.txt").exists()

        # ... and allows with changed input: the call runs as the app changed it
        fake_api.enqueue(Reply.tool_use("write_file", {"path": "a.txt", "content": "orig"}),
                         Reply.text("ok"))
        [written] = tool_results(await turn("write a"))
        assert not written.is_error and (workspace / "a.txt").read_text() == "changed"
        assert asked[-1] == ("Write", {"file_path": str(workspace / "a.txt"), "content": "orig"})

        # an input the answer changed is checked by the hooks again: rm stays blocked
        fake_api.enqueue(Reply.tool_use("bash", {"command": "echo swap > swap.txt"}), Reply.text("ok"))
        [swapped] = tool_results(await turn("swap"))
        assert swapped.is_error and "rm is blocked here" in str(swapped.content)
        assert (workspace / "keep.txt").exists()
        assert hooked[-1]["tool_input"] == {"command": "rm keep.txt"}

        # plan mode refuses a write, without asking the app
        await client.set_permission_mode("plan")
        fake_api.enqueue(Reply.tool_use("write_file", {"path": "b.txt", "content": "x"}),
                         Reply.text("ok"))
        [refused] = tool_results(await turn("write b"))
        assert refused.is_error and not (workspace / "b.txt").exists() and len(asked) == 3
        await client.set_permission_mode("default")

        # another model from the next request on
        await client.set_model("claude-haiku-4-5")
        fake_api.enqueue(Reply.text("haiku here"))
        assert texts(await turn("who are you")) == ["haiku here"]
        assert fake_api.requests[-1]["model"] == "claude-haiku-4-5"

        # a sub-agent the app defined in initialize: its prompt, its tools
        fake_api.enqueue(Reply.tool_use("task", {"description": "review", "prompt": "look",
                                                 "subagent_type": "reviewer"}),
                         Reply.text("looks fine"), Reply.text("reviewed"))
        got = await turn("review it")
        assert texts(got) == ["reviewed"]
        sub = fake_api.requests[-2]
        assert "You review code with care." in json.dumps(sub["system"])
        assert {t["name"] for t in sub["tools"]} == {"read_file", "grep"}
        init = next(m for m in got if isinstance(m, SystemMessage) and m.subtype == "init")
        assert "reviewer" in init.data["agents"]
        listed = (await client.get_context_usage())["agents"]
        assert {"agentType": "reviewer", "source": "flagSettings", "tokens": 4} in listed

        # interrupt during a slow command tree: it returns once every process is gone
        fake_api.enqueue(Reply.tool_use("bash", {
            "command": "sleep 31.7 & sleep 31.7 & bash -c 'sleep 31.7'; wait"}))
        await client.query("wait a while")
        seen: list[Any] = []

        async def until_running() -> None:
            async for message in client.receive_messages():
                seen.append(message)
                if isinstance(message, AssistantMessage) and any(
                        isinstance(b, ToolUseBlock) for b in message.content):
                    return

        await asyncio.wait_for(until_running(), 60)
        assert await asyncio.to_thread(wait_until, lambda: len(marked("31.7")) >= 3)
        tree = marked("31.7")
        await client.interrupt()
        assert not [p for p in tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        after = await collect(client.receive_response())
        result = after[-1]
        assert isinstance(result, ResultMessage) and result.is_error
        assert result.stop_reason == "interrupted"
        [stopped] = tool_results(after)
        assert stopped.is_error

        # the next turn's request is valid, and says the last one was interrupted
        fake_api.enqueue(Reply.text("fresh start"))
        got = await turn("go on")
        assert texts(got) == ["fresh start"] and got[-1].subtype == "success"
    assert fake_api.errors == []


def test_client_session_permission_hook_plan_model_and_interrupt(fake_api, tmp_path):
    asyncio.run(asyncio.wait_for(_client_session(tmp_path, fake_api), 110))


def test_an_answer_cut_at_max_tokens_goes_on_and_a_fourth_cut_is_an_error(fake_api, tmp_path):
    """As Claude Code: three requests ask the model to resume after a cut; a reply cut
    again ends the turn with ``is_error`` (Claude Code's result says so too)."""
    fake_api.enqueue(Reply.max_tokens("one "), Reply.max_tokens("two "), Reply.text("three"),
                     *[Reply.max_tokens(f"cut {n}") for n in range(4)])
    opts = options(tmp_path, fake_api)
    went_on = asyncio.run(collect(query(prompt="write a lot", options=opts)))
    gave_up = asyncio.run(collect(query(prompt="write more", options=opts)))
    assert texts(went_on) == ["one ", "two ", "three"]
    assert went_on[-1].subtype == "success" and not went_on[-1].is_error
    assert "Output token limit hit" in json.dumps(fake_api.requests[1]["messages"][-1])
    assert len(fake_api.requests) == 3 + 4
    result = gave_up[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.stop_reason == "max_tokens" and result.result == "cut 3"
