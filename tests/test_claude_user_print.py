"""A Claude Code user's whole setup (``tests/claude_user/``), unchanged, through the real
``agent-tui -p`` against the fake API: their ``~/.claude/settings.json`` with its hooks,
the project's ``.claude/settings.json`` and ``.claude/settings.local.json``. The fake
model asks for the calls a careless model would make; the user's files decide."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fake_api import Reply
from tests.hooks_support import tool_results
from tests.claude_user_setup import FOLDER_SECRET, SECRET, SSH_KEY, Setup
from tests.print_agent import events_of

pytestmark = pytest.mark.skipif(shutil.which("jq") is None,
                                reason="the user's Stop hook reads the transcript with jq")


# One call per reply, each with its id: what the careless model asks for, in order.
CALLS = [
    ("deploy", "bash", {"command": "./scripts/deploy.sh --prod"}),
    ("rmrf", "bash", {"command": "rm -rf build"}),
    ("env", "read_file", {"path": ".env"}),
    ("secrets", "read_file", {"path": "secrets/token.txt"}),
    ("ssh", "read_file", {"path": "~/.ssh/id_ed25519"}),
    ("npm", "bash", {"command": "npm test -- --watch=false"}),
    ("check", "bash", {"command": "./scripts/check.sh"}),
    ("ls", "bash", {"command": "ls > listing.txt"}),  # a plain ls only reads: it would run
]


def script(fake_api: Any, setup: Setup) -> None:
    replies = []
    for key, name, given in CALLS:
        if key == "ssh":
            given = {"path": str(setup.home / ".ssh" / "id_ed25519")}
        replies.append(Reply.tool_use(name, given, id=f"toolu_{key}"))
    fake_api.enqueue(*replies, Reply.text("all done"))


def results_by_id(fake_api: Any) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"].removeprefix("toolu_"): b for b in tool_results(fake_api.requests[-1])}


def content(block: dict[str, Any]) -> str:
    body = block["content"]
    return body if isinstance(body, str) else json.dumps(body)


def test_a_claude_code_users_setup_keeps_them_safe_in_print_mode(fake_api, tmp_path):
    setup = Setup(tmp_path)
    script(fake_api, setup)
    out = setup.run(fake_api, "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    assert fake_api.rejections == []
    results = results_by_id(fake_api)
    ws = setup.ws

    # the project's deny rule applies: never ran
    assert not (ws / "deployed").exists()
    assert results["deploy"]["is_error"]
    assert "Bash(./scripts/deploy.sh:*)" in content(results["deploy"])
    # the user's guard hook blocks rm -rf; the model gets its stderr
    assert (ws / "build").is_dir()
    assert results["rmrf"]["is_error"]
    assert "Blocked by guard.py: rm -rf is not allowed" in content(results["rmrf"])
    # ... and a Read of .env: the secret reaches no request
    assert "Blocked by guard.py:" in content(results["env"])
    assert f"{ws / '.env'} holds secrets" in content(results["env"])
    # the project's Read(./secrets/**) and the user's Read(~/.ssh/**) deny
    assert results["secrets"]["is_error"] and "Read(./secrets/**)" in content(results["secrets"])
    assert results["ssh"]["is_error"] and "Read(~/.ssh/**)" in content(results["ssh"])
    for request in fake_api.requests:
        body = json.dumps(request)
        assert SECRET not in body and FOLDER_SECRET not in body and SSH_KEY not in body
    # Bash(npm test:*) lets its command run without asking (print mode asks no one)
    assert (ws / "npm-ran").read_text() == "npm test -- --watch=false\n"
    assert not results["npm"].get("is_error")
    # the rest of the file with Bsah(ls) applies: Bash(./scripts/check.sh) is allowed ...
    assert (ws / "checked").exists() and not results["check"].get("is_error")
    # ... and Bsah(ls) allows nothing: ls needs asking, and print mode asks no one
    assert results["ls"]["is_error"]

    # permission_denials names the refused calls in Claude Code's names and shapes
    [result] = [e for e in events if e["type"] == "result"]
    denials = {d["tool_use_id"].removeprefix("toolu_"): d for d in result["permission_denials"]}
    assert denials["deploy"] == {"tool_name": "Bash", "tool_use_id": "toolu_deploy",
                                 "tool_input": {"command": "./scripts/deploy.sh --prod"}}
    assert denials["secrets"]["tool_name"] == "Read"
    assert denials["secrets"]["tool_input"] == {"file_path": str(ws / "secrets" / "token.txt")}
    assert {"deploy", "secrets", "ssh", "ls"} <= set(denials)

    notices = [e["text"] for e in events if e["type"] == "notice"]
    user_file = setup.home / ".claude" / "settings.json"
    local_file = ws / ".claude" / "settings.local.json"
    # each unknown key is named once, with its file and line
    for key in ("includeCoAuthoredBy", "cleanupPeriodDays"):
        naming = [n for n in notices if key in n]
        assert len(naming) == 1, (key, notices)
        assert naming[0].startswith(f"{user_file}:4:3: ")  # its first unknown key
    # enabledPlugins is read: the plugin it names was never installed here
    [plugin] = [n for n in notices if "formatter@acme-tools" in n]
    assert "enabled but not installed" in plugin
    [spinner] = [n for n in notices if "spinnerTipsEnabled" in n]
    assert spinner.startswith(f"{local_file}:8:3: ")
    # the rule naming no tool: a warning with its place
    [bsah] = [n for n in notices if "Bsah" in n]
    assert bsah.startswith(f"{local_file}:4:7: ")
    assert 'names no known tool \'Bsah\' (did you mean "Bash"?)' in bsah
    # the project's hook runs (a guard always runs), and nothing says it was withheld
    assert (ws / ".claude" / "command-log.txt").exists()
    assert not [n for n in notices if "not trusted" in n]

    # what the guard saw: Claude Code's payload
    seen = setup.guard_log()
    [rmrf] = [c for c in seen if c["tool_input"].get("command") == "rm -rf build"]
    assert rmrf["tool_name"] == "Bash" and rmrf["hook_event_name"] == "PreToolUse"
    assert rmrf["permission_mode"] == "default"
    assert rmrf["CLAUDE_PROJECT_DIR"] == str(ws) and rmrf["cwd"] == str(ws)
    [env_read] = [c for c in seen if c["tool_input"].get("file_path") == str(ws / ".env")]
    assert env_read["tool_name"] == "Read"
    assert Path(rmrf["transcript_path"]).is_absolute()
    # the Stop hook read the transcript (Claude Code's JSONL) and wrote what it saw
    summary = (setup.home / ".claude" / "last-session.txt").read_text()
    assert "last words: all done" in summary
    assert int(summary.split("user entries: ")[1].split()[0]) >= 1


def test_a_trusted_project_runs_its_hooks_and_its_deny_rules_still_win(fake_api, tmp_path):
    """In a trusted project in auto mode its hook runs, in json output; a deny rule still
    wins over bypassPermissions, and the hooks are told that mode."""
    setup = Setup(tmp_path)
    fake_api.enqueue(
        Reply.tool_use("bash", {"command": "./scripts/deploy.sh"}, id="toolu_deploy"),
        Reply.tool_use("bash", {"command": "./scripts/check.sh"}, id="toolu_check"),
        Reply.tool_use("edit_file", {"path": "package.json", "old_string": '"1.0.0"',
                                     "new_string": '"2.0.0"'}, id="toolu_edit"),
        Reply.text("shipped"))
    out = setup.run(fake_api, "--output-format", "json", "--permission-mode", "auto")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["type"] == "result" and result["result"] == "shipped"
    ws = setup.ws
    assert not (ws / "deployed").exists() and (ws / "checked").exists()
    assert '"1.0.0"' in (ws / "package.json").read_text()  # Edit(/package.json): project root
    assert [(d["tool_name"], d["tool_use_id"]) for d in result["permission_denials"]] == [
        ("Bash", "toolu_deploy"), ("Edit", "toolu_edit")]
    edit = result["permission_denials"][1]["tool_input"]
    assert edit == {"file_path": str(ws / "package.json"), "old_string": '"1.0.0"',
                    "new_string": '"2.0.0"'}
    # the project's own hook ran for every command (before the rules, as in Claude Code)
    log = (ws / ".claude" / "command-log.txt").read_text().splitlines()
    assert log == ["./scripts/deploy.sh", "./scripts/check.sh"]
    assert "hook(s): not run" not in out.stderr
    modes = {c["permission_mode"] for c in setup.guard_log()}
    assert modes == {"bypassPermissions"}
