"""ACP slash commands: the SDK's client drives the real ``agent-tui acp`` process
against the fake API, in a project with Claude Code's ``.claude/commands/`` (and a
user's ``~/.claude/commands/``). The list arrives after session/new and after
session/load; ``/name args`` sends the expanded prompt (its ``!`` line's output,
``$1``/``$2``, an ``@file``); an unknown name, a refused ``!`` line and the built-in
commands end their prompt without the model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block

from tests.fake_api import Reply
from tests.acp_client import RecordingClient, acp_agent, agent_env

REVIEW = """---
description: Review a pull request
argument-hint: [pr] [priority]
allowed-tools: Bash(echo:*), Read
color: blue
---
Review PR #$1 at priority $2.

Branch: !`echo on-branch-main`

Notes: @notes.md
"""
RISKY = """---
description: Clean the build
---
!`rm -rf build`
Tell me what was removed.
"""
TEST = "# Run the frontend tests\nRun the tests of the frontend.\n"
USER = "---\ndescription: Explain simply\n---\nExplain $ARGUMENTS to a beginner.\n"


def _project(tmp_path: Path) -> Path:
    commands = tmp_path / ".claude" / "commands"
    (commands / "frontend").mkdir(parents=True)
    (commands / "review.md").write_text(REVIEW)
    (commands / "risky.md").write_text(RISKY)
    (commands / "frontend" / "test.md").write_text(TEST)
    user = tmp_path / "userhome" / ".claude" / "commands"
    user.mkdir(parents=True)
    (user / "eli5.md").write_text(USER)
    (tmp_path / "notes.md").write_text("the notes say hello\n")
    (tmp_path / "build").mkdir()
    return tmp_path


def _spawn(client: RecordingClient, tmp_path: Path, fake_api: Any) -> Any:
    env = agent_env(tmp_path, fake_api) | {"HOME": str(tmp_path / "userhome")}
    return acp_agent(client, ["--cwd", str(tmp_path)], env=env, cwd=tmp_path)


def _listed(client: RecordingClient, sid: str) -> dict[str, Any]:
    (update,) = client.of("available_commands_update", sid)
    return {c.name: c for c in update.available_commands}


def _check_list(commands: dict[str, Any]) -> None:
    assert list(commands)[:4] == ["clear", "compact", "model", "context"]  # the table's order
    assert {"review", "risky", "frontend:test", "eli5"} <= set(commands)
    review = commands["review"]
    assert review.description == "Review a pull request (project)"
    assert review.input.root.hint == "[pr] [priority]"
    assert commands["frontend:test"].description == "Run the frontend tests (project:frontend)"
    assert commands["frontend:test"].input is None  # it takes no arguments
    assert commands["eli5"].description == "Explain simply (user)"
    assert commands["eli5"].input.root.hint == "arguments"
    assert commands["clear"].input is None and commands["compact"].input.root.hint


def _sent(fake_api: Any) -> str:
    return json.dumps(fake_api.requests)


@pytest.mark.asyncio
async def test_commands_are_listed_after_new_and_after_load(tmp_path, fake_api):
    _project(tmp_path)
    fake_api.enqueue(Reply.text("hi"))
    first = RecordingClient()
    async with _spawn(first, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await first.wait_for(lambda: first.of("available_commands_update", sid))
        _check_list(_listed(first, sid))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hello")]), 20)
    second = RecordingClient()
    async with _spawn(second, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
        await second.wait_for(lambda: second.of("available_commands_update", sid))
        _check_list(_listed(second, sid))
        # The list comes after the replayed conversation.
        kinds = [u.session_update for _, u in second.updates]
        assert kinds.index("available_commands_update") > kinds.index("user_message_chunk")


@pytest.mark.asyncio
async def test_a_custom_command_sends_its_expanded_prompt(tmp_path, fake_api):
    _project(tmp_path)
    fake_api.enqueue(Reply.text("Reviewed."))
    client = RecordingClient()
    async with _spawn(client, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("/review 42 high")]), 30)
        assert response.stop_reason == "end_turn"
    sent = fake_api.requests[-1]["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert "Review PR #42 at priority high." in text
    assert "Branch: on-branch-main" in text  # the ! line ran (allowed by its allowed-tools)
    assert '<file path="notes.md">\nthe notes say hello\n</file>' in text
    assert "/review" not in text  # the command line itself never reaches the model
    assert "Reviewed." in client.text(sid)
    assert "'color' is not supported" in client.text(sid)  # its file's problem, told


@pytest.mark.asyncio
async def test_unknown_refused_and_builtin_commands_end_without_the_model(tmp_path, fake_api):
    _project(tmp_path)
    client = RecordingClient()
    async with _spawn(client, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

        async def prompt(text: str) -> str:
            before = len(client.text(sid))
            response = await asyncio.wait_for(
                conn.prompt(session_id=sid, prompt=[text_block(text)]), 20)
            assert response.stop_reason == "end_turn", text
            return client.text(sid)[before:]

        said = await prompt("/nope please")
        assert "unknown command /nope" in said and "/review" in said and "/compact" in said
        said = await prompt("/risky")  # its ! line needs permission: nothing runs
        assert "/risky not run, nothing was sent" in said and "rm -rf build" in said
        said = await prompt("/context")
        assert "Context of" in said
        said = await prompt("/model")
        assert "Model:" in said
        said = await prompt("/clear")
        assert "new conversation" in said
    assert (tmp_path / "build").is_dir()
    assert "messages" not in _sent(fake_api)  # no model request at all


@pytest.mark.asyncio
async def test_a_cancel_while_a_commands_line_runs_ends_the_prompt_cancelled(tmp_path, fake_api):
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "slow.md").write_text(
        "---\nallowed-tools: Bash(sleep:*)\n---\n!`sleep 30`\nSay done.\n")
    client = RecordingClient()
    async with _spawn(client, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("/slow")]))
        await asyncio.sleep(1.5)  # the line runs (ACP has no update for it)
        assert not prompt.done()
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 10)
        assert response.stop_reason == "cancelled"
        assert "nothing was sent" in client.text(sid)
    assert fake_api.requests == []


@pytest.mark.asyncio
async def test_compact_and_model_are_ops_told_as_text(tmp_path, fake_api):
    fake_api.enqueue(Reply.text("hi there"), Reply.text("The summary."))
    client = RecordingClient()
    async with _spawn(client, tmp_path, fake_api) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hello")]), 20)
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("/compact keep the names")]), 20)
        assert response.stop_reason == "end_turn"
        assert "Compacted the conversation" in client.text(sid)
        assert "keep the names" in json.dumps(fake_api.requests[-1])
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("/model claude-haiku-4-5")]), 20)
        assert response.stop_reason == "end_turn"
        updates = client.of("config_option_update", sid)
        assert updates and updates[-1].config_options[0].current_value == "claude-haiku-4-5"
        assert "Model: claude-haiku-4-5" in client.text(sid)


def test_the_tui_and_acp_list_the_built_in_commands_of_one_table(tmp_path: Path) -> None:
    from agent_tui.commands.builtin import ACP_BUILTINS, BUILTINS
    from agent_tui.acp.commands import available
    from agent_tui.ui.commands.builtin import BUILTIN, HANDLERS

    assert [c.name for c in BUILTIN] == [b.name for b in BUILTINS] and set(HANDLERS) == {
        b.name for b in BUILTINS}
    assert [c.description for c in BUILTIN] == [b.description for b in BUILTINS]
    offered = {c.name: c for c in available(tmp_path)}
    assert [b.name for b in ACP_BUILTINS] == list(offered)  # no custom command here
    compact = offered["compact"]
    assert compact.description == "Summarize the conversation so far, to free context"
    assert compact.input is not None and compact.input.root.hint == "focus"
    assert offered["clear"].input is None
    assert not {"resume", "rewind", "export", "theme"} & set(offered)  # they need a screen
