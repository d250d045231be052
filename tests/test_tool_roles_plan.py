"""Two more facts a tool says of itself (core/calls/tool.py), read by the layers that
knew the tool only by its name: that its calls write the model's plan (``writes_plan``:
the plan read back from the journal, the plan pane, ACP's plan, the Task hooks), and
which of Claude Code's tools it does the work of (``stands_in_for``: a sub-agent
listing ``MultiEdit`` gets ``edit_file``). A test tool claims each here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_tui.core.calls.agent_types import AgentScope, parse_agent_file
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult, register_tool
from agent_tui.core.journal.records import ToolIntentRecord, ToolResultRecord
from agent_tui.core.modes.plan import PlanTracker
from agent_tui.protocol import ToolState
from agent_tui.protocol import tool_names
from agent_tui.protocol.tool_names import stand_in, tool_with, writes_plan
from agent_tui.ui.screens.approval_choices import leaves_plan


class _Input(BaseModel):
    todos: list[dict[str, str]] = []


class _Test(Tool[_Input]):
    description = "A test tool."
    Input = _Input

    async def run(self, args: _Input, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok("")


class Checklist(_Test):
    name = "checklist"
    writes_plan = True


class Carver(_Test):
    name = "carver"
    stands_in_for = ("NotebookEdit",)


@pytest.fixture
def registered() -> Iterator[None]:
    for tool in (Checklist, Carver):
        register_tool(tool)
    yield
    for tool in (Checklist, Carver):
        tool_names.forget(tool.name)


def test_the_built_in_tools_say_so() -> None:
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
