"""What the Python Agent SDK's own examples need, with agent-tui as their CLI.

The examples (``examples/`` of claude-agent-sdk-python) were run unchanged against
agent-tui and the fake API, the CLI named as ``cli_path`` would: partial messages
with a thinking budget in the app's ``env``, the system prompt options, and a spending
cap, the quick start. These tests, written here, walk the same paths with the fake model scripted for
them, and check what each example prints comes from the right place.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent_sdk_support import cli_script
from tests.fake_api.replies import Reply
from tests.fake_api.usage import START_OUTPUT_TOKENS

pytest.importorskip("claude_agent_sdk")
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
    TextBlock,
    ThinkingBlock,
    query,
)

#: The examples' model (include_partial_messages.py); priced, so a budget can be kept.
MODEL = "claude-sonnet-4-5"


def options(tmp_path: Path, fake_api: Any, **given: Any) -> ClaudeAgentOptions:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return ClaudeAgentOptions(cli_path=str(cli_script(tmp_path, fake_api)),
                              cwd=str(workspace), **given)


async def ask(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=opts)]


def texts(messages: list[Any]) -> list[str]:
    return [b.text for m in messages if isinstance(m, AssistantMessage) for b in m.content
            if isinstance(b, TextBlock)]


def test_partial_messages_with_a_thinking_budget_in_the_apps_env(fake_api, tmp_path):
    """include_partial_messages.py: a client that streams, thinking set by
    ``MAX_THINKING_TOKENS`` as Claude Code reads it."""
    fake_api.configure_model(MODEL)
    fake_api.enqueue(Reply.thinking("three jokes: a, b, c", "Why did the chicken cross?"))
    opts = options(tmp_path, fake_api, include_partial_messages=True, model=MODEL,
                   max_turns=2, env={"MAX_THINKING_TOKENS": "8000"})

    async def run() -> list[Any]:
        async with ClaudeSDKClient(opts) as client:
            await client.query("Think of three jokes, then tell one")
            return [m async for m in client.receive_response()]

    got = asyncio.run(asyncio.wait_for(run(), 60))
    assert fake_api.requests[0]["thinking"]["budget_tokens"] == 8000
    events = [m.event for m in got if isinstance(m, StreamEvent)]
    assert [e["type"] for e in events if not e["type"].startswith("content")] == [
        "message_start", "message_delta", "message_stop"]
    told = fake_api.usage[0]
    assert events[0]["message"]["usage"] == {**told.as_usage(), "output_tokens": START_OUTPUT_TOKENS}
    assert events[-2]["usage"]["output_tokens"] == told.output_tokens
    [thinking] = [b for m in got if isinstance(m, AssistantMessage) for b in m.content
                  if isinstance(b, ThinkingBlock)]
    assert thinking.thinking == "three jokes: a, b, c"
    assert texts(got) == ["Why did the chicken cross?"]
    result = got[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.stop_reason == "end_turn" and result.total_cost_usd


def test_the_system_prompt_options_reach_the_model(fake_api, tmp_path):
    """system_prompt.py: a string replaces the prompt; the preset with ``append`` is
    agent-tui's own prompt with the app's text after it (no prompt at all, the SDK's
    default, is in test_agent_sdk_flags.py)."""
    fake_api.enqueue(Reply.text("Arr, 4"), Reply.text("4. Fun fact: ..."))

    async def run() -> list[list[Any]]:
        return [
            await ask("What is 2 + 2?", options(
                tmp_path, fake_api, system_prompt="You are a pirate assistant.")),
            await ask("What is 2 + 2?", options(tmp_path, fake_api, system_prompt={
                "type": "preset", "preset": "claude_code",
                "append": "Always end your response with a fun fact."})),
        ]

    pirate, preset = asyncio.run(asyncio.wait_for(run(), 90))
    assert texts(pirate) == ["Arr, 4"] and texts(preset) == ["4. Fun fact: ..."]
    systems = ["\n".join(b["text"] for b in r.get("system") or []) for r in fake_api.requests]
    assert systems[0] == "You are a pirate assistant."
    assert systems[1].startswith("You are agent-tui")
    assert systems[1].rstrip().endswith("Always end your response with a fun fact.")


def test_a_spending_cap_is_kept_and_its_end_said_in_the_result(fake_api, tmp_path):
    """max_budget_usd.py: a cap the run stays under ends in success with its cost; one
    the first request passes ends in ``error_max_budget_usd``, no further request made."""
    fake_api.configure_model(MODEL)
    fake_api.enqueue(Reply.text("4"), Reply.tool_use("Read", {"file_path": "README.md"}),
                     Reply.text("a summary"))

    async def run() -> tuple[list[Any], list[Any]]:
        return (await ask("What is 2 + 2?", options(tmp_path, fake_api, model=MODEL,
                                                    max_budget_usd=0.10)),
                await ask("Read the README.md file and summarize it", options(
                    tmp_path, fake_api, model=MODEL, max_budget_usd=0.0001,
                    permission_mode="bypassPermissions")))

    kept, passed = asyncio.run(asyncio.wait_for(run(), 90))
    result = kept[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert 0 < (result.total_cost_usd or 0) < 0.10
    result = passed[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_budget_usd"
    assert result.is_error and (result.total_cost_usd or 0) > 0.0001
    assert len(fake_api.requests) == 2  # the cap was passed by the first request: no second


def test_quick_starts_file_tools_and_a_cost_that_is_always_a_number(fake_api, tmp_path):
    """quick_start.py: ``allowed_tools`` lets the model write a file without asking, and
    the result's ``total_cost_usd`` is compared with 0, so it is a number even when the
    model's price is unknown (agent-tui's default model has none)."""
    fake_api.enqueue(Reply.tool_use("write_file", {"path": "hello.txt",
                                                   "content": "Hello, World!"}),
                     Reply.text("created"))
    opts = options(tmp_path, fake_api, allowed_tools=["Read", "Write"],
                   system_prompt="You are a helpful file assistant.")
    got = asyncio.run(asyncio.wait_for(ask("Create a file called hello.txt", opts), 60))
    assert (tmp_path / "ws" / "hello.txt").read_text() == "Hello, World!"
    assert texts(got) == ["created"]
    result = got[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert isinstance(result.total_cost_usd, float)  # 0.0 for a price agent-tui lacks


def test_agents_run_unasked_with_the_setting_sources_the_app_chose(fake_api, tmp_path):
    """agents.py: a ``Task`` for the app's agent runs in the default mode with no
    permission callback (as Claude Code runs it; its sub-agent's calls are each checked),
    the agent's ``sonnet`` is a model, and ``setting_sources=["user", "project"]`` leaves
    the project's local files unread: their deny rule on the agent does not bind, their
    memory file is not in the prompt."""
    fake_api.enqueue(Reply.tool_use("task", {"description": "review", "prompt": "review it",
                                             "subagent_type": "code-reviewer"}),
                     Reply.text("types.py looks fine"), Reply.text("The reviewer says: fine"))
    opts = options(tmp_path, fake_api, setting_sources=["user", "project"], agents={
        "code-reviewer": AgentDefinition(description="Reviews code", tools=["Read", "Grep"],
                                         prompt="You are a code reviewer.", model="sonnet")})
    local = Path(opts.cwd) / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"permissions": {"deny": ["Agent(code-reviewer)"]}}))
    (Path(opts.cwd) / "CLAUDE.local.md").write_text("LOCAL-MEMO-42")
    got = asyncio.run(asyncio.wait_for(ask("Use the code-reviewer agent", opts), 60))
    assert texts(got) == ["The reviewer says: fine"]
    main, sub, _ = fake_api.requests
    assert {t["name"] for t in sub["tools"]} == {"read_file", "grep"}
    assert "sonnet" in sub["model"] and "You are a code reviewer." in json.dumps(sub["system"])
    assert got[-1].subtype == "success" and not got[-1].permission_denials
    assert "LOCAL-MEMO-42" not in json.dumps(main.get("system"))

    opts = options(tmp_path, fake_api, agents=opts.agents)  # every source: the deny binds
    fake_api.enqueue(Reply.tool_use("task", {"description": "review", "prompt": "review it",
                                             "subagent_type": "code-reviewer"}), Reply.text("no"))
    asyncio.run(asyncio.wait_for(ask("Use the code-reviewer agent", opts), 60))
    assert "denied by rule Task(code-reviewer)" in json.dumps(fake_api.requests[-1]["messages"][-1])
    assert "LOCAL-MEMO-42" in json.dumps(fake_api.requests[-1]["system"])


def test_hooks_decide_writes_add_context_and_end_the_turn(fake_api, tmp_path):
    """hooks.py: a PreToolUse callback's ``deny`` and ``allow`` with a ``systemMessage``,
    a UserPromptSubmit's context, a PostToolUse's ``continue_: False`` that ends the turn
    with its ``stopReason``; the model named by ``ANTHROPIC_MODEL`` in the app's env
    (streaming_mode.py's options)."""
    fake_api.configure_model(MODEL)

    async def guard_writes(given: dict, tool_use_id: str | None, context: Any) -> dict:
        important = "important" in given["tool_input"]["file_path"]
        return {"systemMessage": "checked", "hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny" if important else "allow",
            "permissionDecisionReason": "important files are kept" if important else "ok"}}

    async def context(given: dict, tool_use_id: str | None, ctx: Any) -> dict:
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                       "additionalContext": "My favorite color is hot pink"}}

    async def stop_on_critical(given: dict, tool_use_id: str | None, ctx: Any) -> dict:
        if "critical" in str(given["tool_response"]).lower():
            return {"continue_": False, "stopReason": "a critical error: halted"}
        return {"continue_": True}

    opts = options(tmp_path, fake_api, allowed_tools=["Bash"], env={"ANTHROPIC_MODEL": MODEL},
                   hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[guard_writes])],
                          "UserPromptSubmit": [HookMatcher(matcher=None, hooks=[context])],
                          "PostToolUse": [HookMatcher(matcher="Bash", hooks=[stop_on_critical])]})
    fake_api.enqueue(
        Reply.tool_use("write_file", {"path": "important_config.txt", "content": "x"}),
        Reply.text("blocked"),
        Reply.tool_use("write_file", {"path": "regular_file.txt", "content": "x"}),
        Reply.text("written"),
        Reply.tool_use("bash", {"command": "echo 'CRITICAL ERROR: system failure'"}))

    async def run() -> list[list[Any]]:
        async with ClaudeSDKClient(opts) as client:
            turns = []
            for prompt in ("write important", "write regular", "run it"):
                await client.query(prompt)
                turns.append([m async for m in client.receive_response()])
            return turns

    blocked, written, halted = asyncio.run(asyncio.wait_for(run(), 90))
    workspace = Path(opts.cwd)
    assert not (workspace / "important_config.txt").exists()
    assert (workspace / "regular_file.txt").read_text() == "x"
    said = json.dumps(fake_api.requests[1]["messages"][-1])
    assert "important files are kept" in said
    assert "My favorite color is hot pink" in json.dumps(fake_api.requests[0]["messages"])
    assert texts(blocked) == ["blocked"] and texts(written) == ["written"]
    assert len(fake_api.requests) == 5  # the PostToolUse hook ended the turn: no request after
    assert isinstance(halted[-1], ResultMessage)
    assert {r["model"] for r in fake_api.requests} == {MODEL}


def test_a_permission_callback_redirects_a_write_and_denies_a_command(fake_api, tmp_path):
    """tool_permission_callback.py: the callback sees Claude Code's names and keys, its
    ``updated_input`` moves a write to ``./safe_output/``, its deny reaches the model;
    streaming_mode.py's prompt as an async iterable, and ``get_server_info``."""
    asked: list[tuple[str, dict]] = []

    async def callback(name: str, given: dict, context: Any) -> Any:
        asked.append((name, given))
        if name == "Write":
            return PermissionResultAllow(updated_input={
                **given, "file_path": f"./safe_output/{given['file_path'].split('/')[-1]}"})
        if "rm -rf" in given.get("command", ""):
            return PermissionResultDeny(message="Dangerous command pattern detected: rm -rf")
        return PermissionResultAllow()

    fake_api.enqueue(Reply.tool_use("write_file", {"path": "hello.py", "content": "print(1)\n"}),
                     Reply.tool_use("bash", {"command": "sudo rm -rf /"}), Reply.text("done"),
                     Reply.text("Tokyo"))
    opts = options(tmp_path, fake_api, can_use_tool=callback, permission_mode="default")

    async def prompts() -> Any:
        for text in ("Create hello.py", "What is the capital of Japan?"):
            yield {"type": "user", "message": {"role": "user", "content": text},
                   "parent_tool_use_id": None, "session_id": "qa-session"}

    async def run() -> tuple[dict[str, Any] | None, list[Any]]:
        async with ClaudeSDKClient(opts) as client:
            info = await client.get_server_info()
            await client.query(prompts())
            got = [m async for m in client.receive_response()]
            return info, got + [m async for m in client.receive_response()]

    info, got = asyncio.run(asyncio.wait_for(run(), 90))
    workspace = Path(opts.cwd)
    assert info is not None and info["output_style"] == "default"
    assert (workspace / "safe_output" / "hello.py").read_text() == "print(1)\n"
    assert not (workspace / "hello.py").exists()
    assert asked[0] == ("Write", {"file_path": str(workspace / "hello.py"), "content": "print(1)\n"})
    assert asked[1] == ("Bash", {"command": "sudo rm -rf /"})
    assert "Dangerous command pattern" in json.dumps(fake_api.requests[2]["messages"][-1])
    assert texts(got) == ["done", "Tokyo"]
    assert [m.subtype for m in got if isinstance(m, ResultMessage)] == ["success", "success"]
