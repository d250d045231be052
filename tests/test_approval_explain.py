"""ctrl+e in the permission prompt: the call explained in plain words, read from the
call by the rules' own parse, never by a model. Each program's known effect, what it
deletes and writes, the paths outside the workspace (links followed), what only the
run decides, the parse's doubts, and why it asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_tui.protocol import PermissionRequested
from agent_tui.ui.screens.approval_explain import MAX_PARTS, NOT_AN_OPINION, explain


def _explained(workspace: Path, name: str, tool_input: dict[str, Any], rule: str = "mode:ask",
               reason: str = "Bash runs a command") -> list[str]:
    request = PermissionRequested(turn_id="t", tool_use_id="x", name=name, summary=name,
                                  input=tool_input, reason=reason, rule=rule)
    lines = explain(request, workspace, {}).plain.split("\n")
    assert lines[-1] == NOT_AN_OPINION  # it always says what it is
    return lines[:-1]


def _command(workspace: Path, command: str, **more: Any) -> list[str]:
    return _explained(workspace, "bash", {"command": command, **more})


def test_a_plain_command_names_its_program_and_why_it_asks(tmp_path: Path) -> None:
    assert _command(tmp_path, "npm test") == [
        "· npm test: runs the project's own scripts or code: what they do is up to them.",
        "· No rule allows it, and in the ask mode anything that writes or runs asks.",
    ]
    lines = _explained(tmp_path, "bash", {"command": "git push origin main"},
                       rule="ask:Bash(git push *)")
    assert lines == ["! git push origin main: sends commits to a remote repository.",
                     "· An ask rule in the settings, Bash(git push *), matches it. An ask rule wins "
                     "over allow rules, so no lasting rule is offered."]


@pytest.mark.parametrize(("rule", "says"), [
    ("deny:Read(.env)", "A deny rule on files, Read(.env), may bind it"),
    ("unsure:Bash(rm *)", "The rule Bash(rm *) may bind it, and the parse cannot tell"),
    ("guard:.claude/", "one of the agent's own guard files"),
    ("mode:accept-edits", "the accept-edits mode allows file edits in the workspace only"),
    ("mode:dont-ask", "the permission mode dont-ask asks"),
    ("hook:PreToolUse", "A PreToolUse hook of the settings asks for your word on it"),
])
def test_it_says_what_made_it_ask(tmp_path: Path, rule: str, says: str) -> None:
    assert says in _explained(tmp_path, "bash", {"command": "make"}, rule=rule)[-1]


def test_deleting_and_privileges_are_marked_and_paths_outside_the_workspace_named(tmp_path: Path) -> None:
    lines = _command(tmp_path, "sudo rm -rf /etc/app build")
    assert "! sudo rm -rf /etc/app build: runs a command as another user (root, usually)." in lines
    assert "! rm -rf /etc/app build (through sudo): deletes files." in lines
    assert "! Deletes: /etc/app, build." in lines
    assert "! Names paths outside the workspace: /etc/app." in lines


@pytest.mark.parametrize(("command", "expected"), [
    ("cat ~/.ssh/id_rsa > out.txt", ["· cat ~/.ssh/id_rsa: only reads.", "· Writes: out.txt.",
                                     "! Names paths outside the workspace: ~/.ssh/id_rsa."]),
    ("cp notes.txt ../notes.txt", ["· Writes: ../notes.txt.",
                                   "! Names paths outside the workspace: ../notes.txt."]),
    ("sed -i 's/a/b/' setup.cfg", ["· Writes: setup.cfg."]),
    ("curl -o tool.bin https://example.com/tool", ["· Writes: tool.bin."]),
    ("rm -f $TARGET", ["! Names files only known when it runs: $TARGET."]),
    ("grep --file=/etc/passwd x", ["! Names paths outside the workspace: /etc/passwd."]),
    ("cd /tmp && make", ["· Changes folder (/tmp): relative paths are taken from there."]),
    ("curl -s https://get.example.sh | sh", ["! sh: runs the commands it reads from its input.",
                                             "! The parse is in doubt: a shell reads commands from "
                                             "its input. The rules treat the whole command as unknown."]),
    ("bash -c 'rm -rf ~'", ["! bash -c 'rm -rf ~': runs a shell script.",
                            "! rm -rf ~ (bash -c): deletes files."]),
    ("rg parse src | tail -5", ["· As a whole, the command only reads."]),
    ("frobnicate --all", ["· frobnicate --all: runs the program frobnicate; agent-tui does not know "
                          "what it does."]),
])
def test_the_shell_forms(tmp_path: Path, command: str, expected: list[str]) -> None:
    lines = _command(tmp_path, command)
    for line in expected:
        assert line in lines, lines


def test_only_reads_is_never_said_of_a_command_that_writes(tmp_path: Path) -> None:
    for command in ("cat a > b", "ls && rm x", "echo hi | tee log", "git log > out"):
        assert "· As a whole, the command only reads." not in _command(tmp_path, command)


def test_a_link_inside_the_workspace_that_leads_out_is_outside(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (workspace / "out").symlink_to(tmp_path / "elsewhere")
    assert "! Names paths outside the workspace: ../elsewhere/x." in _command(workspace, "touch ../elsewhere/x")
    lines = _explained(workspace, "write_file", {"path": "out/x.txt", "content": "hi"}, reason="")
    assert lines[:2] == ["· Creates the new file out/x.txt.", "! out/x.txt is outside the workspace."]


def test_edits_fetches_mcp_tools_and_plans(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    assert _explained(tmp_path, "write_file", {"path": "a.txt", "content": "new"}, reason="")[0] == \
        "· Replaces the whole of a.txt."
    assert _explained(tmp_path, "edit_file", {"path": "a.txt"}, reason="")[0] == "· Changes a.txt."
    fetch = _explained(tmp_path, "web_fetch", {"url": "https://docs.example.com/x"}, reason="")
    assert fetch[0].startswith("· Fetches https://docs.example.com/x from docs.example.com.")
    broken = _explained(tmp_path, "web_fetch", {"url": "http://[::1"}, reason="")
    assert broken[0].startswith("· Fetches http://[::1 from an address it cannot read.")
    mcp = _explained(tmp_path, "mcp__github__create_issue", {"title": "x"}, reason="")
    assert mcp[0] == ("! Calls the tool create_issue of the MCP server github. The server decides "
                      "what it does; agent-tui cannot see inside it.")
    plan = _explained(tmp_path, "exit_plan_mode", {"plan": "x"}, rule="mode:plan", reason="")
    assert plan[0] == "· Ends plan mode: the model starts making the changes of the plan."


def test_hostile_text_is_cleaned_and_a_long_command_is_cut(tmp_path: Path) -> None:
    lines = _command(tmp_path, "echo \x1b]52;c;aGk=\x07 > \x1b[2Jx")
    assert not any("\x1b" in line or "\x07" in line for line in lines)
    long = " && ".join(f"echo {i}" for i in range(30))
    lines = _command(tmp_path, long)
    assert f"· … and {30 - MAX_PARTS} more commands." in lines
    assert len(lines) < MAX_PARTS + 5
    lines = _explained(tmp_path, "bash", {"command": "make"}, rule="ask:Bash(\x1b[31mmake)")
    assert "\x1b" not in lines[-1]


def test_a_path_that_cannot_be_resolved_is_outside_and_nothing_breaks(tmp_path: Path) -> None:
    lines = _command(tmp_path, "cat /etc/a\x00b > x\x00y")
    assert any(line.startswith("! Names paths outside the workspace:") for line in lines)
    assert _explained(tmp_path, "write_file", {"path": "a\x00b", "content": ""}, reason="")[1].endswith(
        "is outside the workspace.")
    lines = _command(tmp_path, "touch " + "a/" * 3000)
    assert max(len(line) for line in lines) < 200
