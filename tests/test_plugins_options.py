"""A plugin's options (its manifest's ``userConfig``, Claude Code's shape): asked for
once it is enabled, kept where only the user writes (a sensitive value in a 0600 file
of agent-tui's state, never in settings), put into its MCP servers' configurations as
``${user_config.KEY}`` and into its hooks' environment as ``CLAUDE_PLUGIN_OPTION_*``
(a real hook run; a hook's command reads them from there, never from its text); a project cannot set them; a
broken ``userConfig`` is said and the other plugins still load."""

from __future__ import annotations

import asyncio
import io
import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_tui.cancel import CancelScope
from agent_tui.cli.plugin_command import plugin_main
from agent_tui.cli.plugin_wiring import add_plugin_definitions
from agent_tui.core.services.hooks_port import HookBase
from agent_tui.protocol.states import HookEvent
from agent_tui.hooks.commands import CommandHooks
from agent_tui.hooks.config import load_hooks
from agent_tui.plugins import enabled_plugins
from agent_tui.plugins.options import option_env, secrets_path
from agent_tui.settings import load_settings
from agent_tui.settings.mcp_servers import load_config
from tests.plugins_support import PLUGIN, USER_CONFIG, home, options_market  # noqa: F401

def _installed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
               user_config: Any = USER_CONFIG) -> str:
    ask = lambda question: True  # noqa: E731
    assert plugin_main(["marketplace", "add", str(options_market(tmp_path, user_config))], ask=ask) == 0
    assert plugin_main(["install", "plain@opts", "--yes"], ask=ask) == 0
    code = plugin_main(["install", PLUGIN, "--yes"], ask=ask)
    return f"{code}\n{capsys.readouterr().out}"


def _state_and_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "state"))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def _server_env(ws: Path) -> dict[str, Any]:
    servers = {s.name: s for s in load_config(ws, include_project=False).servers}
    server = servers["plugin_vault_api"]
    return {"args": list(getattr(server, "args", [])), "env": dict(getattr(server, "env", {}))}


def test_options_are_asked_kept_apart_and_reach_servers_and_hooks(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _state_and_workspace(tmp_path, monkeypatch)
    said = _installed(tmp_path, capsys)
    # no terminal to ask at: how to set them is said, and the plugin is enabled
    assert said.startswith("0\n") and "It asks for options: api_key (sensitive), region, retries" in said
    # the review before enabling says how the hook gets the secret it names
    assert ("hook UserPromptSubmit: printf '%s' 'key: ${user_config.api_key}' > \"$OUT.key\"  [option "
            "api_key (sensitive): read from $CLAUDE_PLUGIN_OPTION_<KEY> in its environment, never "
            "written into the command; it does not run while one is unset]") in said
    assert "hook UserPromptSubmit: env | grep ^CLAUDE_PLUGIN_OPTION_ | sort > \"$OUT\"\n" in said
    assert f"{PLUGIN} needs options: api_key (set them with /plugin config {PLUGIN} in the TUI or: " \
           f"agent-tui plugin config {PLUGIN} KEY=VALUE)" in said
    found = enabled_plugins()
    assert [p for p in found.problems if "options not set" in p] == [
        f"plugin {PLUGIN}: options not set: api_key (set them with /plugin config {PLUGIN} in the TUI or: "
        f"agent-tui plugin config {PLUGIN})"]
    # said at every session's start, as a notice (the TUI, -p and ACP alike)
    skills, agents = SimpleNamespace(skills=[]), SimpleNamespace(types=[])
    unset_note = next(p for p in found.problems if "options not set" in p)
    assert unset_note in add_plugin_definitions(skills, agents, ws)
    # the server and the hook that name the unset key are not loaded; the other plugin is
    for what in ("MCP server api", "a UserPromptSubmit hook"):
        assert any(f"{what} names ${{user_config.api_key}}, which has no value" in p
                   for p in found.problems)
    assert len(load_hooks(load_settings(ws)).commands) == 1
    assert sorted(p.name for p in found.plugins) == ["plain", "vault"]
    assert "plugin_vault_api" not in {s.name for s in load_config(ws, include_project=False).servers}

    # set them: a secret from stdin (never on the command line), a bad value refused
    assert plugin_main(["config", "vault", "retries=9"]) == 1
    assert "retries: must be at most 5" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("s3cr'et\n"))
    assert plugin_main(["config", "vault", "api_key=-", "region=us", "retries=2"]) == 0
    listed = capsys.readouterr().out
    assert "api_key (required)  (set, hidden)  API key" in listed and "s3cr" not in listed
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["pluginConfigs"] == {PLUGIN: {"options": {"region": "us", "retries": 2}}}
    assert "s3cr" not in (home / ".claude" / "settings.json").read_text()
    assert json.loads(secrets_path().read_text()) == {PLUGIN: {"api_key": "s3cr'et"}}
    assert stat.S_IMODE(secrets_path().stat().st_mode) == 0o600

    # a sub-agent type's prompt gets the plain values, never the secret
    skills, agents = SimpleNamespace(skills=[]), SimpleNamespace(types=[])
    add_plugin_definitions(skills, agents, ws)
    [ops] = [t for t in agents.types if t.name == "vault:ops"]
    plugin_root = home / ".claude" / "plugins" / "cache" / "opts" / "vault" / "1.0.0"
    assert ops.system.strip() == ("Work in us with [sensitive option 'api_key' not available "
                                  f"here]; retries 2; {plugin_root} on {ws}.")
    # and so does a skill's text, when the model uses it
    from agent_tui.core.calls.tool import ToolContext
    from agent_tui.tools.skills import SkillTool
    from agent_tui.tools.skills.catalog import Skills

    tool = SkillTool(Skills(skills=skills.skills))
    used = asyncio.run(tool.run(tool.parse({"name": "vault:deploy"}), ToolContext(
        scope=CancelScope("test"), workspace=ws, tool_use_id="toolu_x", operation_id="op")))
    data = home / ".claude" / "plugins" / "data" / "vault-opts"
    assert ("Deploy to us (key [sensitive option 'api_key' not available here], "
            f"${{user_config.nope}}) with {plugin_root}/bin and "
            f"{plugin_root}/skills/deploy/steps.md, state in {data}.") in used.content
    # the server gets the values where its configuration names them
    # and its folders, as Claude Code gives them to a stdio server (its data made 0700)
    assert _server_env(ws) == {"args": ["server.py", "--region", "us"], "env": {
        "TOKEN": "s3cr'et", "CLAUDE_PLUGIN_ROOT": str(plugin_root), "CLAUDE_PLUGIN_DATA": str(data)}}
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    # both hooks run for real with the values in their environment; the one that names
    # the secret reads it from there (the quote in it is never parsed), its text never
    # holds it
    assert not [p for p in enabled_plugins().problems if "api_key" in p]
    loaded = load_hooks(load_settings(ws)).commands
    assert len(loaded) == 2 and "s3cr" not in repr([h.command for h in loaded])
    out = tmp_path / "env.txt"
    hooks = CommandHooks(loaded, workspace=ws, env={"OUT": str(out)})
    asyncio.run(hooks.fire(HookEvent.USER_PROMPT_SUBMIT, HookBase(session_id="s", cwd=str(ws)),
                           CancelScope(), {"prompt": "hi"}))
    assert out.read_text().splitlines() == [
        "CLAUDE_PLUGIN_OPTION_API_KEY=s3cr'et", "CLAUDE_PLUGIN_OPTION_REGION=us",
        "CLAUDE_PLUGIN_OPTION_RETRIES=2"]
    assert Path(f"{out}.key").read_text() == "key: s3cr'et"


def test_a_project_cannot_set_options_and_a_stored_value_that_does_not_fit_is_unset(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "state"))
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    _installed(tmp_path, capsys)
    evil = {"pluginConfigs": {PLUGIN: {"options": {"api_key": "theirs", "region": "us"}}}}
    for name in ("settings.json", "settings.local.json"):
        (ws / ".claude" / name).write_text(json.dumps(evil))
    # the user's settings hold a sensitive key (never read from there) and a region
    # outside its options (unset: the default stands)
    user = home / ".claude" / "settings.json"
    data = json.loads(user.read_text())
    user.write_text(json.dumps({**data, "pluginConfigs": {PLUGIN: {"options": {
        "api_key": "plain-text", "region": "mars"}}}}))
    os.chdir(ws)
    found = enabled_plugins()
    assert any("options not set: api_key" in p for p in found.problems)
    monkeypatch.setattr("sys.stdin", io.StringIO("k\n"))
    assert plugin_main(["config", PLUGIN, "api_key=-"]) == 0
    assert _server_env(ws)["args"] == ["server.py", "--region", "eu"]


@pytest.mark.parametrize(("user_config", "message"), [
    ({"1key": {"type": "string", "title": "t", "description": "d"}},
     "userConfig: '1key': option keys are identifiers"),
    ({"k": {"type": "string", "title": "t", "description": "d", "secret": True}},
     "userConfig.k.secret: Extra inputs are not permitted"),
    ({"k": {"type": "colour", "title": "t", "description": "d"}}, "userConfig.k.type: "),
    ({"k": {"type": "string", "title": "t", "description": "d", "options": ["a", "b"]}},
     "a field with options needs a default among them, or required: true"),
])
def test_a_broken_user_config_is_said_and_the_other_plugins_load(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        user_config: Any, message: str) -> None:
    ask = lambda question: True  # noqa: E731
    assert plugin_main(["marketplace", "add", str(options_market(tmp_path, user_config))], ask=ask) == 0
    assert plugin_main(["install", "plain@opts", "--yes"], ask=ask) == 0
    assert plugin_main(["install", PLUGIN, "--yes"], ask=ask) == 1
    assert message in capsys.readouterr().err


def test_option_env_names_and_values_are_claude_codes() -> None:
    assert option_env({"api-key": "x", "on": True, "n": 3.0, "tags": ["a", "b"]}) == {
        "CLAUDE_PLUGIN_OPTION_API_KEY": "x", "CLAUDE_PLUGIN_OPTION_ON": "true",
        "CLAUDE_PLUGIN_OPTION_N": "3", "CLAUDE_PLUGIN_OPTION_TAGS": "a,b"}


def test_a_value_is_checked_against_its_field() -> None:
    from agent_tui.plugins.options import OptionField, check_value, parse_value

    text = OptionField.model_validate({"type": "string", "title": "t", "description": "d",
                                       "multiple": True})
    assert parse_value(text, " a, b ,") == ["a", "b"]
    for bad in ("a\x00b", ["ok", "x\x00"], "x" * 5000, 3):
        with pytest.raises(ValueError):
            check_value(text, bad)  # a NUL would end a hook's start; a number is no text
    flag = OptionField.model_validate({"type": "boolean", "title": "t", "description": "d"})
    assert parse_value(flag, "Yes") is True and parse_value(flag, "off") is False
    with pytest.raises(ValueError, match="expected true or false"):
        parse_value(flag, "maybe")


def test_enabling_at_a_terminal_asks_each_option_and_a_secret_unechoed(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "state"))

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    typed = iter(["nowhere", "us", "7", "3"])  # region refused once, retries once
    secrets: list[str] = []
    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr("builtins.input", lambda prompt: next(typed))
    monkeypatch.setattr("getpass.getpass", lambda prompt: secrets.append(prompt) or "tok")
    said = _installed(tmp_path, capsys)
    assert secrets == ["  api_key [(not set)]: "]
    assert "must be one of eu, us" in said and "must be at most 5" in said
    assert "Still not set" not in said and "tok" not in said
    assert json.loads(secrets_path().read_text()) == {PLUGIN: {"api_key": "tok"}}
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["pluginConfigs"][PLUGIN]["options"] == {"region": "us", "retries": 3}


def test_a_secret_claude_code_kept_is_read_from_its_own_file_only_when_private(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _state_and_workspace(tmp_path, monkeypatch)
    _installed(tmp_path, capsys)
    # Claude Code's plain-text "secure storage" on Linux, beside the user's login
    kept = home / ".claude" / ".credentials.json"
    kept.write_text(json.dumps({"claudeAiOauth": {"accessToken": "login"}, "pluginSecrets": {
        PLUGIN: {"api_key": "cc-secret", "region": "us"}}}))
    kept.chmod(0o600)
    assert not [p for p in enabled_plugins().problems if "options not set" in p]
    assert _server_env(ws)["env"]["TOKEN"] == "cc-secret"
    assert _server_env(ws)["args"] == ["server.py", "--region", "eu"]  # a plain one is never read there
    # readable by others: not read, and the notice says why
    kept.chmod(0o644)
    [note] = [p for p in enabled_plugins().problems if "options not set" in p]
    assert note.endswith(f"; Claude Code's stored values: {kept}: others may read it (mode 644; "
                         "chmod 600 it); not read")
    assert "plugin_vault_api" not in {s.name for s in load_config(ws, include_project=False).servers}
    # a symlink to a private file elsewhere is not followed
    elsewhere = tmp_path / "creds.json"
    kept.rename(elsewhere)
    elsewhere.chmod(0o600)
    kept.symlink_to(elsewhere)
    assert any("a symlink is not followed" in p for p in enabled_plugins().problems)
    # agent-tui's own value wins over Claude Code's
    kept.unlink()
    elsewhere.rename(kept)
    monkeypatch.setattr("sys.stdin", io.StringIO("mine\n"))
    assert plugin_main(["config", PLUGIN, "api_key=-"]) == 0
    assert _server_env(ws)["env"]["TOKEN"] == "mine"
    assert "login" in kept.read_text() and "mine" not in kept.read_text()  # never written
