"""Claude Code's MCP tool hooks (``"type": "mcp_tool"``): a configured server's tool is
called with the hook's ``input`` (``${...}`` naming parts of the hook's input JSON), and
its answer is the hook's output; a server that is not there fails the hook (a gate then
blocks); a project's settings may not call the user's servers (stricter than Claude
Code: a repository's guard is a command)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_tui.hooks.config import HookKind, parse_hooks
from agent_tui.hooks.mcp_hook import interpolate
from agent_tui.settings.schema import HooksSource
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.mcp_support import SERVERS
from tests.print_agent import env_for


def _hooks(server: str) -> dict:
    return {"UserPromptSubmit": [{"hooks": [{
        "type": "mcp_tool", "server": server, "tool": "echo", "timeout": 30,
        "input": {"text": "asked: ${prompt} in ${cwd_missing.part}"}}]}]}


def _run(fake_api, tmp_path: Path, server: str):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"hooks": _hooks(server), "mcpServers": {}}))
    (tmp_path / "home").mkdir(exist_ok=True)  # the user's own servers (Claude Code's file)
    (tmp_path / "home" / ".claude.json").write_text(json.dumps({"mcpServers": {"tools": {
        "command": sys.executable, "args": [str(SERVERS / "sdk_server.py"),
                                            str(tmp_path / "rec.jsonl")]}}}))
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "xdg"),
                  MCP_TIMEOUT="30000")
    return run_agent(["-p", "hello there", "--cwd", str(ws), "--settings", str(settings)],
                     env=env, timeout=90)


def test_an_mcp_tool_hook_calls_the_tool_and_its_answer_is_the_hooks(fake_api, tmp_path) -> None:
    fake_api.enqueue(Reply.text("ok"))
    out = _run(fake_api, tmp_path, "tools")
    assert out.returncode == 0, out.stderr
    # the answer, as a UserPromptSubmit hook's plain output, is context for the model
    assert "[UserPromptSubmit hook] echo: asked: hello there in" in json.dumps(
        fake_api.requests[0]["messages"])
    seen = [json.loads(line) for line in (tmp_path / "rec.jsonl").read_text().splitlines()]
    assert [s["text"] for s in seen if s["event"] == "echo"] == ["asked: hello there in "]


def test_a_server_that_is_not_there_fails_the_hook_and_the_prompt_is_blocked(fake_api,
                                                                              tmp_path) -> None:
    out = _run(fake_api, tmp_path, "nowhere")
    assert "not connected or has no tool" in out.stderr, out.stderr
    assert fake_api.requests == []  # a gate whose guard could not run blocks


def test_a_projects_mcp_tool_hook_is_refused_and_the_users_is_read(tmp_path) -> None:
    hooks = _hooks("tools")
    mine, problems = parse_hooks(HooksSource(file=tmp_path / "u.json", project=False, value=hooks))
    assert [h.kind for h in mine] == [HookKind.MCP_TOOL] and not problems
    assert mine[0].mcp_server == "tools" and mine[0].mcp_input["text"].startswith("asked: ${prompt}")
    theirs, problems = parse_hooks(HooksSource(file=tmp_path / "p.json", project=True, value=hooks))
    assert theirs == [] and "may not call your MCP servers" in str(problems[0])


def test_interpolation_names_parts_of_the_input_json() -> None:
    given = {"tool_input": {"file_path": "a.py", "n": 3}, "hook_event_name": "PreToolUse"}
    assert interpolate({"p": "${tool_input.file_path}", "all": "${tool_input}",
                        "deep": ["${hook_event_name}!"], "keep": 1, "none": "${x.y}"}, given) == {
        "p": "a.py", "all": '{"file_path": "a.py", "n": 3}', "deep": ["PreToolUse!"], "keep": 1,
        "none": ""}
