"""Claude Code's plugins through ``agent-tui plugin`` (in process) and the loaders:
the marketplace fixture ``tests/plugin_market/`` added, its plugin installed and
recorded in Claude Code's own files (the shapes seen with Claude Code 2.1.197), what
it runs shown before it is enabled, its parts loaded as the user's own, and bad input
said clearly with the rest still loaded."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_tui.cli.plugin_command import plugin_main
from agent_tui.cli.plugin_wiring import add_plugin_definitions
from agent_tui.commands.files import load_commands
from agent_tui.hooks.config import load_hooks
from agent_tui.plugins import enabled_plugins
from agent_tui.plugins.offered import offered
from agent_tui.settings import load_settings
from agent_tui.settings.mcp_servers import load_config
from tests.plugins_support import home  # noqa: F401  (a fixture: HOME of its own)

MARKET = Path(__file__).parent / "plugin_market"


@pytest.fixture
def market(tmp_path: Path) -> Path:
    return Path(shutil.copytree(MARKET, tmp_path / "market"))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def cli(*argv: str, answer: bool = False) -> int:
    return plugin_main(list(argv), ask=lambda question: answer)


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_install_records_as_claude_code_does_and_shows_what_it_runs_first(
        home: Path, market: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("marketplace", "add", str(market)) == 0
    assert "Added marketplace acme-local" in capsys.readouterr().out
    assert cli("install", "kit@acme-local", "--yes") == 0
    out = capsys.readouterr().out
    plugins = home / ".claude" / "plugins"
    copy = plugins / "cache" / "acme-local" / "kit" / "1.2.0"
    # Claude Code's records, in its shapes
    known = read(plugins / "known_marketplaces.json")["acme-local"]
    assert known["source"] == {"source": "directory", "path": str(market)}
    assert known["installLocation"] == str(market)
    installed = read(plugins / "installed_plugins.json")
    assert installed["version"] == 2
    [entry] = installed["plugins"]["kit@acme-local"]
    assert entry["scope"] == "user" and entry["installPath"] == str(copy)
    assert entry["version"] == "1.2.0" and entry["installedAt"].endswith("Z")
    settings = read(home / ".claude" / "settings.json")
    assert settings["enabledPlugins"] == {"kit@acme-local": True}
    assert settings["extraKnownMarketplaces"]["acme-local"] == {
        "source": {"source": "directory", "path": str(market)}}
    assert (copy / "hooks" / "guard.py").is_file()
    # what it will run, said before "Enabled"
    review, enabled = out.split("Enabled kit@acme-local")
    assert f'hook PreToolUse [Bash]: python3 "{copy}/hooks/guard.py"' in review
    assert f"MCP server echo: python3 {copy}/server.py" in review
    assert "/kit:greet runs: echo kit-marker-42" in review
    assert "agents: kit:reviewer" in review and "skills: kit:tidy" in review
    assert cli("list") == 0
    assert "kit@acme-local  1.2.0  enabled" in capsys.readouterr().out


def test_without_a_yes_the_plugin_is_installed_and_not_enabled(
        home: Path, market: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("marketplace", "add", str(market))
    assert cli("install", "kit", answer=False) == 1  # a bare name found in one marketplace
    out = capsys.readouterr().out
    assert "It will run:" in out and "Not enabled" in out
    assert read(home / ".claude" / "settings.json")["enabledPlugins"] == {"kit@acme-local": False}
    assert enabled_plugins().plugins == []
    assert cli("enable", "kit", answer=True) == 0
    assert [p.name for p in enabled_plugins().plugins] == ["kit"]


def test_an_enabled_plugins_parts_load_as_the_users_own(
        home: Path, market: Path, ws: Path) -> None:
    cli("marketplace", "add", str(market))
    cli("install", "kit@acme-local", "--yes")
    copy = home / ".claude" / "plugins" / "cache" / "acme-local" / "kit" / "1.2.0"
    commands = load_commands(ws)
    greet = commands.find("kit:greet")
    assert greet is not None and greet.scope == "plugin:kit" and commands.find("greet") is greet
    assert greet.allowed_tools == ["Bash(echo:*)"]
    [hook] = load_hooks(load_settings(ws)).commands
    assert hook.command == f'python3 "{copy}/hooks/guard.py"' and not hook.project
    [server] = [s for s in load_config(ws).servers if s.name.startswith("plugin_")]
    assert server.name == "plugin_kit_echo" and server.args == [str(copy / "server.py")]
    skills, agents = SimpleNamespace(skills=[]), SimpleNamespace(types=[])
    assert add_plugin_definitions(skills, agents, ws) == []
    assert [s.name for s in skills.skills] == ["kit:tidy"]
    assert [t.name for t in agents.types] == ["kit:reviewer"]
    # disabled: nothing of it loads
    assert cli("disable", "kit") == 0
    assert load_commands(ws).find("kit:greet") is None
    assert load_hooks(load_settings(ws)).commands == []


def test_bad_input_is_said_clearly_and_the_rest_still_loads(
        home: Path, market: Path, ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("install", "kit@nowhere", "--yes") == 1
    assert "no marketplace named 'nowhere'" in capsys.readouterr().err
    cli("marketplace", "add", str(market))
    assert cli("marketplace", "add", str(market / "plugins")) == 1
    assert "no marketplace here (expected .claude-plugin/marketplace.json)" in capsys.readouterr().err
    assert cli("install", "broken@acme-local", "--yes") == 1
    err = capsys.readouterr().err
    assert "plugins/broken/.claude-plugin/plugin.json:2:1: invalid JSON" in err
    # a manifest naming a hook file outside its folder: that part is left out, not the rest
    manifest = market / "plugins" / "kit" / ".claude-plugin" / "plugin.json"
    (market / "outside.json").write_text('{"hooks": {}}')
    manifest.write_text(json.dumps({**read(manifest), "hooks": "../../outside.json"}))
    assert cli("install", "kit@acme-local", "--yes") == 0
    assert "problem: plugin kit: hooks: ../../outside.json is outside the plugin's folder" \
        in capsys.readouterr().out
    # a plugin enabled by hand but broken after: said at start, the other still loads
    broken = home / ".claude" / "plugins" / "cache" / "acme-local" / "broken"
    shutil.copytree(market / "plugins" / "broken", broken)
    records = home / ".claude" / "plugins" / "installed_plugins.json"
    data = read(records)
    data["plugins"]["broken@acme-local"] = [{"scope": "user", "installPath": str(broken)}]
    records.write_text(json.dumps(data))
    cli("enable", "broken@acme-local", "--yes")  # refused: its manifest does not parse
    settings = home / ".claude" / "settings.json"
    settings.write_text(json.dumps({**read(settings), "enabledPlugins": {
        "kit@acme-local": True, "broken@acme-local": True, "gone@acme-local": True}}))
    found = enabled_plugins()
    assert [p.name for p in found.plugins] == ["kit"]
    said = "\n".join(found.problems)
    assert "plugin broken@acme-local not loaded:" in said and "invalid JSON" in said
    assert "plugin gone@acme-local is enabled but not installed" in said
    assert "../../outside.json is outside the plugin's folder" in said
    assert load_commands(ws).find("kit:greet") is not None
    assert len(load_hooks(load_settings(ws)).commands) == 1  # its own hooks.json


def test_a_projects_settings_offer_plugins_and_never_enable_them(
        home: Path, market: Path, ws: Path) -> None:
    cli("marketplace", "add", str(market))
    cli("install", "kit@acme-local", answer=False)  # installed, not enabled
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"kit@acme-local": True},
        "extraKnownMarketplaces": {"team": {"source": {"source": "git",
                                                       "url": "https://example.com/t.git"}}}}))
    (ws / ".claude" / "settings.local.json").write_text(json.dumps({
        "enabledPlugins": {"kit@acme-local": True}}))
    assert enabled_plugins().plugins == []
    assert load_commands(ws).find("kit:greet") is None
    lines = offered(ws)
    assert len(lines) == 3
    assert "suggests the plugin kit@acme-local: not enabled" in lines[0]
    assert "suggests the marketplace team (https://example.com/t.git): not added" in lines[1]
    assert str(ws / ".claude" / "settings.local.json") in lines[2]
    notices = load_settings(ws).problem_details
    assert not any("enabledPlugins" in str(p) for p in notices)  # read here, not unknown


def test_removing_a_marketplace_uninstalls_its_plugins(
        home: Path, market: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli("marketplace", "add", str(market))
    cli("install", "kit@acme-local", "--yes")
    assert cli("marketplace", "list") == 0
    assert f"acme-local  {market}" in capsys.readouterr().out
    assert cli("marketplace", "remove", "acme-local") == 0
    assert "uninstalled kit@acme-local" in capsys.readouterr().out
    plugins = home / ".claude" / "plugins"
    assert read(plugins / "known_marketplaces.json") == {}
    assert read(plugins / "installed_plugins.json")["plugins"] == {}
    assert read(home / ".claude" / "settings.json") == {"extraKnownMarketplaces": {},
                                                        "enabledPlugins": {}}


def test_a_hostile_marketplace_cannot_write_or_read_outside_its_places(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    market = tmp_path / "evil"
    (market / ".claude-plugin").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    plugin = market / "p"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "dots", "version": ".."}')
    (plugin / "link").symlink_to(tmp_path / "secret")
    os.mkfifo(plugin / "pipe")  # a copy would wait on it for good
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
        "name": "evil", "plugins": [{"name": "../../escape", "source": "./p"},
                                    {"name": "out", "source": "../secret"},
                                    {"name": "dots", "source": "./p"}]}))
    assert cli("marketplace", "add", str(market)) == 0
    assert "name '../../escape': letters, digits" in capsys.readouterr().err
    assert cli("install", "out@evil", "--yes") == 1
    assert "source ../secret is outside the marketplace" in capsys.readouterr().err
    assert cli("install", "dots@evil", "--yes") == 0
    out, err = capsys.readouterr()
    copy = home / ".claude" / "plugins" / "cache" / "evil" / "dots" / "unknown"
    assert f"Installed dots@evil in {copy}" in out
    assert f"{plugin}/link: a symlink or special file, not copied" in err
    assert f"{plugin}/pipe: a symlink or special file, not copied" in err
    assert not (copy / "link").exists() and not (copy / "pipe").exists()


def test_a_marketplace_from_a_git_url_is_cloned_into_claude_codes_folder(
        home: Path, market: Path, tmp_path: Path) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(market), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "market")
    url = f"file://{market}"
    assert cli("marketplace", "add", url) == 0
    clone = home / ".claude" / "plugins" / "marketplaces" / "acme-local"
    known = read(home / ".claude" / "plugins" / "known_marketplaces.json")["acme-local"]
    assert known["source"] == {"source": "git", "url": url}
    assert known["installLocation"] == str(clone)
    assert (clone / ".claude-plugin" / "marketplace.json").is_file()
    assert cli("install", "kit@acme-local", "--yes") == 0
    assert load_commands(tmp_path).find("kit:greet") is not None
    assert cli("marketplace", "add", f"file://{tmp_path}/nothing-here") == 1


def test_a_fifo_for_a_settings_file_hangs_nothing(home: Path, ws: Path) -> None:
    import os

    from agent_tui.hooks.status_line import status_line_command

    (ws / ".claude").mkdir()
    os.mkfifo(ws / ".claude" / "settings.json")
    os.mkfifo(ws / ".claude" / "settings.local.json")
    assert offered(ws) == []
    assert status_line_command(ws) == (None, [])


def test_what_agent_tui_cannot_load_is_named_before_and_after_enabling(tmp_path: Path) -> None:
    from agent_tui.plugins.manifest import read_plugin
    from agent_tui.plugins.review import review

    root = tmp_path / "lsp-kit"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({
        "name": "lsp-kit", "channels": [{"server": "chat"}], "dependencies": [], "themes": "./t"}))
    (root / ".lsp.json").write_text(json.dumps({"py": {"command": "pylsp"}}))
    (root / "monitors").mkdir()
    (root / "monitors" / "monitors.json").write_text("[]")
    (root / "settings.json").write_text(json.dumps({"agent": "x"}))
    plugin = read_plugin(root)
    assert plugin.problems == [
        "plugin lsp-kit: its LSP servers (.lsp.json) are not loaded: agent-tui has no "
        "language-server client",
        "plugin lsp-kit: its channels (channels in .claude-plugin/plugin.json) are not loaded: "
        "agent-tui takes no messages pushed by an MCP server",
        "plugin lsp-kit: its monitors (monitors/monitors.json) are not loaded: agent-tui arms "
        "no background monitors",
        "plugin lsp-kit: its themes (themes in .claude-plugin/plugin.json) are not loaded: "
        "agent-tui's themes are its own",
        "plugin lsp-kit: its default settings (settings.json) are not loaded: a plugin's "
        "settings are not merged into yours"]
    assert all(f"problem: {p}" in review(plugin) for p in plugin.problems)
