"""The tools that play a part others rely on say so themselves (core/calls/tool.py):
the shell, the guards of reading and editing files, the skill runner, the way out of
plan mode, the plan's writer, the stand-in for a Claude Code tool agent-tui has none of.
The permission guards, the ``!`` commands, the memory loader, ``/skills``, ``/agents``,
the plan (journal, pane, ACP, Task hooks), sub-agent types and the SDK ask these facts
instead of a tool's name; the shell and each access's guard have one holder, and a
second claim is refused at registration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_tui.core.calls.agent_types import AgentScope, parse_agent_file
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult, register_tool
from agent_tui.core.journal.records import ToolIntentRecord, ToolResultRecord
from agent_tui.core.modes.plan import PlanTracker
from agent_tui.permissions import Permissions
from agent_tui.protocol import PermissionMode, ToolState, Verdict
from agent_tui.protocol import tool_names
from agent_tui.protocol.tool_names import (
    FileAccess,
    RuleSubject,
    access_guard,
    shell_tool,
    stand_in,
    tool_with,
    writes_plan,
)
from agent_tui.tools.registry import default_tools
from agent_tui.ui.screens.approval_choices import leaves_plan


class NoteInput(BaseModel):
    command: str = ""
    path: str = ""


class _Note(Tool[NoteInput]):
    description = "A test tool."
    Input = NoteInput

    async def run(self, args: NoteInput, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok("")


class Chime(_Note):
    """Runs command lines too, but is not the shell."""

    name = "chime"
    rule_subject = RuleSubject.COMMAND


class Wayout(_Note):
    name = "way_out"
    leaves_plan = True


class Checklist(_Note):
    name = "checklist"
    writes_plan = True


class Carver(_Note):
    name = "carver"
    stands_in_for = ("NotebookEdit",)


@pytest.fixture
def registered() -> Iterator[None]:
    for tool in (Chime, Wayout, Checklist, Carver):
        register_tool(tool)
    yield
    for tool in (Chime, Wayout, Checklist, Carver):
        tool_names.forget(tool.name)


def test_the_built_in_tools_hold_the_roles(tmp_path: Path) -> None:
    assert shell_tool() == "bash"
    assert (access_guard(FileAccess.READS), access_guard(FileAccess.EDITS)) == (
        "read_file", "edit_file")
    assert tool_with(lambda f: f.offers_skills) == "skill"
    assert tool_with(lambda f: f.leaves_plan) == "exit_plan_mode"
    tools = default_tools(tmp_path)
    agents = tools.first(lambda t: t.starts_agents)
    assert agents is not None and agents.name == "task"
    assert tools.first(lambda t: t.shell) is tools.get("bash")


@pytest.mark.usefixtures("registered")
def test_a_tool_that_runs_commands_is_not_the_shell_unless_it_says_so() -> None:
    assert shell_tool() == "bash"


@pytest.mark.parametrize("claims", [
    {"shell": True},
    {"guards_access": True, "file_access": FileAccess.READS},
    {"guards_access": True, "file_access": FileAccess.EDITS},
])
def test_a_second_holder_of_a_role_is_refused(claims: dict[str, object]) -> None:
    impostor = type("Impostor", (_Note,), {"name": "impostor", **claims})
    with pytest.raises(ValueError, match="which tool '(bash|read_file|edit_file)' is"):
        register_tool(impostor)
    assert tool_names.facts("impostor") is None
    assert (shell_tool(), access_guard(FileAccess.READS)) == ("bash", "read_file")


def test_a_tool_may_guard_an_access_nobody_guards_yet_only_once() -> None:
    guard = type("Guard", (_Note,), {"name": "guard_none", "guards_access": True})
    register_tool(guard)  # FileAccess.NONE: a role of its own
    try:
        twin = type("Twin", (_Note,), {"name": "guard_twin", "guards_access": True})
        with pytest.raises(ValueError, match="which tool 'guard_none' is"):
            register_tool(twin)
    finally:
        tool_names.forget("guard_none")


@pytest.mark.usefixtures("registered")
def test_outside_plan_mode_the_way_out_of_it_is_its_fact_not_its_name(tmp_path: Path) -> None:
    policy = Permissions(tmp_path, PermissionMode.ASK)
    out = Wayout()
    ruling = policy.check(out, out.parse({}))
    assert (ruling.verdict, ruling.rule) == (Verdict.ALLOW, "policy:not-planning")
    chime = Chime()
    assert policy.check(chime, chime.parse({"command": "ls"})).rule != "policy:not-planning"


def test_the_built_in_tools_write_the_plan_and_stand_in() -> None:
    assert tool_with(lambda f: f.writes_plan) == "todo_write"
    assert writes_plan("todo_write") and not writes_plan("mcp__x__todo_write")
    assert (stand_in("MultiEdit"), stand_in("multi_edit"), stand_in("NotebookRead")) == (
        "edit_file", "edit_file", "read_file")
    assert (stand_in("Edit"), stand_in("notebook_read"), stand_in("NotebookEdit")) == (
        None, None, None)
    assert leaves_plan("exit_plan_mode") and not leaves_plan("todo_write")


@pytest.mark.usefixtures("registered")
def test_a_tool_that_writes_the_plan_is_followed_by_its_fact() -> None:
    tracker = PlanTracker()
    todos = [{"content": "Water the kale", "status": "pending"}]
    for record in (
        ToolIntentRecord(turn_id="t1", tool_use_id="c1", name="checklist",
                         input={"todos": todos}, operation_id="op1"),
        ToolResultRecord(turn_id="t1", tool_use_id="c1", name="checklist",
                         state=ToolState.SUCCEEDED, content="ok"),
    ):
        tracker.feed(record)
    assert tracker.plan is not None
    assert [item.content for item in tracker.plan.items] == ["Water the kale"]


@pytest.mark.usefixtures("registered")
def test_a_sub_agent_listing_claude_code_s_tool_gets_the_one_that_stands_in(
    tmp_path: Path,
) -> None:
    path = tmp_path / "carver.md"
    path.write_text("---\nname: carver\ndescription: Carves.\n"
                    "tools: NotebookEdit, MultiEdit\n---\nCarve.\n")
    agent, notes = parse_agent_file(path, AgentScope.PROJECT)
    assert agent.tools == ("carver", "edit_file"), notes
