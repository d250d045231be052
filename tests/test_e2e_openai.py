"""The TUI in tmux on a custom OpenAI-compatible provider (a ``--settings`` entry): a
tool loop runs, a single Esc in a stalled stream closes its connection, and ``/model``
goes on with the conversation on the Responses API of the same server."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from tests.fake_openai import FakeOpenAIServer, Reply
from tests.fake_openai.fixtures import fake_openai  # noqa: F401  (a fixture)
from tests.openai_support import bash
from tests.tmux_agent import REPO, Tmux, agent_command, needs_tmux, wait_for_condition

pytestmark = needs_tmux


def test_tui_runs_a_tool_loop_stops_a_stalled_stream_and_switches_wire_format(
        fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    entry = {"baseURL": fake_openai.url, "apiKeyEnv": "FAKE_OPENAI_KEY",
             "models": {"gpt-test": {"contextWindow": 128_000}}}
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"providers": {
        "chat": {"api": "openai-chat", **entry}, "resp": {"api": "openai-responses", **entry}}}))
    fake_openai.enqueue(bash("echo from-the-tool > made.txt"), Reply(text="Wrote made.txt."),
                        Reply(text="Thinking hard about", chunk=4, stall_after=(4, 60)),
                        Reply(text="Still here on the Responses API."))
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    env = {"FAKE_OPENAI_KEY": "sk-test", "AGENT_TUI_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(REPO), "AGENT_TUI_NOTIFY": "off"}
    tmux.start([*agent_command(workspace), "--settings", str(settings), "--model",
                "chat/gpt-test"], env, workspace)
    try:
        tmux.wait_for("Type a message")
        tmux.type("make the file")
        tmux.keys("Enter")
        tmux.wait_for("Wrote made.txt.")
        assert (workspace / "made.txt").read_text() == "from-the-tool\n"

        tmux.type("think")
        tmux.keys("Enter")
        tmux.wait_for("Thinking")
        tmux.keys("Escape")
        wait_for_condition(lambda: bool(fake_openai.disconnects), "the server saw the close",
                           timeout=10)

        tmux.type("/model resp/gpt-test")
        tmux.keys("Enter")
        tmux.wait_for("resp/gpt-test (")  # the status line: the switch is made, not only typed
        tmux.type("are you there?")
        tmux.keys("Enter")
        tmux.wait_for("Still here on the Responses API.")
    finally:
        tmux.quit()
    assert fake_openai.rejections == []
    last = fake_openai.requests[-1]
    assert "input" in last and any(i.get("type") == "function_call_output"
                                   for i in last["input"])
