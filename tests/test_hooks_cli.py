"""Hooks wired by the real ``agent-tui`` process: the user's settings and ``--settings``
run theirs; a project's run only once the user trusts the project; a malformed entry
is reported and the rest still apply."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.forked_runs import run_agent
from tests.hooks_support import hook_script, settings_file
from tests.print_agent import env_for


def marker_hook(tmp_path: Path, name: str) -> dict:
    """A UserPromptSubmit hook that leaves a file behind when it runs."""
    command = hook_script(tmp_path / "hooks", name, f"""
        given = json.load(sys.stdin)
        with open({str(tmp_path / (name + ".ran"))!r}, "w") as fh:
            fh.write(given["prompt"])
    """)
    return {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}


def agent(tmp_path: Path, ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"))
    return run_agent(
        ["-p", "hello there", "--cwd", str(ws), *args],
        env=env, timeout=60,
    )


def test_a_project_hook_runs_in_the_default_mode_without_trust(tmp_path):
    ws = tmp_path / "ws"
    settings_file(ws / ".agent-tui" / "settings.json", marker_hook(tmp_path, "project"))
    ran = tmp_path / "project.ran"
    untrusted = agent(tmp_path, ws)  # no --trust, no --permission-mode: a guard still runs
    assert untrusted.returncode == 0, untrusted.stderr
    assert ran.read_text() == "hello there"
    assert "not run" not in untrusted.stderr


def test_user_and_command_line_settings_hooks_run_without_trusting_the_project(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    settings_file(tmp_path / "config" / "agent-tui" / "settings.json", marker_hook(tmp_path, "user"))
    extra = settings_file(tmp_path / "extra.json", marker_hook(tmp_path, "extra"))
    out = agent(tmp_path, ws, "--settings", str(extra))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "user.ran").read_text() == "hello there"
    assert (tmp_path / "extra.ran").read_text() == "hello there"


def test_a_malformed_hook_is_reported_with_its_place_and_the_others_run(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    good = marker_hook(tmp_path, "good")["UserPromptSubmit"][0]
    hooks = {"UserPromptSubmit": [good, {"matcher": 7, "hooks": []}]}
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"hooks": hooks}, indent=2))
    out = agent(tmp_path, ws, "--settings", str(extra))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "good.ran").exists()
    line = next(n for n, text in enumerate(extra.read_text().splitlines(), 1) if '"matcher": 7' in text)
    assert f"{extra}:{line}:" in out.stderr
    assert "hooks.UserPromptSubmit[1].matcher: expected a string, got a number (skipped)" in out.stderr
