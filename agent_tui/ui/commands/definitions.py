"""The pages ``/skills`` and ``/agents`` show: Claude Code's skills and sub-agent types
this session loaded, each with its description and where it came from, and the files
that could not be loaded (with their line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text

from agent_tui.protocol.tool_names import claude_name
from agent_tui.ui.render.safe_text import clean, first_line

SKILL_FOLDERS = "~/.claude/skills, .claude/skills, ~/.agents/skills, .agents/skills"
AGENT_FOLDERS = ".claude/agents, ~/.claude/agents"


def where(path: Path, workspace: Path) -> str:
    """A path as a person reads it: relative to the workspace, else from ``~``."""
    path = Path(path)
    for base, prefix in ((Path(workspace), ""), (Path.home(), "~/")):
        try:
            return prefix + str(path.relative_to(base))
        except ValueError:
            continue
    return str(path)


def _problems(out: Text, problems: list[Any], workspace: Path) -> None:
    if not problems:
        return
    out.append("\nnotes\n", style="bold")
    for problem in problems:
        line = f":{problem.line}" if problem.line is not None else ""
        out.append(f"  {clean(where(problem.file, workspace))}{line}: ", style="dim")
        out.append(first_line(problem.message, 300) + "\n")


def skills_report(skills: Any, workspace: Path) -> Text:
    """``/skills``: each skill's name, description and folder (``skills``: a Skills)."""
    out = Text()
    if skills is None or not skills.skills:
        out.append(f"No skills loaded. A skill is a folder with a SKILL.md in {SKILL_FOLDERS}.\n")
        if skills is not None:
            _problems(out, skills.problems, workspace)
        return out
    out.append("the model sees each skill's name and description; it loads the rest "
               "with the skill tool when it uses one\n\n", style="dim")
    for skill in skills.skills:
        out.append(clean(skill.name), style="bold")
        out.append(f"  {skill.scope}  ", style="dim")
        out.append(f"{clean(where(skill.folder, workspace))}\n", style="dim")
        out.append(f"  {first_line(skill.description, 300)}\n")
        if skill.allowed_tools:
            out.append(f"  allowed-tools (not applied): {clean(skill.allowed_tools)}\n",
                       style="dim")
    _problems(out, skills.problems, workspace)
    return out


def agents_report(agent_types: Any, workspace: Path) -> Text:
    """``/agents``: each sub-agent type, its tools, model and file (an AgentTypes)."""
    out = Text()
    if agent_types is None or not agent_types.types:
        out.append(f"No sub-agent types loaded (Markdown files in {AGENT_FOLDERS}); "
                   "task runs the general sub-agent.\n")
        if agent_types is not None:
            _problems(out, agent_types.problems, workspace)
        return out
    out.append("task's subagent_type names one of these; without it the general "
               "sub-agent runs\n\n", style="dim")
    for agent in agent_types.types:
        out.append(clean(agent.name), style="bold")
        out.append(f"  {agent.scope}  ", style="dim")
        out.append(f"{clean(where(agent.file, workspace))}\n", style="dim")
        out.append(f"  {first_line(agent.description, 300)}\n")
        out.append(f"  tools: {clean(_tools(agent))} · model: {clean(_model(agent))}\n",
                   style="dim")
    _problems(out, agent_types.problems, workspace)
    return out


def _tools(agent: Any) -> str:
    """Its tools in Claude Code's names, as the user wrote them."""
    but = ", ".join(claude_name(t) for t in agent.disallowed)
    if agent.tools is None:
        return "all but Task" + (f", {but}" if but else "")
    given = [claude_name(t) for t in agent.tools if t not in agent.disallowed]
    return ", ".join(given) or "none"


def _model(agent: Any) -> str:
    # the core's words, imported when the page opens: not before the first frame
    from agent_tui.core.calls.agent_types import INHERIT
    from agent_tui.core.services.model_control import MODEL_ALIASES

    if agent.model == INHERIT:
        return "inherit (the main agent's)"
    if agent.model.lower() in MODEL_ALIASES:
        return f"{agent.model} (the newest the API lists)"
    return str(agent.model)
