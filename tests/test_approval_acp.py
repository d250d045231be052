"""Over ACP, "allow always" writes the same lasting rule as the TUI's "Yes, and don't
ask again": the program and its subcommand, to the project's
``.claude/settings.local.json``; the next such command runs unasked, another asks."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse

from tests.acp_client import RecordingClient, acp_agent, agent_env, start
from tests.fake_api import Reply


def _answer(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))


@pytest.mark.asyncio
async def test_allow_always_saves_the_prefix_rule_and_the_next_call_runs_unasked(tmp_path, fake_api):
    home = tmp_path / "user"
    (tmp_path / ".git").mkdir()  # a repository: the rule's file is kept out of git
    env = agent_env(tmp_path, fake_api) | {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg")}
    fake_api.enqueue(Reply.tool_use("bash", {"command": "git init -q"}, id="toolu_a1"),
                     Reply.text("First."),
                     Reply.tool_use("bash", {"command": "git init"}, id="toolu_a2"),
                     Reply.tool_use("bash", {"command": "git add -A"}, id="toolu_a3"),
                     Reply.text("Second."))
    client = RecordingClient()
    async with acp_agent(client, ["--cwd", str(tmp_path)], env=env, cwd=tmp_path) as (conn, _):
        sid = await start(conn, tmp_path)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("init")]))
        await client.wait_for(lambda: client.permission_requests)
        options = {o.option_id: o.name for o in client.permission_requests[0][2]}
        assert options["allow_always"] == "Always allow git init *"
        client.answers.put_nowait(_answer("allow_always"))
        assert (await asyncio.wait_for(prompt, 20)).stop_reason == "end_turn"
        saved = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
        assert saved == {"permissions": {"allow": ["Bash(git init *)"]}}
        assert "**/.claude/settings.local.json" in (home / "xdg" / "git" / "ignore").read_text()

        # The same prefix runs unasked; another command still asks.
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("again")]))
        await client.wait_for(lambda: len(client.permission_requests) == 2)
        assert client.permission_requests[1][1].tool_call_id == "toolu_a3"
        assert client.last_state("toolu_a2") == "succeeded"
        client.answers.put_nowait(_answer("reject_once"))
        assert (await asyncio.wait_for(prompt, 20)).stop_reason == "end_turn"
