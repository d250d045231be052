"""End to end in tmux: web search turned on in the project's settings, asked for in
``ask`` mode, searched through the fake API's server tool once allowed, its results
listed with their links; refused, nothing is searched."""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.ui.screens.permission import ARM_DELAY
from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import BINARY, REPO, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

RESULTS = [("What's New In Python 3.14", "https://docs.python.org/3.14/whatsnew/3.14.html",
            "3 days ago")]


@pytest.fixture
def asking_agent(fake_api: FakeAnthropicServer, tmp_path: Path) -> Iterator[Tmux]:
    workspace = tmp_path / "work"
    (workspace / ".agent-tui").mkdir(parents=True)
    (workspace / ".agent-tui" / "settings.json").write_text('{"webSearch": {"enabled": true}}')
    (tmp_path / "home").mkdir()
    base = [str(BINARY)] if BINARY.exists() else [sys.executable, "-m", "agent_tui.cli"]
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmux.start([*base, "--permission-mode", "ask", "--cwd", str(workspace), "--trust"], {
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
        "AGENT_TUI_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO),
        "AGENT_TUI_NOTIFY": "off",
    }, workspace)
    try:
        tmux.wait_for("Type a message")
        yield tmux
    finally:
        tmux.quit()


def _searches(fake_api: FakeAnthropicServer) -> list[dict]:
    return [b for b in fake_api.requests
            if any(t.get("type") == "web_search_20250305" for t in b.get("tools", []))]


def test_an_allowed_search_lists_its_results_and_a_refused_one_searches_nothing(
        asking_agent: Tmux, fake_api: FakeAnthropicServer) -> None:
    tmux = asking_agent
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14 release"},
                                    text_before="Searching."),
                     Reply.web_search("python 3.14 release", RESULTS, "It came out.", cite=[0]),
                     Reply.text("Yes, Python 3.14 is out."))
    tmux.type("is python 3.14 out?")
    tmux.keys("Enter")
    screen = tmux.wait_for("Do you want to proceed?")
    assert "Asks because WebSearch sends the query" in screen and _searches(fake_api) == []
    time.sleep(ARM_DELAY * 2)  # a key before the prompt is armed goes to the input
    tmux.keys("y")
    screen = tmux.wait_for("Yes, Python 3.14 is out.")
    assert "What's New In Python 3.14" in screen
    assert "https://docs.python.org/3.14/whatsnew/3.14.html" in screen and "3 days ago" in screen
    assert len(_searches(fake_api)) == 1

    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.15 release"}))
    tmux.type("and 3.15?")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "Do you want to proceed?" in s and "query: python 3.15 release" in s)
    time.sleep(ARM_DELAY * 2)
    tmux.keys("n")  # no, and the turn stops
    tmux.wait_for("the turn stopped")
    assert len(_searches(fake_api)) == 1
