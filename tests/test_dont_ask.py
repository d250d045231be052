"""Claude Code's ``dontAsk`` permission mode (agent-tui's ``dont-ask``): nothing is
asked; what would be asked is refused and never runs, with the reason in its
tool_result; what a rule allows runs; a deny rule beats every allow. From the real
``agent-tui`` process in print mode against the fake API, given by
``--permission-mode dontAsk`` and by a project's ``defaultMode``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.fake_api import Reply
from tests.forked_runs import run_agent
from tests.hooks_support import hook_script, settings_file, tool_results
from tests.print_agent import env_for


def run(tmp_path: Path, ws: Path, fake_api: Any, *args: str) -> subprocess.CompletedProcess:
    home = tmp_path / "user-home"  # no ~/.claude of the machine's user
    home.mkdir(exist_ok=True)
    env = env_for(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_api.url,
                  HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    return run_agent(["--cwd", str(ws), *args], env=env, timeout=90)


def results_by_id(fake_api: Any) -> dict[str, str]:
    return {b["tool_use_id"]: json.dumps(b["content"]) for b in tool_results(fake_api.requests[-1])}


def touches(*names: str) -> Reply:
    return Reply.tool_uses([("bash", {"command": f"touch {n}"}, f"toolu_{n}") for n in names])


def test_permission_mode_dont_ask_runs_what_is_allowed_and_refuses_the_rest(fake_api, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("read me\n")
    log = tmp_path / "hook-log"
    hook = hook_script(tmp_path / "hooks", "log", f"""
        payload = json.load(sys.stdin)
        with open({str(log)!r}, "a") as f:
            f.write(json.dumps(payload) + "\\n")
    """)
    hooks = settings_file(tmp_path / "hooks.json", {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]})
    fake_api.enqueue(
        Reply.tool_uses([("bash", {"command": "touch allowed"}, "toolu_allowed"),
                         ("bash", {"command": "touch refused"}, "toolu_refused"),
                         ("read_file", {"path": "notes.txt"}, "toolu_read")]),
        Reply.text("done"))
    out = run(tmp_path, ws, fake_api, "-p", "touch", "--output-format", "stream-json",
              "--permission-mode", "dontAsk", "--allowedTools", "Bash(touch allowed)",
              "--settings", str(hooks))
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines[0]["permission_mode"] == "dont-ask"
    assert (ws / "allowed").exists() and not (ws / "refused").exists()
    told = results_by_id(fake_api)
    assert "read me" in told["toolu_read"]  # read-only calls are never asked: they run
    refused = told["toolu_refused"]
    assert "permission mode dontAsk denies Bash without asking" in refused
    assert "this session does not ask" in refused
    assert "an allow rule such as Bash(touch refused) would allow it" in refused
    assert lines[-1]["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": "toolu_refused",
         "tool_input": {"command": "touch refused"}}]
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [p["tool_input"]["command"] for p in seen] == ["touch allowed", "touch refused"]
    assert {p["permission_mode"] for p in seen} == {"dontAsk"}


def test_default_mode_dont_ask_in_a_projects_claude_settings(fake_api, tmp_path):
    """The project's rules decide: allow runs, ask is refused (nobody to ask), deny
    beats allow, and anything else is refused by the mode."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"permissions": {
        "defaultMode": "dontAsk",
        "allow": ["Bash(touch allowed)", "Bash(touch denied)"],
        "ask": ["Bash(touch asked)"],
        "deny": ["Bash(touch denied)"],
    }}))
    fake_api.enqueue(touches("allowed", "asked", "denied", "refused"), Reply.text("done"))
    out = run(tmp_path, ws, fake_api, "-p", "touch", "--output-format", "json", "--trust")
    assert out.returncode == 0, out.stderr
    assert "defaultMode" not in out.stderr  # no notice: the mode is taken as it is
    assert (ws / "allowed").exists()
    assert not any((ws / n).exists() for n in ("asked", "denied", "refused"))
    told = results_by_id(fake_api)
    assert "rule Bash(touch asked) asks before Bash, and this session does not ask" \
        in told["toolu_asked"]
    assert "denied by rule Bash(touch denied)" in told["toolu_denied"]
    assert "permission mode dontAsk denies Bash without asking" in told["toolu_refused"]
    result = json.loads(out.stdout)
    assert [d["tool_use_id"] for d in result["permission_denials"]] == [
        "toolu_asked", "toolu_denied", "toolu_refused"]
