"""The ``task`` tool: hands a piece of work to a sub-agent.

A foreground task runs a nested agent loop under this call's cancel scope and
returns the sub-agent's final answer; Esc on the turn stops it and everything it
started. With ``run_in_background`` the sub-agent runs on its own (Esc does not
stop it) and its result reaches the conversation when it finishes.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_tui.core.tool import Tool, ToolContext, ToolResult


class TaskInput(BaseModel):
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The full task for the sub-agent, with all it needs to know")
    run_in_background: bool = Field(
        default=False,
        description="Run on its own and report when done; the turn does not wait for it",
    )


class TaskTool(Tool):
    name = "task"
    description = (
        "Hand a self-contained piece of work to a sub-agent: an open-ended search across "
        "the codebase, a question that needs many reads, a focused change. It has the "
        "same tools, starts with none of this conversation, and returns one final "
        "report: only that report comes back to you.\n"
        "- Write `prompt` as a complete brief: the goal, what you already know, where to "
        "look, and what the report must contain (and whether it may change files).\n"
        "- Several task calls in one message run at the same time. With "
        "run_in_background it runs on its own and its report arrives later.\n"
        "- For a known file use read_file; for one pattern use grep: a sub-agent is "
        "slower than a direct call."
    )
    Input = TaskInput
    read_only = False
    concurrent = True  # each sub-agent works on its own

    def summary(self, args: TaskInput) -> str:  # type: ignore[override]
        suffix = " (background)" if args.run_in_background else ""
        return f"task: {args.description}{suffix}"

    def rewind_caveat(self, raw_input: dict) -> str | None:  # type: ignore[override]
        return (
            f"task {raw_input.get('description', '')!r}: what its sub-agent ran beyond the "
            "workspace's files is not undone"
        )

    async def run(self, args: TaskInput, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        if ctx.subagents is None:
            return ToolResult.error("sub-agents are not available in this session")
        if args.run_in_background:
            return ctx.subagents.start_background(args.description, args.prompt)
        return await ctx.subagents.run(args.description, args.prompt)
