"""The peers bench's offline parts: each peer's settings in its throwaway home, the
argv it is started with, the screen's words, the table."""

from __future__ import annotations

import json
from pathlib import Path

from bench.peers import Column, table
from bench.peers_measure import flat, tree_command
from bench.peers_setup import (
    AGENT_TUI, CLAUDE, KEY, MODEL, OPENAI_MODEL, OPENCODE, PI, command, environment, print_command,
    write_config,
)


def test_claude_code_home_trusts_the_workspace_and_allows_the_shell(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_config(CLAUDE, tmp_path / "home", ws, "http://127.0.0.1:9")
    state = json.loads((tmp_path / "home" / ".claude.json").read_text())
    assert state["hasCompletedOnboarding"] is True
    assert state["projects"][str(ws)]["hasTrustDialogAccepted"] is True
    assert state["customApiKeyResponses"]["approved"] == [KEY[-20:]]
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["Bash"]
    env = environment(CLAUDE, tmp_path / "home", "http://127.0.0.1:9")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and env["HOME"] == str(tmp_path / "home")
    assert env["DISABLE_TELEMETRY"] == env["DISABLE_AUTOUPDATER"] == "1"


def test_pi_and_opencode_point_at_the_fake_and_stay_offline(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(PI, home, tmp_path, "http://127.0.0.1:9")
    pi = json.loads((home / ".pi" / "agent" / "models.json").read_text())["providers"]["bench"]
    assert pi["baseUrl"] == "http://127.0.0.1:9" and pi["api"] == "anthropic-messages"
    assert pi["models"][0]["id"] == MODEL
    assert environment(PI, home, "u")["PI_OFFLINE"] == "1"
    write_config(OPENCODE, home, tmp_path, "http://127.0.0.1:9/v1")
    oc = json.loads((home / ".config" / "opencode" / "opencode.json").read_text())
    assert oc["provider"]["bench"]["options"]["baseURL"].endswith("/v1")
    assert oc["model"] == "bench/" + OPENAI_MODEL and oc["autoupdate"] is False
    env = environment(OPENCODE, home, "u")
    assert env["OPENCODE_DISABLE_AUTOUPDATE"] == env["OPENCODE_DISABLE_MODELS_FETCH"] == "1"
    assert env["XDG_CONFIG_HOME"] == str(home / ".config")


def test_print_mode_argv(tmp_path: Path) -> None:
    assert print_command(OPENCODE, tmp_path, tmp_path, "hi")[-4:] == [
        "run", "--model", "bench/" + OPENAI_MODEL, "hi"]
    assert print_command(PI, tmp_path, tmp_path, "hi")[-2:] == ["-p", "hi"]
    agent = print_command(AGENT_TUI, tmp_path, tmp_path, "hi")
    assert "--cwd" in agent and agent[-2:] == ["-p", "hi"]
    assert command(CLAUDE, tmp_path, tmp_path)[0] == str(tmp_path / "node_modules/.bin/claude")


def test_screen_words_survive_escape_sequences() -> None:
    drawn = b"\x1b[2;3H\x1b(BInter\x1b[1Crupted\x1b]0;title\x07 \x1b[31m\xc2\xb7 What"
    assert "interrupted" in flat(drawn)
    assert "title" not in flat(drawn) and "(b" not in flat(drawn)
    line = tree_command("m-1")
    assert all(f"m-1-{kind}" in line for kind in ("plain", "ignore", "setsid", "double"))


def test_table_shows_medians_notes_and_floors() -> None:
    ours, peer = Column("agent-tui", "this tree"), Column("pi", "0.73.1")
    for value in (100.0, 120.0, 300.0):
        ours.add("close", value)
    ours.add("left", 0)
    peer.note("close", "needs a 2nd Esc")
    peer.add("close", 3000.0)
    peer.note("print", "not installed")
    text = table([ours, peer], {"close": "2 ms"}).splitlines()
    assert text[0] == "| figure | agent-tui this tree | pi 0.73.1 | floor |"
    close = next(line for line in text if line.startswith("| Esc in a stalled"))
    assert "| 120 ms | 3,000 ms (needs a 2nd Esc) | 2 ms |" in close
    printed = next(line for line in text if "`-p`" in line)
    assert "| - (not installed) |" in printed
    left = next(line for line in text if line.startswith("| processes left"))
    assert "| 0 |" in left and left.endswith("| 0 (killpg + reap) |")
