"""A Claude Code user's MCP servers, unchanged: ``~/.claude.json``'s user scope (its
top-level ``mcpServers``) and local scope (its entry for the project), beside the
project's ``.mcp.json``, with Claude Code's precedence (local > project > user); the
project's servers approved by the user's own settings (``enabledMcpjsonServers``),
never by the project's. Real server processes (tests/mcp_servers/sdk_server.py), the
session's own wiring (``cli/mcp_wiring.py``) and, once, the real ``agent-tui -p``
against the fake API. Every test has a home of its own (tests/conftest.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cli.mcp_wiring import open_mcp
from agent_tui.paths import claude_state_file
from agent_tui.protocol import Notice, TurnEnded, TurnStarted
from agent_tui.settings import load_settings
from agent_tui.settings.mcp_servers import load_config
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.mcp_support import SDK_SERVER, call
from tests.print_agent import env_for, events_of


def _server(record: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SDK_SERVER, str(record)]}


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2))
    st = path.stat()  # a new mtime even on a coarse clock
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _claude_json(home: Path, ws: Path, user: dict[str, Any], local: dict[str, Any],
                 **noise: Any) -> dict[str, Any]:
    """``~/.claude.json`` as Claude Code keeps it: much besides the servers."""
    data = {"numStartups": 12, "theme": "dark", "oauthAccount": {"emailAddress": "a@b.c"},
            "mcpServers": user,
            "projects": {str(ws): {"allowedTools": [], "hasTrustDialogAccepted": True,
                                   "mcpServers": local, "lastCost": 0.5},
                         "/elsewhere": {"mcpServers": {"other": {"command": "nope"}}}},
            **noise}
    _write(home / ".claude.json", data)
    return data


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Session:
    """The session's MCP servers as the CLI opens them, in an untrusted project."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = Path.home()
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        self.tmp = tmp_path
        self.notices: list[str] = []

    async def open(self) -> None:
        settings = load_settings(self.ws, trusted=True)
        self.settings_problems = settings.problems
        self.mcp, self.reload = open_mcp(
            self.ws, self.emit, self.tmp / "state", trusted=False, extra=[],
            approved=settings.mcpjson)
        from agent_tui.core.calls.tool import ToolSet

        self.tools = ToolSet()
        self.mcp.attach(self.tools)
        self.mcp.start()
        await self.mcp.wait_started(30.0)

    def emit(self, event: Any) -> None:
        if isinstance(event, Notice):
            self.notices.append(event.text)

    async def turn(self, n: int) -> None:
        for event in (TurnStarted(turn_id=f"t{n}", text="hi"),
                      TurnEnded(turn_id=f"t{n}", status="completed")):
            self.reload.observe(event)
            self.mcp.observe(event)
        await self.reload.settled()

    def sources(self) -> dict[str, Path]:
        return {name: conn.config.source for name, conn in self.mcp.connections.items()}


@pytest.mark.asyncio
async def test_user_and_local_scope_servers_start_and_a_clash_goes_local_then_project_then_user(
        tmp_path: Path) -> None:
    s = Session(tmp_path)
    rec = {k: tmp_path / f"{k}.jsonl" for k in ("user", "project", "local", "mine")}
    # "shared" is in every scope, "team" in the user scope and the project's .mcp.json
    _claude_json(s.home, s.ws, user={"shared": _server(rec["user"]), "team": _server(rec["user"])},
                 local={"shared": _server(rec["local"])})
    _write(s.ws / ".mcp.json", {"mcpServers": {"shared": _server(rec["project"]),
                                               "team": _server(rec["project"])}})
    _write(s.home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["shared", "team"]})
    await s.open()
    try:
        assert s.sources() == {"shared": s.home / ".claude.json", "team": s.ws / ".mcp.json"}
        for name in ("shared", "team"):
            result, _ = await call(s.tools, f"mcp__{name}__echo", {"text": name})
            assert result.content == f"echo: {name}"
        assert [r.get("text") for r in _records(rec["local"]) if r.get("event") == "echo"] == ["shared"]
        assert [r.get("text") for r in _records(rec["project"]) if r.get("event") == "echo"] == ["team"]
        assert _records(rec["user"]) == []  # both clashes lost by the user scope
        assert not any("not started" in n for n in s.notices), s.notices
        # nothing of ~/.claude.json but the servers is named (nor another project's server)
        text = "\n".join(s.notices)
        assert "oauth" not in text.lower() and "other" not in text, s.notices
    finally:
        await s.mcp.shutdown()


@pytest.mark.asyncio
async def test_an_approval_in_the_projects_own_settings_starts_nothing_and_says_why(
        tmp_path: Path) -> None:
    s = Session(tmp_path)
    _write(s.ws / ".mcp.json", {"mcpServers": {"approved": _server(tmp_path / "a.jsonl"),
                                               "sneaky": _server(tmp_path / "s.jsonl")}})
    _write(s.home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["approved"]})
    # what a cloned repository could commit
    _write(s.ws / ".claude" / "settings.local.json",
           {"enabledMcpjsonServers": ["sneaky"], "enableAllProjectMcpServers": True})
    _write(s.ws / ".claude" / "settings.json", {"enabledMcpjsonServers": ["sneaky"]})
    await s.open()
    try:
        assert sorted(s.sources()) == ["approved"]
        refused = [p for p in s.settings_problems if "enabledMcpjsonServers" in p]
        assert len(refused) == 2, s.settings_problems
        local = next(p for p in refused if "settings.local.json" in p)
        assert "enableAllProjectMcpServers and enabledMcpjsonServers are only taken from your " \
               "user settings" in local
        assert "a repository cannot approve its own MCP servers (ignored)" in local
        assert not any("not supported" in p or "unknown key" in p for p in s.settings_problems)
        skipped = [n for n in s.notices if "not started" in n]
        assert len(skipped) == 1 and "sneaky" in skipped[0] and "approved" not in skipped[0]
        assert "enabledMcpjsonServers in ~/.claude/settings.json" in skipped[0]
    finally:
        await s.mcp.shutdown()


@pytest.mark.asyncio
async def test_claude_jsons_own_record_approves_and_rejects_for_this_project(tmp_path: Path) -> None:
    s = Session(tmp_path)
    _write(s.ws / ".mcp.json", {"mcpServers": {"yes": _server(tmp_path / "y.jsonl"),
                                               "no": _server(tmp_path / "n.jsonl")}})
    data = _claude_json(s.home, s.ws, user={}, local={})
    data["projects"][str(s.ws)].update(enableAllProjectMcpServers=True,
                                       disabledMcpjsonServers=["no"])
    _write(s.home / ".claude.json", data)
    await s.open()
    try:
        assert sorted(s.sources()) == ["yes"]
        assert not any("not started" in n for n in s.notices)  # the user said no: not nagged
    finally:
        await s.mcp.shutdown()


@pytest.mark.asyncio
async def test_a_broken_claude_json_is_one_notice_and_the_other_files_still_load(
        tmp_path: Path) -> None:
    s = Session(tmp_path)
    _write(s.home / ".claude.json", '{"numStartups": 3, "mcpServers": {"u": ')
    _write(s.home / ".config" / "agent-tui" / "mcp.json",
           {"mcpServers": {"mine": _server(tmp_path / "m.jsonl")}})
    await s.open()
    try:
        assert sorted(s.sources()) == ["mine"]
        result, _ = await call(s.tools, "mcp__mine__echo", {"text": "still here"})
        assert result.content == "echo: still here"
        said = [n for n in s.notices if ".claude.json" in n]
        assert said == [f"MCP config: {s.home / '.claude.json'}: not valid JSON: its MCP servers "
                        "(user and local scope) are not loaded; the other MCP config files "
                        "still are"]
    finally:
        await s.mcp.shutdown()


@pytest.mark.asyncio
async def test_the_reload_follows_claude_json_only_where_its_servers_are(tmp_path: Path) -> None:
    s = Session(tmp_path)
    rec = tmp_path / "u.jsonl"
    # a standing problem: told once at the start, not again at each rewrite
    data = _claude_json(s.home, s.ws, user={"u": _server(rec), "bad": {"type": "grpc"}}, local={})
    await s.open()
    try:
        bad = (f"MCP config: {s.home / '.claude.json'} (server 'bad'): unknown \"type\" 'grpc' "
               '(expected "stdio", "http" or "sse")')
        assert s.notices == [bad, "MCP server u: starting", "MCP server u: ready (7 tools)"]
        pid = s.mcp.status()[0].pid
        # what Claude Code does on each run: the file rewritten, other keys changed
        data.update(numStartups=13, tipsHistory={"x": 1})
        data["projects"][str(s.ws)]["lastCost"] = 1.25
        data["projects"]["/elsewhere"]["mcpServers"] = {}
        _write(s.home / ".claude.json", data)
        await s.turn(1)
        assert len(s.notices) == 3  # nothing said since
        assert s.mcp.status()[0].pid == pid

        data["projects"][str(s.ws)]["mcpServers"] = {"loc": _server(tmp_path / "l.jsonl")}
        _write(s.home / ".claude.json", data)
        await s.turn(2)
        assert s.notices[3:6] == [bad,
                                  "MCP config changed: started loc", "MCP server loc: starting"]
        assert sorted(s.sources()) == ["loc", "u"]
    finally:
        await s.mcp.shutdown()


def test_claude_config_dir_moves_claude_json_into_it(tmp_path: Path, monkeypatch: Any) -> None:
    folder = tmp_path / "cc-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    ws = tmp_path / "ws"
    ws.mkdir()
    assert claude_state_file() == folder / ".claude.json"
    _claude_json(Path.home(), ws, user={"home": {"command": "x"}}, local={})  # not read now
    _write(folder / ".claude.json", {"mcpServers": {"moved": {"command": "y"}}})
    config = load_config(ws, include_project=False)
    assert [(s.name, s.source) for s in config.servers] == [("moved", folder / ".claude.json")]


def test_the_model_calls_a_server_from_claude_json_through_print_mode(
        fake_api: Any, tmp_path: Path) -> None:
    home, ws = tmp_path / "home-cc", tmp_path / "ws"
    ws.mkdir()
    rec = tmp_path / "cc.jsonl"
    _claude_json(home, ws, user={"cc": _server(rec)}, local={})
    _write(ws / ".mcp.json", {"mcpServers": {"approved": _server(tmp_path / "a.jsonl"),
                                             "sneaky": _server(tmp_path / "s.jsonl")}})
    _write(home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["approved"]})
    _write(ws / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["sneaky"]})
    fake_api.enqueue(Reply.tool_use("mcp__cc__echo", {"text": "from claude.json"}, id="toolu_cc"),
                     Reply.text("echoed"))
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "config"), MCP_TIMEOUT="30000")
    out = run_agent(["-p", "echo", "--output-format", "stream-json",
                                  "--allowedTools", "mcp__cc", "--cwd", str(ws)],
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    states = [e["state"] for e in events if e["type"] == "tool_state"
              and e.get("tool_use_id") == "toolu_cc"]
    assert states[-1] == "succeeded", out.stdout
    assert [r["text"] for r in _records(rec) if r.get("event") == "echo"] == ["from claude.json"]
    assert "echo: from claude.json" in json.dumps(fake_api.requests[1]["messages"][-1])
    offered = {t["name"] for t in fake_api.requests[0].get("tools", [])}
    assert {"mcp__cc__echo", "mcp__approved__echo"} <= offered
    assert not any(n.startswith("mcp__sneaky__") for n in offered)
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert any("settings.local.json" in n and "cannot approve its own MCP servers" in n
               for n in notices), notices
    assert any("sneaky" in n and "not started" in n for n in notices), notices
