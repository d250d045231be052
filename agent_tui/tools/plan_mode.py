"""The ``exit_plan_mode`` tool: the model presents its plan, the user approves it.

Plan mode is read-only and enforced by the permission policy (``permissions/plan.py``).
The model leaves it only through this tool, whose call always asks the user (the
permission prompt shows the plan): approving goes on in the mode the session was in
before plan mode ("allow for the session": accept-edits), denying keeps planning,
with the user's note for the model. Outside plan mode the call changes nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult

MAX_PLAN_CHARS = 50_000


class ExitPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: str = Field(
        min_length=1, max_length=MAX_PLAN_CHARS,
        description="The plan in Markdown: what you will change and where, in order, "
                    "and how you will check it",
    )


class ExitPlanModeTool(Tool[ExitPlanModeInput]):
    name = "exit_plan_mode"
    claude_name = "ExitPlanMode"
    leaves_plan = True
    plans = True
    description = (
        "In plan mode, present your plan to the user for approval; once approved, you may "
        "carry it out. Use it when the plan is complete: you have read what you need, and "
        "the plan says which files change and how the result is checked. Only for tasks "
        "that change code; for research or questions, just answer. Outside plan mode it "
        "does nothing."
    )
    Input = ExitPlanModeInput
    read_only = False  # the call asks the user: approving it changes the mode
    reports_own_writes = True  # it writes no file: no snapshot around it

    def summary(self, args: ExitPlanModeInput) -> str:
        return args.plan

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        return None

    async def run(self, args: ExitPlanModeInput, ctx: ToolContext) -> ToolResult:
        ctx.scope.raise_if_cancelled()
        if ctx.leave_plan_mode is None:
            return ToolResult.error("exit_plan_mode works only inside a session.")
        mode = ctx.leave_plan_mode(ctx.approval)
        if mode is None:
            return ToolResult.ok("The session is not in plan mode: there is nothing to leave. "
                                 "Go on with the task.")
        return ToolResult.ok(
            f"The user approved the plan. Plan mode is off; the permission mode is now "
            f"{mode.value}. Carry out the plan now, step by step.")
