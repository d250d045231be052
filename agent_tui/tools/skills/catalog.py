"""Skills: folders with a ``SKILL.md``, in Claude Code's shape, found once per session.

Looked for, in this order (the first skill of a name wins; a later one of the same
name is reported and left out):

1. ``~/.claude/skills/<skill>/SKILL.md`` (the user's),
2. ``<workspace>/.claude/skills/<skill>/SKILL.md`` (the project's),
3. ``~/.agents/skills/<skill>/SKILL.md`` and ``<workspace>/.agents/skills/<skill>/SKILL.md``
   (the open Agent Skills layout).

``SKILL.md`` opens with front matter: ``name`` (lowercase letters, digits and hyphens,
at most 64 characters) and ``description`` (what it does and when to use it, at most
1024 characters) are required; ``allowed-tools`` is read and shown but grants nothing
(every call still goes through the permission rules); other keys are named in a
notice. Only name and description are offered to the model (in the ``skill`` tool's
description); the body is read when the model uses the skill.

A project's skills are instructions, not code: loading them runs nothing, so they
load whether or not the project is trusted.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agent_tui.core.agent_types import DESCRIPTION_MAX, shown_path
from agent_tui.frontmatter import DefinitionError, FileProblem, key_line, read_definition

SKILL_FILE = "SKILL.md"
MAX_SKILLS = 200  # per folder
APPLIED_KEYS = frozenset({"name", "description", "allowed-tools"})
#: Keys of Claude Code's or the open standard's that are read and not applied.
NOT_APPLIED_KEYS = frozenset({
    "license", "metadata", "compatibility", "model", "context", "agent", "hooks",
    "user-invocable", "disable-model-invocation", "argument-hint", "version",
})
QUIET_KEYS = frozenset({"license", "metadata", "compatibility", "version"})  # facts, not behaviour


class SkillScope(StrEnum):
    USER = "user"
    PROJECT = "project"
    USER_AGENTS = "user (.agents)"
    PROJECT_AGENTS = "project (.agents)"


class Skill(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    folder: Path  # absolute
    scope: SkillScope
    allowed_tools: str = ""  # as written; not applied

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


class Skills(BaseModel):
    """The session's skills (fixed for the session) and what was wrong."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    skills: list[Skill] = []
    problems: list[FileProblem] = []

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def folders(self) -> list[Path]:
        return [s.folder for s in self.skills]


def skill_dirs(workspace: Path, home: Path | None = None) -> list[tuple[SkillScope, Path]]:
    user_home = home if home is not None else Path.home()
    ws = Path(workspace)
    return [
        (SkillScope.USER, user_home / ".claude" / "skills"),
        (SkillScope.PROJECT, ws / ".claude" / "skills"),
        (SkillScope.USER_AGENTS, user_home / ".agents" / "skills"),
        (SkillScope.PROJECT_AGENTS, ws / ".agents" / "skills"),
    ]


def load_skills(workspace: Path, home: Path | None = None) -> Skills:
    found = Skills()
    seen: dict[str, str] = {}
    folders_seen: set[Path] = set()
    for scope, base in skill_dirs(workspace, home):
        try:
            folders = sorted(p for p in base.iterdir() if (p / SKILL_FILE).is_file())
        except OSError:
            continue
        if len(folders) > MAX_SKILLS:
            found.problems.append(FileProblem(base, f"more than {MAX_SKILLS} skills: the rest "
                                                    "are not read"))
            folders = folders[:MAX_SKILLS]
        for folder in folders:
            real = folder.resolve()
            if real in folders_seen:  # the same folder reached twice (home is the workspace)
                continue
            folders_seen.add(real)
            path = folder / SKILL_FILE
            try:
                skill, notes = parse_skill(folder.absolute(), scope)
            except DefinitionError as exc:
                found.problems.append(FileProblem(path, f"{exc.message} (skill not loaded)",
                                                  exc.line))
                continue
            except (OSError, UnicodeDecodeError) as exc:
                reason = getattr(exc, "strerror", None) or exc
                found.problems.append(FileProblem(path, f"cannot be read: {reason}"))
                continue
            found.problems.extend(notes)
            if skill.name in seen:
                found.problems.append(FileProblem(path, (
                    f"skill {skill.name!r} is also defined in {seen[skill.name]}, which is used")))
                continue
            seen[skill.name] = shown_path(path, workspace, home)
            found.skills.append(skill)
    return found


def parse_skill(folder: Path, scope: SkillScope) -> tuple[Skill, list[FileProblem]]:
    path = folder / SKILL_FILE
    found = read_definition(path, "skill")
    text, meta, name, description = found.text, found.front.meta, found.name, found.description
    notes: list[FileProblem] = []
    if len(description) > DESCRIPTION_MAX:
        notes.append(FileProblem(path, f"description is longer than {DESCRIPTION_MAX} "
                                       "characters: cut there", key_line(text, "description")))
        description = description[:DESCRIPTION_MAX]
    if name != folder.name:
        notes.append(FileProblem(path, f"name {name!r} differs from its folder "
                                       f"{folder.name!r}: the skill is called {name!r}",
                                 key_line(text, "name")))
    allowed = meta.get("allowed-tools", "")
    if isinstance(allowed, list):
        allowed = ", ".join(str(a) for a in allowed)
    allowed = str(allowed or "").strip()
    if allowed:
        notes.append(FileProblem(path, (
            f"allowed-tools ({allowed}) is not applied: the skill's tool calls go through "
            "the permission rules like any other"), key_line(text, "allowed-tools")))
    for key in meta:
        if key in APPLIED_KEYS or key in QUIET_KEYS:
            continue
        why = "not applied by agent-tui" if key in NOT_APPLIED_KEYS else "unknown key"
        notes.append(FileProblem(path, f"{key}: {why}, ignored", key_line(text, key)))
    skill = Skill(name=name, description=" ".join(description.split()), folder=folder,
                  scope=scope, allowed_tools=allowed)
    return skill, notes
