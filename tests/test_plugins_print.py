"""A plugin installed through the real ``agent-tui plugin`` command and used by the
real ``agent-tui -p`` against the fake API: its command (with its ``!`` line), its
hook, its MCP server, its skill and its sub-agent type, as if the user wrote them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.hooks_support import tool_results
from tests.print_agent import env_for, events_of

MARKET = Path(__file__).parent / "plugin_market"


def test_an_installed_plugin_works_in_print_mode(fake_api, tmp_path: Path) -> None:
    home, ws, bin_dir = tmp_path / "home", tmp_path / "ws", tmp_path / "bin"
    for folder in (home, ws, bin_dir):
        folder.mkdir()
    (ws / "build").mkdir()
    python = bin_dir / "python3"  # the hook's and the server's: this venv's, with the MCP SDK
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    market = shutil.copytree(MARKET, tmp_path / "market")
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "xdg"), MCP_TIMEOUT="30000",
                  PATH=f"{bin_dir}:/usr/bin:/bin")
    env.pop("CLAUDE_CONFIG_DIR", None)
    added = run_agent(["plugin", "marketplace", "add", str(market)], env=env, timeout=60)
    assert added.returncode == 0, added.stderr
    installed = run_agent(["plugin", "install", "kit@acme-local", "--yes"], env=env, timeout=60)
    assert installed.returncode == 0, installed.stderr
    assert "It will run:" in installed.stdout

    fake_api.enqueue(
        Reply.tool_use("bash", {"command": "rm -rf build"}, id="toolu_rm"),
        Reply.tool_use("mcp__plugin_kit_echo__shout", {"text": "hi"}, id="toolu_mcp"),
        Reply.text("greeted"))
    out = run_agent(["-p", "/kit:greet world", "--output-format", "stream-json", "--cwd", str(ws),
                     "--allowedTools", "mcp__plugin_kit_echo"], env=env, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    events = events_of(out.stdout)
    first = json.dumps(fake_api.requests[0]["messages"])
    # the command, its `!` line run under its own allowed-tools
    assert "The marker says: kit-marker-42" in first and "Say hello to world." in first
    tools = {t["name"]: t for t in fake_api.requests[0]["tools"]}
    assert "kit:tidy" in tools["skill"]["description"]
    assert "kit:reviewer" in tools["task"]["description"]
    assert "mcp__plugin_kit_echo__shout" in tools, out.stdout
    results = {b["tool_use_id"]: b for b in tool_results(fake_api.requests[-1])}
    # the plugin's hook blocked the command, ${CLAUDE_PLUGIN_ROOT} pointing at its copy
    assert (ws / "build").is_dir()
    assert "kit guard: rm is not allowed" in json.dumps(results["toolu_rm"]["content"])
    # its server answered
    assert "kit says HI" in json.dumps(results["toolu_mcp"]["content"])
    assert [e for e in events if e["type"] == "result"][0]["result"] == "greeted"
