"""Bash mode (``run_shell``, ``!cmd`` in the TUI): the user's command runs at once
through the command runner, makes no model request, and rides with the next message
in Claude Code's shape (real agent processes against the fake API)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import UserCommandRecord
from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.print_agent import env_for, marked, wait_until
from tests.print_agent import Agent


def _journal(tmp_path: Path) -> list:
    (path,) = (tmp_path / "home").glob("sessions/*/journal.jsonl")
    return Journal.load(path).records


def test_a_command_runs_at_once_no_request_then_the_next_message_carries_it(fake_api, tmp_path):
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    fake_api.enqueue(Reply.text("I see the failure."))
    agent = Agent(tmp_path, env, "--permission-mode", "ask")  # asks nothing: the user's own
    try:
        agent.send({"type": "run_shell", "command": "echo out; echo err >&2; exit 3"})
        ended = agent.ended_call()
        assert ended["state"] == "failed" and ended["exit_code"] == 3
        shown = "".join(e["text"] for e in agent.events if e["type"] == "tool_output")
        assert "out" in shown and "err" in shown
        running = [e for e in agent.events if e["type"] == "tool_state" and e["state"] == "running"]
        assert running and running[0]["turn_id"] == "" and running[0]["summary"].startswith("! echo")
        assert not [e for e in agent.events if e["type"] == "permission_requested"]
        assert fake_api.requests == []  # no model request
        agent.send({"type": "user_message", "text": "why did it fail?"})
        agent.until(lambda e: e["type"] == "turn_ended")
        assert agent.close() == 0
    finally:
        agent.proc.kill()
    (request,) = fake_api.requests
    blocks = request["messages"][-1]["content"]
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    assert texts[0] == "<bash-input>echo out; echo err >&2; exit 3</bash-input>"
    # The runner's words (as the bash tool reports), then the output, merged.
    assert texts[1] == ("<bash-stdout>Command failed with exit code 3.\nout\nerr\n</bash-stdout>"
                        "<bash-stderr>Exit code 3</bash-stderr>")
    assert texts[-1] == "why did it fail?"
    (record,) = [r for r in _journal(tmp_path) if isinstance(r, UserCommandRecord)]
    assert record.command.startswith("echo out") and record.exit_code == 3


def test_esc_stops_the_command_and_what_it_started(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    agent = Agent(tmp_path, env)
    try:
        agent.send({"type": "run_shell", "command": f"echo started; sleep 300; : {marker}"})
        agent.until(lambda e: e["type"] == "tool_output" and "started" in e["text"])
        assert wait_until(lambda: marked(marker))
        started = time.monotonic()
        agent.send({"type": "interrupt"})
        ended = agent.ended_call()
        assert time.monotonic() - started < 5
        assert ended["state"] == "cancelled_while_running"
        assert wait_until(lambda: not marked(marker), timeout=5)
        agent.close()
    finally:
        agent.proc.kill()
        for proc in marked(marker):
            proc.kill()
    (record,) = [r for r in _journal(tmp_path) if isinstance(r, UserCommandRecord)]
    assert record.ended.startswith("Interrupted by the user") and "started" in record.output
    assert fake_api.requests == []


def test_a_deny_rule_still_refuses_the_users_command(fake_api, tmp_path):
    settings = tmp_path / "deny.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["bash(rm:*)"]}}))
    (tmp_path / "keep.txt").write_text("kept")
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    agent = Agent(tmp_path, env, "--permission-mode", "auto", "--settings", str(settings))
    try:
        agent.send({"type": "run_shell", "command": "rm keep.txt"})
        ended = agent.ended_call()
        agent.close()
    finally:
        agent.proc.kill()
    assert ended["state"] == "denied" and "Bash(rm:*)" in ended["detail"]
    assert (tmp_path / "keep.txt").read_text() == "kept"


def test_a_resumed_session_still_carries_a_command_not_yet_sent(fake_api, tmp_path):
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url)
    agent = Agent(tmp_path, env)
    try:
        agent.send({"type": "run_shell", "command": "echo remembered"})
        agent.ended_call()
        agent.close()  # (exit 1: print mode ran no turn)
    finally:
        agent.proc.kill()
    fake_api.enqueue(Reply.text("ok"))
    second = run_agent(
        ["-p", "and now?", "--continue", "--output-format", "stream-json",
         "--cwd", str(tmp_path)], env=env, timeout=60)
    assert second.returncode == 0, second.stderr
    texts = [b["text"] for b in fake_api.requests[-1]["messages"][-1]["content"]
             if b["type"] == "text"]
    assert texts[0] == "<bash-input>echo remembered</bash-input>"
    assert texts[1] == "<bash-stdout>remembered\n</bash-stdout><bash-stderr></bash-stderr>"
    assert texts[-1] == "and now?"
