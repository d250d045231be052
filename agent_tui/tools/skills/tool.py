"""The ``skill`` tool: loads one skill's instructions when the model uses it.

Its description lists every skill of the session by name and description (fixed for
the session: the prompt cache keys on the tools); nothing of a skill's body is in any
request before the model calls ``skill`` with that name. The result is the body of
its ``SKILL.md`` and the skill's folder as an absolute path, so the model can read
the skill's other files with ``read_file`` (which may read inside a skill's folder
even when it lies outside the workspace: read-only, that folder only). The body's
``${CLAUDE_SKILL_DIR}`` and the like are put in as Claude Code puts them (``catalog.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ConfigDict, Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.protocol.tool_names import RuleSubject
from agent_tui.frontmatter import DefinitionError, read_definition
from agent_tui.tools.skills.catalog import SKILL_FILE, Skill, Skills

INTRO = (
    "Load a skill: instructions (and files beside them) for a kind of task, written by "
    "the user or the project. When a task matches a skill's description below, call "
    "this first with its name and follow what it says. The result gives the skill's "
    "folder: read its other files with read_file when the instructions point to them."
)


class SkillInput(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The skill's name, as listed in this tool's description")


#: ``${CLAUDE_EFFORT}`` when no effort was chosen: the API's default effort, and what
#: Claude Code (2.1.332) puts in then, whatever the model (seen against the fake API).
DEFAULT_EFFORT = "high"

#: Characters of skill descriptions in the tool's description; past it, names only.
LISTING_BUDGET = 16_000


def describe(skills: Skills) -> str:
    lines = [INTRO, "", "Available skills:"]
    used = 0
    for skill in skills.skills:
        used += len(skill.description)
        if used <= LISTING_BUDGET:
            lines.append(f"- {skill.name}: {skill.description}")
        else:
            lines.append(f"- {skill.name} (description left out: the list is long)")
    return "\n".join(lines)


_NAMED = re.compile(r"\$\{([^}\s]+)\}")


def with_values(skill: Skill, body: str, workspace: Path, *, session_id: str = "",
                effort: str | None = None) -> str:
    """``body`` with ``${CLAUDE_SKILL_DIR}``, ``${CLAUDE_PROJECT_DIR}``,
    ``${CLAUDE_SESSION_ID}``, ``${CLAUDE_EFFORT}`` (as Claude Code puts them; each only
    when there is one) and the skill's own ``values`` put in, in one pass (a value put in
    is never read again); any other ``${...}`` stays as written."""
    known = {"CLAUDE_SKILL_DIR": str(skill.folder), "CLAUDE_PROJECT_DIR": str(workspace),
             **({"CLAUDE_SESSION_ID": session_id} if session_id else {}),
             **({"CLAUDE_EFFORT": effort} if effort else {}), **skill.values}
    return _NAMED.sub(lambda m: known.get(m[1], m[0]), body)


class SkillTool(Tool[SkillInput]):
    name = "skill"
    claude_name = "Skill"
    offers_skills = True
    claude_keys = {"name": "skill"}
    plans = True
    rule_subject = RuleSubject.NAME
    names_key = "name"
    description = INTRO
    Input = SkillInput
    read_only = True

    def __init__(self, skills: Skills) -> None:
        self.skills = skills
        self.description = describe(skills)

    def summary(self, args: SkillInput) -> str:
        return f"skill {args.name}"

    async def run(self, args: SkillInput, ctx: ToolContext) -> ToolResult:
        ctx.scope.raise_if_cancelled()
        skill = self.skills.get(args.name.strip().lstrip("/"))
        if skill is None:
            names = ", ".join(s.name for s in self.skills.skills)
            return ToolResult.error(
                f"no skill named {args.name!r}" + (f"; the skills are: {names}" if names else
                                                   "; this session has no skills")
            )
        try:
            body = read_definition(skill.file, "skill", default_name=skill.folder.name).front.body
        except DefinitionError as exc:
            where = f"{skill.file}:{exc.line}" if exc.line else str(skill.file)
            return ToolResult.error(f"skill {skill.name}: {where}: {exc.message}")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            return ToolResult.error(f"skill {skill.name}: cannot read {skill.file}: {reason}")
        body = with_values(skill, body, ctx.workspace, session_id=ctx.session_id,
                           effort=ctx.effort or DEFAULT_EFFORT)
        result = ToolResult.ok(
            f"Skill {skill.name} (from {skill.file})\n"
            f"Base directory for this skill: {skill.folder}\n"
            f"Its other files can be read with read_file under that folder "
            f"(read-only).\n\n{body.strip()}\n"
        )
        result.details = {"skill": skill.name, "folder": str(skill.folder), "file": SKILL_FILE}
        return result
