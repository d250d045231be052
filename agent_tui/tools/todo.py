"""The ``todo_write`` tool: the model writes its plan, a checklist shown live.

The call's input *is* the plan: the journal keeps it (the call's intent), and
:mod:`agent_tui.core.modes.plan` derives the plan in force from the journal, so the tool
itself keeps nothing. Writing the plan changes nothing outside the conversation: it is
read-only for the permission policy and never asks.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_tui.core.modes.plan import MAX_ITEMS, Plan, PlanItem
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.protocol.states import TodoStatus


class TodoWriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[PlanItem] = Field(
        max_length=MAX_ITEMS,
        description="The whole plan, every item each time (it replaces the previous one)",
    )


class TodoWriteTool(Tool[TodoWriteInput]):
    name = "todo_write"
    claude_name = "TodoWrite"
    writes_plan = True
    plans = True
    acp_kind = "think"
    description = (
        "Keep a plan for the task at hand: a checklist the user sees live. Use it for "
        "work of three or more steps, or when the user gives several things to do; skip "
        "it for a single quick change or a question.\n"
        "- Send the whole list every time: it replaces the previous one.\n"
        "- Each item has `content` (imperative: 'Run the tests'), `status` (pending, "
        "in_progress, completed) and optionally `activeForm` ('Running the tests', shown "
        "while it is in progress).\n"
        "- Mark an item in_progress before you start it, and completed as soon as it is "
        "done (not in batches). Keep exactly one item in_progress at a time.\n"
        "- Only mark an item completed when it is fully done: tests pass, nothing is left "
        "half finished. If you are blocked, keep it in_progress and add an item for what "
        "blocks you.\n"
        "- If a turn was interrupted, the item that was in progress is shown as "
        "interrupted: check what was done before you go on with it."
    )
    Input = TodoWriteInput
    read_only = True  # the plan lives in the conversation: nothing outside changes

    def summary(self, args: TodoWriteInput) -> str:
        done = sum(1 for item in args.todos if item.status is TodoStatus.COMPLETED)
        return f"todo_write: {done}/{len(args.todos)} done"

    async def run(self, args: TodoWriteInput, ctx: ToolContext) -> ToolResult:
        ctx.scope.raise_if_cancelled()
        plan = Plan(items=tuple(args.todos))
        if not plan.items:
            return ToolResult.ok("Plan cleared.")
        active = [i.content for i in plan.items if i.status is TodoStatus.IN_PROGRESS]
        text = f"Plan updated: {plan.done} of {len(plan.items)} done"
        if active:
            text += "; in progress: " + "; ".join(active)
        text += ". Keep it current as you work: mark each item completed as soon as it is done."
        if len(active) > 1:
            text += " (More than one item is in progress: finish one before the next.)"
        return ToolResult.ok(text)
