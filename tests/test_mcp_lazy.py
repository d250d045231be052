"""A session with no MCP server never loads the MCP SDK (it is the largest import of
an agent process); one with a server does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENT = [sys.executable, "-X", "importtime", "-m", "agent_tui.cli", "--provider", "scripted"]


def imported(tmp_path: Path, *args: str) -> set[str]:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "AGENT_TUI_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}
    out = subprocess.run([*AGENT, "-p", "hi", "--cwd", str(tmp_path / "ws"), *args], env=env,
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


def sdk(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in ("mcp", "mcp_types")}


def test_no_server_no_sdk_and_a_server_loads_it(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    assert sdk(imported(tmp_path)) == set()
    (tmp_path / "ws" / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"gone": {"command": str(tmp_path / "no-such-server")}}}))
    assert "mcp.client.session" in sdk(imported(tmp_path, "--permission-mode", "auto"))
