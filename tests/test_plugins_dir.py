"""``--plugin-dir DIR`` (Claude Code's flag, also what the Agent SDK's ``plugins``
option passes): the plugin in DIR loads for this run, as if installed and enabled, in
print mode and over ACP; nothing is recorded for later runs, and a folder that is not
there is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.cli.options import UsageError, parse_options
from tests.acp_client import RecordingClient, acp_agent, agent_env
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.print_agent import env_for

KIT = Path(__file__).parent / "plugin_market" / "plugins" / "kit"


def test_a_plugin_folder_on_the_command_line_works_for_this_run_only(fake_api, tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    fake_api.enqueue(Reply.text("greeted"))
    out = run_agent(["-p", "/kit:greet world", "--cwd", str(ws), "--plugin-dir", str(KIT)],
                    env=env, timeout=90)
    assert out.returncode == 0, out.stderr
    first = json.dumps(fake_api.requests[0]["messages"])
    assert "The marker says: kit-marker-42" in first and "Say hello to world." in first
    plugins = tmp_path / "home" / ".claude" / "plugins"  # nothing recorded: only its data
    assert [p.relative_to(plugins).as_posix() for p in plugins.rglob("*")] == ["data", "data/kit-inline"]
    out = run_agent(["-p", "/kit:greet world", "--cwd", str(ws)], env=env, timeout=90)
    assert out.returncode != 0 and "kit:greet" in out.stderr  # not there without the flag


def test_a_plugin_folder_that_is_not_there_is_a_usage_error(tmp_path) -> None:
    with pytest.raises(UsageError, match="--plugin-dir .*: not a directory"):
        parse_options(["--cwd", str(tmp_path), "--plugin-dir", str(tmp_path / "none")])


@pytest.mark.asyncio
async def test_over_acp_a_plugin_folders_commands_are_offered(tmp_path, fake_api) -> None:
    from acp import PROTOCOL_VERSION

    client = RecordingClient()
    env = agent_env(tmp_path, fake_api) | {"HOME": str(tmp_path / "home")}
    args = ["--cwd", str(tmp_path), "--plugin-dir", str(KIT)]
    async with acp_agent(client, args, env=env, cwd=tmp_path) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await client.wait_for(lambda: client.of("available_commands_update", sid))
        (update,) = client.of("available_commands_update", sid)
        assert "kit:greet" in {c.name for c in update.available_commands}


def test_the_agent_sdks_plugins_option_is_taken(tmp_path) -> None:
    pytest.importorskip("claude_agent_sdk")
    from claude_agent_sdk import ClaudeAgentOptions
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    options = ClaudeAgentOptions(cli_path="agent-tui", cwd=str(tmp_path),
                                 plugins=[{"type": "local", "path": str(KIT)}])
    argv = SubprocessCLITransport(prompt="", options=options)._build_command()[1:]
    assert parse_options(["--cwd", str(tmp_path), *argv]).plugin_dirs == [KIT.resolve()]
