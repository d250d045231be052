"""The trust dialog: shown the first time a folder with files of its own is opened,
before the session starts. A snapshot of it, and the real TUI in tmux with the hostile
repository (tests/hostile_repo.py): "no" goes on untrusted (the project's allow rule
asks, its hook runs), and the answer "yes" is remembered for the next start."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.trust import ARM_DELAY, TrustQuestion, TrustScreen  # noqa: E402
from tests.fake_api import Reply  # noqa: E402
from tests.hostile_repo import make_hostile_repo, opened_doors  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402
from tests.tmux_agent import BINARY, REPO, Tmux  # noqa: E402


def test_the_trust_dialog(snap_compare) -> None:
    make, _ = fake_factory([])
    question = TrustQuestion(workspace=Path("/home/user/src/cloned-repo"),
                             found=[".claude", ".mcp.json", "CLAUDE.md"])
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, trust=lambda: question)

    async def shown(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TrustScreen), what="dialog")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(110, 32), run_before=shown)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_tui_asks_once_and_an_untrusted_folder_only_takes_away(fake_api, tmp_path) -> None:
    ws = make_hostile_repo(tmp_path / "ws")
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
           "AGENT_TUI_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "AGENT_TUI_NOTIFY": "off",
           "PYTHONPATH": str(REPO),
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    base = [str(BINARY)] if BINARY.exists() else [sys.executable, "-m", "agent_tui.cli"]
    command = [*base, "--cwd", str(ws)]  # the default mode: ask
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch pushed"}))
    tmux = Tmux(f"agent-tui-trust-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmux.start(command, env, ws)
    try:
        tmux.wait_for("Do you trust the files in this folder?")
        assert fake_api.requests == []  # the session waits for the answer
        time.sleep(ARM_DELAY * 2)  # a key before the dialog is armed is not an answer
        tmux.keys("n")
        screen = tmux.wait_for(lambda s: "this folder is not trusted" in "".join(
            line.strip() for line in s.splitlines()))
        tmux.type("push it")
        tmux.keys("Enter")
        tmux.wait_for("Do you want to proceed?")  # the project's allow rule is not in force
        assert "guard-log" in os.listdir(ws)  # ... and its guard ran
        time.sleep(ARM_DELAY * 2)
        tmux.keys("n")  # no, and the turn stops
        tmux.wait_for("the turn stopped")
        assert opened_doors(ws) == [], screen
    finally:
        tmux.quit()
    assert not (tmp_path / "state" / "trusted-folders.json").exists()  # "no" is not kept
    # a yes is remembered: the next start asks nothing
    tmux = Tmux(f"agent-tui-trust-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmux.start(command, env, ws)
    try:
        tmux.wait_for("Do you trust the files in this folder?")
        time.sleep(ARM_DELAY * 2)
        tmux.keys("y")
        tmux.wait_for(lambda s: "Do you trust" not in s)
    finally:
        tmux.quit()
    record = json.loads((tmp_path / "state" / "trusted-folders.json").read_text())
    assert str(ws.resolve()) in record["folders"]
