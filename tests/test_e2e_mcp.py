"""End to end in a real terminal (tmux, the fake API over HTTP): an MCP server's
prompt run as ``/mcp__server__prompt``, its resource sent with ``@server:uri``, and
``.mcp.json`` edited between turns. The server is tests/mcp_servers/catalog_server.py."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import REPO, Tmux, agent_command, needs_tmux

pytestmark = needs_tmux

CATALOG = str(Path(__file__).parent / "mcp_servers" / "catalog_server.py")


def _servers(workspace: Path, *names: str, path: Path | None = None) -> None:
    path = path or workspace / ".mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {n: {"command": sys.executable, "args": [CATALOG]} for n in names}}))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_mcp_prompts_resources_and_a_config_edit_in_the_tui(fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    _servers(workspace, "notes")
    tmux = Tmux(f"agent-tui-e2e-mcp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
           "AGENT_TUI_HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "PYTHONPATH": str(REPO), "AGENT_TUI_NOTIFY": "off", "MCP_TIMEOUT": "30000"}
    fake_api.enqueue(Reply.text("Reviewed."), Reply.text("Summed up."), Reply.text("Three."))
    tmux.start(agent_command(workspace), env, workspace)
    try:
        tmux.wait_for("Type a message")
        tmux.wait_for("MCP server notes: ready")  # its prompts are in the menu from now on
        tmux.type("/mcp__notes__rev")
        tmux.wait_for("review one file")  # the menu, with the server's description
        tmux.keys("Enter")  # completes: the prompt needs its file
        tmux.type("src/a.py")
        tmux.keys("Enter")
        tmux.wait_for("Reviewed.")
        assert "Please review src/a.py, looking at everything." in json.dumps(fake_api.requests[0]["messages"][-1])

        tmux.type("sum up @today")
        tmux.wait_for("(MCP resource)")  # the picker lists it beside the files
        tmux.keys("Enter")  # chosen: @notes:notes://today
        tmux.wait_for("sum up @notes:notes://today")
        tmux.keys("Enter")
        tmux.wait_for("Summed up.")
        sent = json.dumps(fake_api.requests[1]["messages"][-1])
        assert '<resource uri=\\"notes:notes://today\\">\\nbuy milk\\ncall Ada\\n</resource>' in sent

        # the user's own MCP config gains a server (a project's .mcp.json changed during
        # the session would not start unasked)
        _servers(workspace, "more", path=tmp_path / "config" / "agent-tui" / "mcp.json")
        tmux.type("third")
        tmux.keys("Enter")
        tmux.wait_for("Three.")
        tmux.type("/mcp")
        tmux.wait_for("/mcp__notes__review")  # the menu
        tmux.keys("Escape")
        tmux.wait_for(lambda s: "/mcp__notes__review" not in s)
        tmux.keys("Enter")
        # the /mcp view: the server added to the user's mcp.json was started between turns
        tmux.wait_for(lambda s: any(line.strip("█▊▌ ").startswith("more ") for line in s.splitlines()))
    finally:
        tmux.quit()
