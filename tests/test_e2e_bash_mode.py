"""Bash mode end to end: the real binary in tmux. ``!`` marks the input, Enter runs the
command at once with no model request, its output is on screen, a single Esc stops a
long one, and the next message carries the commands to the model."""

from __future__ import annotations

import json
import uuid

from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import needs_tmux, processes_with, wait_for_condition

pytestmark = needs_tmux


def test_bang_runs_at_once_esc_stops_it_and_the_next_message_carries_it(
        agent, fake_api: FakeAnthropicServer) -> None:
    tmux, workspace = agent
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    tmux.type("!wc -l notes.txt")
    tmux.wait_for("bash mode")
    tmux.keys("Enter")
    screen = tmux.wait_for("2 notes.txt")
    assert "! wc -l notes.txt" in screen
    assert fake_api.requests == []  # no model request

    marker = f"E2E_BANG_{uuid.uuid4().hex[:10]}"
    tmux.type(f"!sleep 600; : {marker}")
    tmux.keys("Enter")
    wait_for_condition(lambda: bool(processes_with(marker)), "the command started")
    tmux.keys("Escape")
    wait_for_condition(lambda: not processes_with(marker), "the command stopped", timeout=10)
    tmux.wait_for("cancelled while running")

    fake_api.enqueue(Reply.text("Two lines, and you stopped the sleep."))
    tmux.type("what did those say?")
    tmux.keys("Enter")
    tmux.wait_for("you stopped the sleep")
    (request,) = fake_api.requests
    texts = [b["text"] for b in request["messages"][-1]["content"] if b["type"] == "text"]
    assert texts[0] == "<bash-input>wc -l notes.txt</bash-input>"
    assert texts[1] == "<bash-stdout>2 notes.txt\n</bash-stdout><bash-stderr></bash-stderr>"
    assert texts[2] == f"<bash-input>sleep 600; : {marker}</bash-input>"
    assert "Interrupted by the user" in texts[3]
    assert texts[-1] == "what did those say?", json.dumps(texts)
