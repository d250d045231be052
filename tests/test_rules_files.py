"""Read-denied files stay out of what reaches the model by other doors: memory
``@imports`` (CLAUDE.md, AGENTS.md) and a custom command's ``@file``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.commands.files import CommandFile
from agent_tui.commands.prepare import prepare
from agent_tui.core.calls.tool import ToolSet
from agent_tui.core.memory.memory_loader import load_memory_with_problems, read_refusal
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.tools.files import ReadFileTool


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("SECRET=hunter2\n")
    (ws / "notes.md").write_text("plain notes\n")
    (ws / "CLAUDE.md").write_text("See @notes.md and @.env\n")
    return ws


def test_a_memory_import_of_a_read_denied_file_is_skipped_with_a_notice(project: Path) -> None:
    policy = Permissions(project, "auto", PermissionRules(deny=["Read(./.env)"]))
    refuse = read_refusal(policy, ToolSet([ReadFileTool()]))
    memory = load_memory_with_problems(project, refuse=refuse)
    texts = "".join(item.text for item in memory.files)
    assert "plain notes" in texts and "hunter2" not in texts
    [problem] = [p for p in memory.problems if ".env" in p.text]
    assert "denied by rule Read(./.env)" in problem.text and "not imported" in problem.text
    assert problem.line == 1
    unguarded = load_memory_with_problems(project)  # without the rule it is imported
    assert "hunter2" in "".join(item.text for item in unguarded.files)


def test_a_custom_commands_file_mention_of_a_read_denied_file_is_left_out(project: Path) -> None:
    policy = Permissions(project, "auto", PermissionRules(deny=["Read(./.env)"]))
    command = CommandFile(name="leak", path_name="leak", description="", scope="project",
                          source=str(project / "leak.md"), body="Read @.env and @notes.md")
    run, said = prepare(command, "", workspace=project, policy=policy,
                        tools=ToolSet([ReadFileTool()]))
    prompt = run.compose([])
    assert "plain notes" in prompt and "hunter2" not in prompt
    assert any(".env" in s and "Read(./.env)" in s for s in said)
