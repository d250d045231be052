"""Every flag the Claude Agent SDK passes is taken, or refused in an error that names it.

The command lines are the SDK's own (its transport builds them from
``ClaudeAgentOptions``); agent-tui's option parser reads them in-process. No flag may be
read and then dropped: each accepted one is seen in the options it gave.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import ClaudeAgentOptions  # noqa: E402
from claude_agent_sdk._internal.transport.subprocess_cli import (  # noqa: E402
    SubprocessCLITransport,
)

from agent_tui.cli.options import Options, UsageError, parse_options  # noqa: E402
from agent_tui.cli.sdk_entry import claude_shaped, mcp_servers  # noqa: E402


def sdk_argv(tmp_path: Path, **given) -> list[str]:
    options = ClaudeAgentOptions(cli_path="agent-tui", cwd=str(tmp_path), **given)
    return SubprocessCLITransport(prompt="", options=options)._build_command()[1:]


def parsed(tmp_path: Path, **given) -> Options:
    return parse_options(["--cwd", str(tmp_path), *sdk_argv(tmp_path, **given)])


def test_the_sdks_base_command_is_a_claude_shaped_print_run(tmp_path, monkeypatch):
    opts = parsed(tmp_path)
    assert opts.print_mode and opts.input_format == opts.output_format == "stream-json"
    assert opts.system_prompt == ""  # the SDK's default: no preset prompt
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
    assert claude_shaped(opts)
    monkeypatch.delenv("CLAUDE_CODE_ENTRYPOINT")
    assert not claude_shaped(opts)  # --verbose alone keeps agent-tui's events
    opts.stream_shape = "claude-code"
    assert claude_shaped(opts)


@pytest.mark.parametrize(("given", "seen"), [
    ({"system_prompt": "be brief"}, lambda o: o.system_prompt == "be brief"),
    ({"system_prompt": {"type": "preset", "preset": "claude_code", "append": "and kind"}},
     lambda o: o.system_prompt is None and o.append_system_prompt == "and kind"),
    ({"allowed_tools": ["Read", "Bash(git log:*)"], "disallowed_tools": ["Write"]},
     lambda o: o.allowed_tools == ["Read", "Bash(git log:*)"] and o.disallowed_tools == ["Write"]),
    ({"max_turns": 3}, lambda o: o.max_turns == 3),
    ({"model": "claude-haiku-4-5"}, lambda o: o.model == "claude-haiku-4-5"),
    ({"permission_mode": "acceptEdits"}, lambda o: o.permission_mode == "accept-edits"),
    ({"permission_mode": "plan"}, lambda o: o.permission_mode == "plan"),
    ({"permission_mode": "bypassPermissions"}, lambda o: o.permission_mode == "auto"),
    ({"permission_mode": "dontAsk"}, lambda o: o.permission_mode == "dont-ask"),
    ({"continue_conversation": True}, lambda o: o.continue_),
    ({"settings": '{"model": "x"}'},
     lambda o: json.loads(o.settings.read_text()) == {"model": "x"}),
    ({"include_partial_messages": True}, lambda o: o.include_partial_messages),
    ({"extra_args": {"replay-user-messages": None}}, lambda o: o.replay_user_messages),
    ({"thinking": {"type": "adaptive"}}, lambda o: o.thinking == "adaptive"),
    ({"thinking": {"type": "disabled"}}, lambda o: o.thinking == "off"),
    ({"thinking": {"type": "enabled", "budget_tokens": 4000}}, lambda o: o.thinking == "4000"),
    ({"max_thinking_tokens": 2048}, lambda o: o.thinking == "2048"),
    ({"effort": "high"}, lambda o: o.effort == "high"),
    ({"permission_prompt_tool_name": "stdio"}, lambda o: o.permission_prompt_tool == "stdio"),
    ({"max_budget_usd": 0.5}, lambda o: o.max_budget_usd == 0.5),
])
def test_a_flag_the_sdk_passes_is_taken(tmp_path, given, seen):
    assert seen(parsed(tmp_path, **given))


def test_claude_codes_thinking_budget_in_the_apps_env_is_taken(tmp_path, monkeypatch):
    """``MAX_THINKING_TOKENS`` (the SDK's ``env``), as Claude Code reads it: a budget,
    0 for none; a flag that says the thinking wins; a bad value is named."""
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
    for given, thinking in (("8000", "8000"), ("0", "off")):
        monkeypatch.setenv("MAX_THINKING_TOKENS", given)
        opts = parsed(tmp_path)
        assert claude_shaped(opts) and opts.thinking == thinking
    opts = parsed(tmp_path, thinking={"type": "adaptive"})
    assert claude_shaped(opts) and opts.thinking == "adaptive"
    monkeypatch.setenv("MAX_THINKING_TOKENS", "lots")
    with pytest.raises(UsageError, match="MAX_THINKING_TOKENS=lots"):
        claude_shaped(parsed(tmp_path))


def test_add_dirs_and_mcp_servers_are_taken(tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    opts = parsed(tmp_path, add_dirs=[extra], mcp_servers={
        "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
        "calc": {"type": "sdk", "name": "calc", "instance": object()}})
    assert opts.add_dirs == [extra.resolve()]
    servers = {s.name: s.transport.value for s in mcp_servers(opts)}
    assert servers == {"web": "http", "calc": "sdk"}


def test_a_session_the_sdk_resumes_or_forks_is_looked_up(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    opts = parsed(tmp_path, resume="no-such-session", fork_session=True)
    assert opts.resume == "no-such-session" and opts.fork_session
    from agent_tui.cli.wiring import Wiring

    with pytest.raises(UsageError, match="no-such-session"):
        Wiring(opts, interactive=False)


@pytest.mark.parametrize(("given", "flag"), [
    ({"tools": ["Read"]}, "--tools"),
    ({"fallback_model": "claude-haiku-4-5"}, "--fallback-model"),
    ({"betas": ["context-1m-2025-08-07"]}, "--betas"),
    ({"session_id": "4b1c6a3e-0000-4000-8000-000000000000"}, "--session-id"),
    ({"include_hook_events": True}, "--include-hook-events"),
    ({"strict_mcp_config": True}, "--strict-mcp-config"),
    ({"resume": "x", "resume_session_at": "m1"}, "--resume-session-at"),
    ({"output_format": {"type": "json_schema", "schema": {"type": "object"}}}, "--json-schema"),
    ({"task_budget": {"total": 1000}}, "--task-budget"),
    ({"thinking": {"type": "adaptive", "display": "summarized"}}, "--thinking-display"),
    ({"permission_prompt_tool_name": "mcp__perm__ask"}, "--permission-prompt-tool"),
    ({"extra_args": {"debug-to-stderr": None}}, "--debug-to-stderr"),
])
def test_a_flag_agent_tui_does_not_honour_is_named_in_the_error(tmp_path, given, flag):
    with pytest.raises(UsageError) as refused:
        parsed(tmp_path, **given)
    assert flag in str(refused.value)


def test_claude_codes_auto_mode_is_not_taken_for_agent_tuis(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
    with pytest.raises(UsageError, match="--permission-mode auto: in Claude Code's protocol"):
        claude_shaped(parsed(tmp_path, permission_mode="auto"))


def test_the_sdk_only_flags_are_refused_with_agent_tuis_own_events(tmp_path):
    opts = parse_options(["--cwd", str(tmp_path), "-p", "hi", "--output-format", "stream-json",
                          "--include-partial-messages"])
    with pytest.raises(UsageError, match="--include-partial-messages goes with"):
        claude_shaped(opts)
    opts = parse_options(["--cwd", str(tmp_path), "-p", "hi", "--output-format", "stream-json",
                          "--replay-user-messages"])
    with pytest.raises(UsageError, match="--replay-user-messages goes with"):
        claude_shaped(opts)


@pytest.mark.parametrize(("sources", "denied"), [
    (None, {"Bash(user)", "Bash(agent-tui-user)", "Bash(project)", "Bash(local)"}),
    ([], set()),
    (["user", "project"], {"Bash(user)", "Bash(agent-tui-user)", "Bash(project)"}),
    (["local"], {"Bash(local)"}),
])
def test_setting_sources_choose_the_settings_files_read(tmp_path, monkeypatch, sources, denied):
    """Claude Code's sources: ``user`` (its file and ours), ``project`` (.claude/ and
    .agent-tui/ settings.json), ``local`` (.claude/settings.local.json); ``--settings``
    is always read. A dropped file's deny rules and hooks go with it: the app chose."""
    from agent_tui.cli.wiring import Wiring

    monkeypatch.setattr("agent_tui.paths._SOURCES", None)  # Wiring sets it for the process
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    for path, name in ((tmp_path / "claude" / "settings.json", "user"),
                       (tmp_path / "xdg" / "agent-tui" / "settings.json", "agent-tui-user"),
                       (ws / ".claude" / "settings.json", "project"),
                       (ws / ".claude" / "settings.local.json", "local")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"permissions": {"deny": [f"Bash({name})"]}}))
    opts = parse_options(["--cwd", str(ws), *sdk_argv(
        ws, setting_sources=sources, settings='{"permissions": {"deny": ["Bash(flag)"]}}')])
    loaded = Wiring(opts, interactive=False).settings_for(ws)
    assert {r.text for r in loaded.deny} == denied | {"Bash(flag)"}


def test_an_unknown_setting_source_is_named(tmp_path):
    with pytest.raises(UsageError, match="--setting-sources: policy is no setting source"):
        parsed(tmp_path, setting_sources=["user", "policy"])


def test_setting_sources_choose_the_memory_agents_skills_and_commands_read(tmp_path, monkeypatch):
    """As Claude Code's: ``project`` is the workspace's CLAUDE.md, .claude/agents, skills and
    commands, ``user`` the user's, ``local`` CLAUDE.local.md; a plugin's stay."""
    from agent_tui.commands.files import command_dirs
    from agent_tui.core.calls.agent_types import agent_dirs
    from agent_tui.core.memory.memory import memory_places, subfolder_memory
    from agent_tui.paths import use_setting_sources
    from agent_tui.tools.skills.catalog import skill_dirs

    monkeypatch.setattr("agent_tui.paths._SOURCES", None)
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "CLAUDE.md").write_text("sub memo")

    def scopes() -> dict[str, set[str]]:
        return {"memory": {s for _, s in memory_places(ws, home, home)},
                "agents": {str(s) for s, _ in agent_dirs(ws, home)},
                "skills": {str(s) for s, _ in skill_dirs(ws, home)},
                "commands": {s for s, _ in command_dirs(ws, home, home)}}

    assert scopes()["memory"] == {"user", "project", "local"}
    use_setting_sources(frozenset({"user"}))
    assert scopes() == {"memory": {"user"}, "agents": {"user"},
                        "skills": {"user", "user (.agents)"}, "commands": {"user"}}
    assert subfolder_memory(ws, ws / "sub" / "x.py", set()) == []
    use_setting_sources(frozenset({"project", "local"}))
    assert scopes() == {"memory": {"project", "local"}, "agents": {"project"},
                        "skills": {"project", "project (.agents)"}, "commands": {"project"}}
    assert [m.text for m in subfolder_memory(ws, ws / "sub" / "x.py", set())] == ["sub memo"]
