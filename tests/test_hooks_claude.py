"""Guard hooks written for Claude Code work unchanged: the real ``agent-tui -p`` process
against the fake API, with hook scripts in the shapes public Claude Code hooks have
(Python and shell, comparing ``tool_name`` with ``"Bash"``, reading
``tool_input.file_path``, reading ``transcript_path``, writing ``CLAUDE_ENV_FILE``).
The fake model asks for the tool calls; the hooks decide."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.fake_api import Reply
from tests.hooks_support import tool_results
from tests.print_agent import events_of
from tests.hooks_support import agent, python_hook, script


def tool_states(out: subprocess.CompletedProcess[str], name: str) -> list[str]:
    return [e["state"] for e in events_of(out.stdout)
            if e["type"] == "tool_state" and e.get("name", name) == name]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


# (a) The shape of the official bash command validator: a Python PreToolUse hook on
# ``Bash`` that reads ``tool_input.command`` and exits 2.
BASH_GUARD = '''
    #!/usr/bin/env python3
    """Refuses recursive forced deletes before they run."""
    import json
    import sys

    try:
        data = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"bad input: {exc}", file=sys.stderr)
        sys.exit(1)
    if data.get("tool_name") != "Bash":
        sys.exit(0)
    command = data.get("tool_input", {}).get("command", "")
    if "rm -rf" in command:
        print("Blocked: rm -rf is not allowed here; delete files one by one.", file=sys.stderr)
        sys.exit(2)
    sys.exit(0)
'''


def test_a_python_bash_guard_blocks_rm_rf_and_the_model_gets_its_stderr(fake_api, tmp_path, ws):
    guard = script(ws / ".claude" / "hooks" / "no_rm_rf.py", BASH_GUARD)
    (ws / "build").mkdir()
    fake_api.enqueue(Reply.tool_use("bash", {"command": "rm -rf build && touch ran"}),
                     Reply.tool_use("bash", {"command": "touch allowed"}),
                     Reply.text("ok"))
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": python_hook(guard), "timeout": 30}]}]}
    out = agent(fake_api, tmp_path, "clean the build", hooks)
    assert out.returncode == 0, out.stderr
    assert (ws / "build").is_dir() and not (ws / "ran").exists()  # never ran
    assert (ws / "allowed").exists()  # the guard lets the rest through
    [blocked] = tool_results(fake_api.requests[1])
    assert blocked["is_error"]
    assert "Blocked: rm -rf is not allowed here; delete files one by one." in blocked["content"]


# (b) A shell guard on ``Edit|Write|Read`` with jq: no ``.env`` file is read or written.
ENV_GUARD = '''
    #!/bin/bash
    # Keeps secrets files out of reach of Read, Edit and Write.
    input=$(cat)
    file=$(printf '%s' "$input" | jq -r '.tool_input.file_path // empty')
    tool=$(printf '%s' "$input" | jq -r '.tool_name')
    case "$file" in
      /*) ;;
      *) echo "expected an absolute file_path, got '$file'" >&2; exit 2 ;;
    esac
    case "$file" in
      *.env) echo "Blocked: $tool on $file (a secrets file)" >&2; exit 2 ;;
    esac
    exit 0
'''


@pytest.mark.skipif(shutil.which("jq") is None, reason="the shell guard parses its input with jq")
def test_a_shell_guard_keeps_env_files_from_being_read_or_written(fake_api, tmp_path, ws):
    guard = script(ws / ".claude" / "hooks" / "protect-env.sh", ENV_GUARD)
    (ws / ".env").write_text("API_TOKEN=very-secret\n")
    (ws / "notes.txt").write_text("plain\n")
    fake_api.enqueue(
        Reply.tool_uses([("read_file", {"path": ".env"}),
                         ("write_file", {"path": "deploy/.env", "content": "LEAK=1\n"}),
                         ("edit_file", {"path": ".env", "old_string": "very-secret",
                                        "new_string": "changed"}),
                         ("read_file", {"path": "notes.txt"})]),
        Reply.text("ok"))
    hooks = {"PreToolUse": [{"matcher": "Edit|Write|Read", "hooks": [
        {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/protect-env.sh'}]}]}
    out = agent(fake_api, tmp_path, "look at the config", hooks)
    assert out.returncode == 0, out.stderr
    assert (ws / ".env").read_text() == "API_TOKEN=very-secret\n"
    assert not (ws / "deploy" / ".env").exists()
    results = tool_results(fake_api.requests[1])
    assert [r.get("is_error", False) for r in results] == [True, True, True, False]
    assert f"Blocked: Read on {ws / '.env'} (a secrets file)" in results[0]["content"]
    assert f"Blocked: Write on {ws / 'deploy' / '.env'}" in results[1]["content"]
    assert f"Blocked: Edit on {ws / '.env'}" in results[2]["content"]
    assert all("very-secret" not in r["content"] for r in results)
    assert "plain" in results[3]["content"]


# (c) A JSON answer: ``hookSpecificOutput.permissionDecision: "deny"`` with its reason.
JSON_GUARD = '''
    import json, sys
    data = json.load(sys.stdin)
    command = data["tool_input"].get("command", "")
    if "git push" in command:
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Pushing is done by CI, not by the agent"}}))
'''


def test_a_json_deny_blocks_the_call_and_gives_its_reason(fake_api, tmp_path, ws):
    guard = script(tmp_path / "hooks" / "no_push.py", JSON_GUARD)
    fake_api.enqueue(Reply.tool_use("bash", {"command": "git push origin main; touch pushed"}),
                     Reply.text("understood"))
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": python_hook(guard)}]}]}
    out = agent(fake_api, tmp_path, "ship it", hooks)
    assert out.returncode == 0, out.stderr
    assert not (ws / "pushed").exists()
    assert tool_states(out, "bash")[-1] == "denied"
    [result] = tool_results(fake_api.requests[1])
    assert result["is_error"] and "Pushing is done by CI, not by the agent" in result["content"]


# (d) A Stop hook that reads the transcript for the assistant's last words.
STOP_HOOK = '''
    import json, os, sys
    data = json.load(sys.stdin)
    last = ""
    with open(data["transcript_path"]) as fh:
        for line in fh:
            entry = json.loads(line)
            if entry.get("type") == "assistant":
                texts = [b["text"] for b in entry["message"]["content"] if b.get("type") == "text"]
                if texts:
                    last = texts[-1]
    with open(os.environ["STOP_LOG"], "a") as log:
        log.write(json.dumps({"last": last, "active": data["stop_hook_active"],
                              "given": data.get("last_assistant_message")}) + "\\n")
    if data["stop_hook_active"] or "All tests pass" in last:
        sys.exit(0)
    print(json.dumps({"decision": "block",
                      "reason": "Run the tests and say whether they pass before stopping."}))
'''


def test_a_stop_hook_reads_the_transcript_and_blocks_once(fake_api, tmp_path, ws, monkeypatch):
    monkeypatch.setenv("STOP_LOG", str(tmp_path / "stop.log"))
    hook = script(tmp_path / "hooks" / "check_stop.py", STOP_HOOK)
    fake_api.enqueue(Reply.text("I changed the parser."), Reply.text("All tests pass now."))
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": python_hook(hook)}]}]}
    out = agent(fake_api, tmp_path, "fix the parser", hooks)
    assert out.returncode == 0, out.stderr
    seen = [json.loads(line) for line in (tmp_path / "stop.log").read_text().splitlines()]
    assert seen == [
        {"last": "I changed the parser.", "active": False, "given": "I changed the parser."},
        {"last": "All tests pass now.", "active": True, "given": "All tests pass now."},
    ]
    assert len(fake_api.requests) == 2  # blocked once, then it stopped
    asked = json.dumps(fake_api.requests[1]["messages"][-1])
    assert "Run the tests and say whether they pass before stopping." in asked


# (e) A SessionStart hook leaves a variable in CLAUDE_ENV_FILE for the session's commands.
ENV_HOOK = '''
    #!/bin/bash
    if [ -n "$CLAUDE_ENV_FILE" ]; then
      echo 'export DEPLOY_TARGET=staging' >> "$CLAUDE_ENV_FILE"
      echo "export TOOLS_DIR=\\"$CLAUDE_PROJECT_DIR/tools\\"" >> "$CLAUDE_ENV_FILE"
      echo 'target() { echo "to $DEPLOY_TARGET"; }' >> "$CLAUDE_ENV_FILE"
    fi
    exit 0
'''


def test_a_session_start_hook_sets_variables_for_later_commands(fake_api, tmp_path, ws):
    hook = script(tmp_path / "hooks" / "session-env.sh", ENV_HOOK)
    fake_api.enqueue(
        Reply.tool_use("bash", {"command": 'echo "$DEPLOY_TARGET $TOOLS_DIR" > seen.txt'}),
        Reply.text("done"))
    hooks = {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": str(hook)}]}]}
    out = agent(fake_api, tmp_path, "where do we deploy?", hooks)
    assert out.returncode == 0, out.stderr
    assert (ws / "seen.txt").read_text() == f"staging {ws / 'tools'}\n"
    # Variables only: the notice names them, a function is not one.
    assert "SessionStart hooks set DEPLOY_TARGET, TOOLS_DIR for the commands" in out.stdout


def test_without_a_session_start_hook_nothing_is_added(fake_api, tmp_path, ws):
    fake_api.enqueue(Reply.tool_use("bash", {"command": 'echo "[${CLAUDE_ENV_FILE-unset}]" > seen.txt'}),
                     Reply.text("done"))
    out = agent(fake_api, tmp_path, "check", {})
    assert out.returncode == 0, out.stderr
    assert (ws / "seen.txt").read_text() == "[unset]\n"


def test_the_transcript_is_private_and_in_claude_codes_shape(fake_api, tmp_path, ws, monkeypatch):
    monkeypatch.setenv("STOP_LOG", str(tmp_path / "stop.log"))
    hook = script(tmp_path / "hooks" / "check_stop.py", STOP_HOOK)
    (ws / "a.txt").write_text("alpha\n")
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "a.txt"}, text_before="Reading."),
                     Reply.text("All tests pass."))
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": python_hook(hook)}]}]}
    out = agent(fake_api, tmp_path, "read a", hooks)
    assert out.returncode == 0, out.stderr
    [path] = list((tmp_path / "home").rglob("transcript.jsonl"))
    assert (path.parent / "journal.jsonl").exists()  # beside the journal
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["type"], e["message"]["role"]) for e in lines] == [
        ("user", "user"), ("assistant", "assistant"), ("user", "user"), ("assistant", "assistant")]
    assert lines[0]["message"]["content"] == "read a"
    tool_use = next(b for b in lines[1]["message"]["content"] if b["type"] == "tool_use")
    assert tool_use["name"] == "Read" and tool_use["input"] == {"file_path": str(ws / "a.txt")}
    [result] = lines[2]["message"]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == tool_use["id"]
    assert "alpha" in result["content"]
    assert lines[0]["parentUuid"] is None
    assert [e["parentUuid"] for e in lines[1:]] == [e["uuid"] for e in lines[:-1]]
    assert len({e["uuid"] for e in lines}) == len(lines)
    for entry in lines:
        assert entry["sessionId"] == lines[0]["sessionId"] and entry["cwd"] == str(ws)
        assert entry["timestamp"].endswith("Z")
