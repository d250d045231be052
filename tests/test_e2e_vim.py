"""Vim mode end to end: the real binary in tmux, real keys from a terminal."""

from __future__ import annotations

from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import needs_tmux

pytestmark = needs_tmux


def test_vim_mode_edits_in_normal_mode_and_sends_from_insert_mode(
        agent, fake_api: FakeAnthropicServer) -> None:
    tmux, _workspace = agent
    tmux.type("/vim")
    tmux.keys("Enter")
    tmux.wait_for("-- INSERT --")
    tmux.type("hello cruel world")
    tmux.keys("Escape")
    tmux.wait_for("-- NORMAL --")
    tmux.type("bb")
    tmux.type("dw")
    tmux.wait_for(lambda screen: "hello world" in screen and "cruel" not in screen)
    tmux.type("A")
    tmux.wait_for("-- INSERT --")
    tmux.type(", again")
    fake_api.enqueue(Reply.text("Sent as edited."))
    tmux.keys("Enter")
    tmux.wait_for("Sent as edited.")
    (request,) = fake_api.requests
    texts = [b["text"] for b in request["messages"][-1]["content"] if b["type"] == "text"]
    assert texts[-1] == "hello world, again"
