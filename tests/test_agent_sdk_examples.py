"""What the Python Agent SDK's own examples need, with agent-tui as their CLI.

The examples (``examples/`` of claude-agent-sdk-python) were run unchanged against
agent-tui and the fake API, the CLI named as ``cli_path`` would: partial messages
with a thinking budget in the app's ``env``, the system prompt options, and a spending
cap, the quick start. These tests, written here, walk the same paths with the fake model scripted for
them, and check what each example prints comes from the right place.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.agent_sdk_support import cli_script
from tests.fake_api.replies import Reply
from tests.fake_api.usage import START_OUTPUT_TOKENS

pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
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
