"""Hooks as Claude Code runs them, checked against what Claude Code 2.1.332 was seen
doing on the same scenarios and the same fake model (``fidelity_fixtures/``): the
``if`` filter, ``PostToolUse``'s ``tool_response`` for Read (the raw file) and for MCP
tools (a list of content blocks), ``PostToolUseFailure``, the compact transcript, and
the Stop loop's bound (8, a setting). Real hook commands, a real session, the real SDK
over HTTP to the fake API; Claude Code itself is not needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.hooks.commands import DEFAULT_MAX_STOP_CONTINUES
from agent_tui.hooks.payloads import tool_response
from agent_tui.protocol import HookEvent, UserMessage
from agent_tui.settings import load_settings
from tests.fake_api import Reply
from tests.hooks_support import LOG_INPUT, command_hooks, hook_script, logged, start, tool_results

SEEN = json.loads((Path(__file__).parent / "fidelity_fixtures" / "claude_code_hooks.json").read_text())



@pytest.mark.asyncio
async def test_if_payloads_and_failures_as_claude_code_sends_them(fake_api, tmp_path, monkeypatch):
    monkeypatch.setenv("HOOK_LOG", str(tmp_path / "hook.log"))
    log = hook_script(tmp_path / "hooks", "log", LOG_INPUT)
    hooks = command_hooks(tmp_path, tmp_path / "ws", {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": log, "if": "Bash(git push:*)"}]},
            {"matcher": "Read", "hooks": [{"type": "command", "command": log, "if": "Read(*.env)"}]}],
        "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": log}]}],
        "PostToolUseFailure": [{"matcher": "*", "hooks": [{"type": "command", "command": log}]}],
    })
    run, ws = start(fake_api, tmp_path, hooks)
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    (ws / "a.env").write_text("K=1\n")
    fake_api.enqueue(
        Reply.tool_uses([("bash", {"command": "git status"}),
                         ("bash", {"command": "echo ok && git push origin main"}),
                         ("bash", {"command": "sudo -n git push"}),
                         ("read_file", {"path": "a.env"}), ("read_file", {"path": "notes.txt"})]),
        Reply.tool_use("bash", {"command": "false"}),
        Reply.text("done"))
    run.submit(UserMessage(text="go"))
    await run.idle()
    seen = logged(tmp_path / "hook.log")
    pre = [p for p in seen if p["hook_event_name"] == "PreToolUse"]
    # `if`: only the calls its rule matches; a guard on `git push` sees it inside a list
    # (as Claude Code does) and through a wrapper (stricter: Claude Code lets it by)
    seen_if = SEEN["PreToolUse_if_commands"]
    assert "echo ok && git push origin main" in seen_if["ran_for"] and "sudo git push" in seen_if["not_for"]
    assert sorted(p["tool_input"].get("command") or p["tool_input"]["file_path"] for p in pre) == sorted([
        "echo ok && git push origin main", "sudo -n git push", str(ws / "a.env")])
    post = [p for p in seen if p["hook_event_name"] == "PostToolUse"]
    expected = SEEN["PostToolUse_Read"]["tool_response"]
    assert sorted((p["tool_response"]["file"] for p in post), key=lambda f: f["filePath"]) == [
        {**expected["file"], "filePath": str(ws / "a.env"), "content": "K=1\n", "numLines": 1,
         "totalLines": 1},
        {**expected["file"], "filePath": str(ws / "notes.txt"), "content": "alpha\nbeta\n",
         "numLines": 2, "totalLines": 2}]  # Claude Code counts the empty last line: 3
    assert all(p["tool_response"]["type"] == "text" for p in post)
    failed = [p for p in seen if p["hook_event_name"] == "PostToolUseFailure"]
    assert [p["tool_input"]["command"] for p in failed] == [
        "git status", "echo ok && git push origin main", "sudo -n git push", "false"]
    theirs = set(SEEN["PostToolUseFailure_Bash"]["keys"]) - {"prompt_id", "effort", "duration_ms"}
    assert theirs <= set(failed[-1])
    assert failed[-1]["error"].startswith(SEEN["PostToolUseFailure_Bash"]["error"])
    assert failed[-1]["is_interrupt"] is False and "tool_response" not in failed[-1]
    # the transcript is compact JSONL, as Claude Code writes it: hooks grep it
    text = Path(seen[0]["transcript_path"]).read_text()
    assert '"role":"assistant"' in text and '": ' not in text


def test_an_mcp_tools_response_is_a_list_of_content_blocks() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
    got = tool_response("mcp__github__get_issue", {}, {"content": "the tool's text", "is_error": False,
                                                       "blocks": [image]})
    assert got == [*SEEN["PostToolUse_mcp"]["tool_response"], image]


def test_a_read_cut_short_gives_the_lines_read_and_no_total() -> None:
    content = "     3\tgamma\n     4\tdelta\n[notes.txt: showed lines 3-4; more lines follow; read on with offset=5]"
    got = tool_response("read_file", {"file_path": "/w/notes.txt"}, {
        "content": content, "details": {"first_line": 3, "last_line": 4, "complete": False}})
    assert isinstance(got, dict)
    assert got["file"] == {"filePath": "/w/notes.txt", "content": "gamma\ndelta\n", "numLines": 2,
                           "startLine": 3}


def test_the_stop_loop_bound_is_claude_codes_and_a_setting(tmp_path: Path) -> None:
    assert DEFAULT_MAX_STOP_CONTINUES == SEEN["Stop_blocking_forever"]["continues"] == 8
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"limits": {"stopHookContinues": 2}}')
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none")
    assert loaded.limits.stop_continues == 2 and not loaded.problems
    (tmp_path / ".claude" / "settings.json").write_text('{"limits": {"stopHookContinues": 1000}}')
    assert load_settings(tmp_path, user_dir=tmp_path / "none").problems  # bounded: said, not taken


def test_an_if_that_does_not_parse_keeps_the_guard_running_for_every_call(tmp_path: Path) -> None:
    from agent_tui.hooks import load_hooks
    (tmp_path / "s.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "g", "if": "Bash(rm"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "s", "if": "Bash(rm *)"}]}]}}))
    loaded = load_settings(tmp_path, user_dir=tmp_path / "none", extra=[tmp_path / "s.json"])
    config = load_hooks(loaded)
    assert [(h.command, h.condition) for h in config.commands] == [("g", None), ("s", None)]
    said = "\n".join(str(p) for p in config.problems)
    assert "missing ')'" in said and "runs for every call" in said
    assert "`if` applies to tool events only" in said
    assert HookEvent.POST_TOOL_USE_FAILURE.value == "PostToolUseFailure"
