"""The marketplace fixture's ``kit`` (tests/plugin_market/), installed and enabled
through ``agent-tui plugin`` into a HOME of the test's own, then used by the real
agent in the TUI in tmux and over ACP against the fake API, as the -p test
(tests/test_plugins_print.py) uses it: its command with its ``!`` line, its hook
blocking a command (``${CLAUDE_PLUGIN_ROOT}`` pointing at the installed copy), its
skill and sub-agent type offered. In the TUI, with the rest of the user's setup on
the same first start: their output style and a key of their ``keybindings.json``."""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block

from agent_tui.cli.plugin_command import plugin_main
from tests.acp_client import RecordingClient, acp_agent, agent_env
from tests.fake_api import Reply
from tests.hooks_support import tool_results
from tests.tmux_agent import Tmux, agent_command, needs_tmux
from tests.tmux_agent import agent_env as tmux_env

MARKET = Path(__file__).parent / "plugin_market"
BLOCKED = "kit guard: rm is not allowed"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of an agent whose user installed and enabled ``kit@acme-local``;
    the workspace ``ws`` has a ``build`` folder the model will try to remove."""
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    for folder in (home, bin_dir, tmp_path / "ws" / "build"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    market = shutil.copytree(MARKET, tmp_path / "market")
    assert plugin_main(["marketplace", "add", str(market)]) == 0
    assert plugin_main(["install", "kit@acme-local", "--yes"]) == 0
    python = bin_dir / "python3"  # the hook's and the server's: this venv's, with the MCP SDK
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "PATH": f"{bin_dir}:/usr/bin:/bin"}


def _enqueue(fake_api) -> None:  # type: ignore[no-untyped-def]
    fake_api.enqueue(Reply.tool_use("bash", {"command": "rm -rf build"}, id="toolu_rm"),
                     Reply.text("greeted"))


def _used(fake_api, ws: Path) -> None:  # type: ignore[no-untyped-def]
    first = json.dumps(fake_api.requests[0]["messages"])
    assert "The marker says: kit-marker-42" in first and "Say hello to world." in first
    tools = {t["name"]: t for t in fake_api.requests[0]["tools"]}
    assert "kit:tidy" in tools["skill"]["description"]
    assert "kit:reviewer" in tools["task"]["description"]
    results = {b["tool_use_id"]: b for b in tool_results(fake_api.requests[-1])}
    assert BLOCKED in json.dumps(results["toolu_rm"]["content"])
    assert (ws / "build").is_dir()


def _after(line: str, screen: str) -> str:
    """The screen's line after the first that starts with ``line`` ("None": none does)."""
    lines = screen.splitlines()
    found = [i for i, text in enumerate(lines) if text.startswith(line)]
    return lines[found[0] + 1] if found and found[0] + 1 < len(lines) else "None"


@needs_tmux
def test_the_installed_plugin_works_in_the_tui(fake_api, tmp_path: Path,
                                               installed: dict[str, str]) -> None:
    """With the rest of the user's Claude Code setup on the first start: their output
    style and a key of their own ``keybindings.json``."""
    ws = tmp_path / "ws"
    claude = Path(installed["HOME"]) / ".claude"
    (claude / "output-styles").mkdir(parents=True)
    (claude / "output-styles" / "pirate.md").write_text(
        "---\nname: Pirate\ndescription: Talks like a pirate\n---\nArr.\n")
    settings = json.loads((claude / "settings.json").read_text())
    (claude / "settings.json").write_text(json.dumps({**settings, "outputStyle": "Pirate"}))
    (claude / "keybindings.json").write_text(json.dumps(
        {"bindings": [{"context": "Chat", "bindings": {"ctrl+t": "chat:newline"}}]}))
    _enqueue(fake_api)
    fake_api.enqueue(Reply.text("arr"))
    tmux = Tmux(f"agent-tui-plugins-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmux.start(agent_command(ws), tmux_env(fake_api.url, tmp_path / "state") | installed, ws)
    try:
        tmux.wait_for("Type a message")
        tmux.type("/kit:greet world")
        tmux.keys("Enter")
        screen = tmux.wait_for(lambda s: "greeted" in s)
        assert BLOCKED in "".join(line.strip() for line in screen.splitlines()), screen
        _used(fake_api, ws)
        tmux.type("ahoy")
        tmux.wait_for("│ ahoy")
        tmux.keys("C-t")  # the user's key for a new line: the input grows a line
        tmux.wait_for(lambda s: _after("│ ahoy", s).strip(" │") == "")
        tmux.type("matey")
        tmux.keys("Enter")
        tmux.wait_for(lambda s: "arr" in s.replace("greeted", ""))
        last = fake_api.requests[-1]
        assert json.dumps(last["messages"][-1]["content"]).count("ahoy\\nmatey") == 1, last
        assert "# Output Style: Pirate\nArr." in json.dumps(last["system"]).replace("\\n", "\n")
    finally:
        tmux.quit()


@pytest.mark.asyncio
async def test_the_installed_plugin_works_over_acp(fake_api, tmp_path: Path,
                                                   installed: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    _enqueue(fake_api)
    client = RecordingClient()
    env = agent_env(tmp_path, fake_api) | installed
    async with acp_agent(client, ["--cwd", str(ws)], env=env, cwd=tmp_path) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await client.wait_for(lambda: client.of("available_commands_update", sid))
        (update,) = client.of("available_commands_update", sid)
        assert "kit:greet" in {c.name for c in update.available_commands}
        response = await conn.prompt(session_id=sid, prompt=[text_block("/kit:greet world")])
        assert response.stop_reason == "end_turn"
        assert client.text(sid).endswith("greeted")
    _used(fake_api, ws)
