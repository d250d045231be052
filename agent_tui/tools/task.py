"""The ``task`` tool: hands a piece of work to a sub-agent.

A foreground task runs a nested agent loop under this call's cancel scope and
returns the sub-agent's final answer; Esc on the turn stops it and everything it
started. With ``run_in_background`` the sub-agent runs on its own (Esc does not
stop it) and its result reaches the conversation when it finishes.

``subagent_type`` names a sub-agent type (``core/calls/agent_types.py``: the project's and
the user's ``.claude/agents/*.md``); the description lists them, fixed for the
session (the prompt cache keys on the tools). Without it, or with
``general-purpose``, the sub-agent is the general one. A name that is no type is an
error the model sees, with the names there are.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent_tui.core.calls.agent_types import GENERAL, AgentTypes
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.protocol.tool_names import RuleSubject


class TaskInput(BaseModel):
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The full task for the sub-agent, with all it needs to know")
    run_in_background: bool = Field(
        default=False,
        description="Run on its own and report when done; the turn does not wait for it",
    )
    subagent_type: str | None = Field(
        default=None,
        description=f"The type of sub-agent, one of those listed (default: {GENERAL})",
    )


class TaskTool(Tool[TaskInput]):
    name = "task"
    claude_name = "Task"
    claude_aliases = ("Agent",)
    plans = True
    acp_kind = "think"
    rule_subject = RuleSubject.NAME
    names_key = "subagent_type"
    starts_agents = True
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

    def __init__(self, agent_types: AgentTypes | None = None) -> None:
        self.agent_types = agent_types if agent_types is not None else AgentTypes()
        if self.agent_types.types:
            self.description = describe(self.agent_types)

    def summary(self, args: TaskInput) -> str:
        suffix = " (background)" if args.run_in_background else ""
        kind = f" [{args.subagent_type}]" if args.subagent_type else ""
        return f"task{kind}: {args.description}{suffix}"

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        return (
            f"task {raw_input.get('description', '')!r}: what its sub-agent ran beyond the "
            "workspace's files is not undone"
        )

    async def run(self, args: TaskInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            return ToolResult.error("sub-agents are not available in this session")
        agent = None
        wanted = (args.subagent_type or "").strip()
        if wanted and not (wanted == GENERAL and self.agent_types.get(GENERAL) is None):
            agent = self.agent_types.get(wanted)
            if agent is None:
                names = ", ".join([GENERAL, *self.agent_types.names()])
                return ToolResult.error(
                    f"no sub-agent type {wanted!r}: the types are {names}"
                )
        if args.run_in_background:
            return ctx.subagents.start_background(args.description, args.prompt, agent)
        return await ctx.subagents.run(args.description, args.prompt, agent)


def describe(agent_types: AgentTypes) -> str:
    """The tool's description with the session's sub-agent types listed."""
    lines = [TaskTool.description, "", "Sub-agent types (subagent_type):",
             f"- {GENERAL}: the general sub-agent, with every tool (the default)"]
    for agent in agent_types.types:
        if agent.name != GENERAL:
            lines.append(f"- {agent.name}: {agent.description} (tools: {agent.tools_shown})")
        else:
            lines[3] = f"- {GENERAL}: {agent.description} (tools: {agent.tools_shown})"
    return "\n".join(lines)
