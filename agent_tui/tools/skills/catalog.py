"""Skills: folders with a ``SKILL.md``, in Claude Code's shape, found once per session.

Looked for, in this order (the first skill of a name wins; a later one of the same
name is reported and left out):

1. ``~/.claude/skills/<skill>/SKILL.md`` (the user's),
2. ``<workspace>/.claude/skills/<skill>/SKILL.md`` (the project's),
3. ``~/.agents/skills/<skill>/SKILL.md`` and ``<workspace>/.agents/skills/<skill>/SKILL.md``
   (the open Agent Skills layout).

``SKILL.md`` opens with front matter, every key optional as in Claude Code: ``name``
(lowercase letters, digits and hyphens, at most 64 characters; else the folder's name)
and ``description`` (what it does and when to use it, at most 1024 characters; else the
body's first paragraph); ``allowed-tools`` is read and shown but grants nothing
(every call still goes through the permission rules); other keys are named in a
notice. Only name and description are offered to the model (in the ``skill`` tool's
description); the body is read when the model uses the skill. In the body, as in
Claude Code, ``${CLAUDE_SKILL_DIR}`` is the skill's folder and ``${CLAUDE_PROJECT_DIR}``
the workspace; a plugin's skill also gets ``${CLAUDE_PLUGIN_ROOT}`` and
``${CLAUDE_PLUGIN_DATA}`` (the plugin's folders) and ``${user_config.KEY}`` (a plain option's value; a sensitive one never, a
note stands in its place; one with no value stays as written).

A project's skills are instructions, not code: loading them runs nothing, so they
load whether or not the project is trusted.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from enum import StrEnum
from pathlib import Path

from pydantic import ConfigDict, Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.frontmatter import (
    DESCRIPTION_MAX,
    FileProblem,
    key_line,
    load_definitions,
    read_definition,
)
from agent_tui.paths import source_read

SKILL_FILE = "SKILL.md"
MAX_SKILLS = 200  # per folder
APPLIED_KEYS = frozenset({"name", "description", "allowed-tools"})
#: Keys of Claude Code's or the open standard's that are read and not applied.
NOT_APPLIED_KEYS = frozenset({
    "license", "metadata", "compatibility", "model", "context", "agent", "hooks",
    "user-invocable", "disable-model-invocation", "argument-hint", "version", "when_to_use",
    "effort", "paths", "shell", "arguments",
})
QUIET_KEYS = frozenset({"license", "metadata", "compatibility", "version"})  # facts, not behaviour


class SkillScope(StrEnum):
    USER = "user"
    PROJECT = "project"
    USER_AGENTS = "user (.agents)"
    PROJECT_AGENTS = "project (.agents)"
    PLUGIN = "plugin"  # an enabled plugin's, named PLUGIN:SKILL


class Skill(DeferredModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    folder: Path  # absolute
    scope: SkillScope
    allowed_tools: str = ""  # as written; not applied
    # A plugin's skill: what ``${NAME}`` in its text becomes, besides every skill's
    # ``CLAUDE_SKILL_DIR`` and ``CLAUDE_PROJECT_DIR`` (``CLAUDE_PLUGIN_ROOT``, ``_DATA``,
    # ``user_config.KEY`` for a plain option value: ``plugins.skill_values``)
    values: dict[str, str] = Field(default_factory=dict)

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


class Skills(DeferredModel):
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
    return [(scope, folder) for scope, folder in (
        (SkillScope.USER, user_home / ".claude" / "skills"),
        (SkillScope.PROJECT, ws / ".claude" / "skills"),
        (SkillScope.USER_AGENTS, user_home / ".agents" / "skills"),
        (SkillScope.PROJECT_AGENTS, ws / ".agents" / "skills"),
    ) if source_read(scope.value.split()[0])]


def _skill_files(base: Path) -> list[Path]:
    return sorted(p / SKILL_FILE for p in base.iterdir() if (p / SKILL_FILE).is_file())


def load_skills(workspace: Path, home: Path | None = None) -> Skills:
    skills, problems = load_definitions(
        skill_dirs(workspace, home), _skill_files,
        lambda path, scope: parse_skill(path.parent.absolute(), scope),
        lambda skill: skill.name, "skill", cap=MAX_SKILLS, workspace=workspace, home=home)
    # our own parser's objects: nothing to check again, and no model to build for it
    return Skills.model_construct(skills=skills, problems=problems)


def parse_skill(folder: Path, scope: SkillScope) -> tuple[Skill, list[FileProblem]]:
    path = folder / SKILL_FILE
    found = read_definition(path, "skill", default_name=folder.name)
    text, meta, name, description = found.text, found.front.meta, found.name, found.description
    notes: list[FileProblem] = []
    if len(description) > DESCRIPTION_MAX:
        notes.append(FileProblem(path, f"description is longer than {DESCRIPTION_MAX} "
                                       "characters: cut there", key_line(text, "description")))
        description = description[:DESCRIPTION_MAX]
    given = meta.get("name")
    if isinstance(given, str) and given != name:
        notes.append(FileProblem(path, f"name {given!r} is a title, not a skill name: the skill "
                                       f"is called {name!r}, its folder's name, as in Claude Code",
                                 key_line(text, "name")))
    elif name != folder.name:
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
