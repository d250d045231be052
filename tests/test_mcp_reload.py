"""The MCP config files read again when they change during a session, at turn
boundaries: servers added are started, removed stopped, changed restarted, with one
notice; a broken edit keeps the last good version and says why. Real server
processes (tests/mcp_servers/sdk_server.py and catalog_server.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from agent_tui.protocol import TurnEnded, TurnStarted
from agent_tui.core.calls.tool import ToolSet
from agent_tui.mcp import McpManager, ServerState, load_config
from agent_tui.mcp.reload import McpReload
from tests.mcp_support import SDK_SERVER, SERVERS, call

CATALOG = str(SERVERS / "catalog_server.py")


def _entry(script: str, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [script, *args]}


def _write(path: Path, servers: dict[str, Any] | str) -> None:
    text = servers if isinstance(servers, str) else json.dumps({"mcpServers": servers})
    path.write_text(text)
    # a new mtime even on a coarse clock: the watch compares stat, then content
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


async def _until(check: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def _gone(pid: int | None) -> bool:
    assert pid is not None
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


class Session:
    """The manager and its reload, fed turn events as the session's emit feeds them."""

    def __init__(self, tmp_path: Path) -> None:
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        self.user = tmp_path / "user"
        self.user.mkdir()
        self.notices: list[tuple[str, str]] = []
        self.tmp = tmp_path

    async def open(self) -> None:
        config = load_config(self.ws, user_config_dir=self.user, environ={})
        self.manager = McpManager(config.servers, workspace=self.ws, log_dir=self.tmp / "logs",
                                  start_timeout_s=15.0)
        self.tools = ToolSet()
        self.manager.attach(self.tools)
        self.manager.start()
        await self.manager.wait_started(15.0)
        self.reload = McpReload(
            self.manager, lambda: load_config(self.ws, user_config_dir=self.user, environ={}),
            [self.user / "mcp.json", self.ws / ".mcp.json"],
            lambda level, text: self.notices.append((level, text)))

    def event(self, event: Any) -> None:
        self.reload.observe(event)
        self.manager.observe(event)

    async def turn(self, n: int) -> None:
        """A turn that starts and ends (the files are looked at both times)."""
        self.event(TurnStarted(turn_id=f"t{n}", text="hi"))
        self.event(TurnEnded(turn_id=f"t{n}", status="completed"))
        await self.reload.settled()

    def states(self) -> dict[str, ServerState]:
        return {s.name: s.state for s in self.manager.status()}


@pytest.mark.asyncio
async def test_added_removed_and_changed_servers_follow_the_file_between_turns(tmp_path: Path) -> None:
    s = Session(tmp_path)
    project = s.ws / ".mcp.json"
    _write(project, {"one": _entry(SDK_SERVER, str(tmp_path / "r1.jsonl")),
                     "two": _entry(SDK_SERVER, str(tmp_path / "r2.jsonl"))})
    await s.open()
    try:
        assert s.states() == {"one": ServerState.READY, "two": ServerState.READY}
        two_pid = s.manager.status()[1].pid
        one_pid = s.manager.status()[0].pid
        await s.turn(1)
        assert s.notices == []  # nothing changed: nothing said, nothing restarted

        _write(project, {"one": _entry(SDK_SERVER, str(tmp_path / "r1.jsonl")),
                         "two": _entry(SDK_SERVER, str(tmp_path / "r2-new.jsonl")),
                         "notes": _entry(CATALOG)})
        await s.turn(2)
        assert s.notices == [("info", "MCP config changed: started notes; restarted two")]
        await _until(lambda: s.states() == {"one": "ready", "two": "ready", "notes": "ready"})
        status = {x.name: x for x in s.manager.status()}
        assert status["one"].pid == one_pid  # left as it was
        assert status["two"].pid != two_pid and _gone(two_pid)
        await s.turn(3)  # the new tools are offered from the turn's end on
        assert s.tools.get("mcp__notes__change") is not None
        result, _ = await call(s.tools, "mcp__two__echo", {"text": "new"})
        assert result.content == "echo: new"
        assert (tmp_path / "r2-new.jsonl").exists()  # the restarted server has its new args

        s.notices.clear()
        notes_pid = status["notes"].pid
        _write(project, {"one": _entry(SDK_SERVER, str(tmp_path / "r1.jsonl"))})
        await s.turn(4)
        assert s.notices == [("info", "MCP config changed: stopped two, notes")]
        assert set(s.states()) == {"one"}
        await _until(lambda: _gone(notes_pid))
        assert s.tools.get("mcp__notes__change") is None and s.tools.get("mcp__two__echo") is None
        assert s.tools.get("mcp__one__echo") is not None
    finally:
        await s.manager.shutdown()


@pytest.mark.asyncio
async def test_a_broken_edit_keeps_the_last_good_config_and_says_why(tmp_path: Path) -> None:
    s = Session(tmp_path)
    project = s.ws / ".mcp.json"
    _write(project, {"one": _entry(SDK_SERVER, str(tmp_path / "r1.jsonl"))})
    await s.open()
    try:
        pid = s.manager.status()[0].pid
        _write(project, '{"mcpServers": {"one": {"command": "x",}}}')  # a trailing comma
        await s.turn(1)
        [(level, text)] = s.notices
        assert level == "warning"
        assert f"{project}:1:" in text and "invalid JSON" in text and "kept as it was: one" in text
        assert s.states() == {"one": ServerState.READY} and s.manager.status()[0].pid == pid

        s.notices.clear()  # one entry broken, another added: the broken one is kept
        _write(project, {"one": {"args": ["no command"]}, "notes": _entry(CATALOG)})
        await s.turn(2)
        assert [lvl for lvl, _t in s.notices] == ["warning", "info"]
        assert "(server 'one')" in s.notices[0][1] and "kept as it was: one" in s.notices[0][1]
        assert s.notices[1][1] == "MCP config changed: started notes"
        await _until(lambda: s.states() == {"one": "ready", "notes": "ready"})
        assert s.manager.status()[0].pid == pid

        s.notices.clear()  # fixed again, as it was: nothing to restart
        _write(project, {"one": _entry(SDK_SERVER, str(tmp_path / "r1.jsonl")), "notes": _entry(CATALOG)})
        await s.turn(3)
        assert s.notices == [] and s.manager.status()[0].pid == pid
    finally:
        await s.manager.shutdown()


@pytest.mark.asyncio
async def test_the_user_file_is_watched_too_and_a_new_file_counts(tmp_path: Path) -> None:
    s = Session(tmp_path)
    await s.open()
    try:
        assert s.states() == {}
        _write(s.user / "mcp.json", {"mine": _entry(CATALOG)})
        await s.turn(1)
        assert s.notices == [("info", "MCP config changed: started mine")]
        await _until(lambda: s.states() == {"mine": "ready"})
    finally:
        await s.manager.shutdown()


def test_the_agent_reads_mcp_json_again_between_turns(fake_api, tmp_path: Path) -> None:
    """The real agent (stream-json print mode, a trusted project): a server added to
    the user's mcp.json after the first turn is started, told once, and its tools reach
    the model; the fake API sees the tool list grow. One added to the project's
    .mcp.json meanwhile (a command may have written it) does not start unasked."""
    from tests.fake_api import Reply
    from tests.print_agent import Agent
    from tests.print_agent import env_for

    ws = tmp_path
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  XDG_CONFIG_HOME=str(tmp_path / "config"), MCP_TIMEOUT="20000")
    fake_api.enqueue(Reply.text("one"), Reply.text("two"),
                     Reply.tool_use("mcp__demo__echo", {"text": "hot"}, id="toolu_hot"), Reply.text("three"))
    agent = Agent(ws, env, "--permission-mode", "auto", "--trust")
    try:
        agent.send({"type": "user_message", "text": "first"})
        agent.until(lambda e: e["type"] == "turn_ended")
        (tmp_path / "config" / "agent-tui").mkdir(parents=True)
        _write(tmp_path / "config" / "agent-tui" / "mcp.json",
               {"demo": _entry(SDK_SERVER, str(tmp_path / "rec.jsonl"))})
        _write(ws / ".mcp.json", {"planted": _entry(SDK_SERVER, str(tmp_path / "planted.jsonl"))})
        agent.send({"type": "user_message", "text": "second"})  # the edit is seen as it starts
        agent.until(lambda e: e["type"] == "turn_ended")
        if not any(e["type"] == "notice" and e["text"].startswith("MCP server demo: ready") for e in agent.events):
            agent.until(lambda e: e["type"] == "notice" and e["text"].startswith("MCP server demo: ready"))
        agent.send({"type": "user_message", "text": "third"})
        agent.until(lambda e: e["type"] == "turn_ended")
        assert agent.close() == 0
    finally:
        agent.proc.kill()
    notices = [e["text"] for e in agent.events if e["type"] == "notice"]
    assert notices.count("MCP config changed: started demo") == 1, notices
    held = [n for n in notices if "planted in" in n and "not started without your yes" in n]
    assert held and not (tmp_path / "planted.jsonl").exists(), notices
    names = [[t["name"] for t in r.get("tools", [])] for r in fake_api.requests]
    assert "mcp__demo__echo" not in names[0] and "mcp__demo__echo" in names[2]
    states = [e["state"] for e in agent.events if e.get("tool_use_id") == "toolu_hot" and e["type"] == "tool_state"]
    assert states[-1] == "succeeded"


@pytest.mark.asyncio
async def test_servers_an_acp_client_sent_are_never_touched_by_a_reload(tmp_path: Path) -> None:
    from agent_tui.mcp import ServerConfig
    from agent_tui.settings.mcp_servers import Transport

    s = Session(tmp_path)
    await s.open()
    try:
        editor = ServerConfig(name="editor", transport=Transport.STDIO, source=Path("ACP client"),
                              command=sys.executable, args=[CATALOG])
        s.manager.add_server(editor)
        s.reload = McpReload(s.manager, lambda: load_config(s.ws, user_config_dir=s.user, environ={}),
                             [s.ws / ".mcp.json"], lambda level, text: s.notices.append((level, text)),
                             fixed=frozenset({"editor"}))
        await _until(lambda: s.states() == {"editor": "ready"})
        _write(s.ws / ".mcp.json", {"editor": {"command": "x"}, "notes": _entry(CATALOG)})
        await s.turn(1)
        assert s.notices == [("info", "MCP config changed: started notes")]
        await _until(lambda: s.states() == {"editor": "ready", "notes": "ready"})
        assert s.manager.connections["editor"].config == editor  # the client's, as it sent it
    finally:
        await s.manager.shutdown()
