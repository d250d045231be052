"""Sub-agent types: Markdown files in Claude Code's shape that the ``task`` tool names.

Read from ``<workspace>/.claude/agents/`` (the project's) and ``~/.claude/agents/``
(the user's), every ``*.md`` file, in subfolders too (``review/security.md``: a
type is named by its front matter, never by its folder); a project's type hides a
user's of the same name. One file::

    ---
    name: code-reviewer
    description: Reviews a change for bugs. Use after editing code.
    tools: Read, Grep, Glob        # optional: absent means every tool
    model: haiku                   # optional: inherit (the default), an alias or an id
    ---
    You are a careful code reviewer. ...

The body is the sub-agent's system prompt. ``tools`` takes Claude Code's names (ours
too, through ``protocol/tool_names``): ``MultiEdit`` gives ``edit_file`` (one edit per
call), ``LS`` gives ``glob``; a name agent-tui has no tool for (``NotebookEdit``) is
said in a note and left out, and a tool it lists that the session does not offer
(``WebSearch`` while web search is off, an MCP server that is not up) is said when
the sub-agent starts; a sub-agent never gets ``task``, whatever the file says. ``disallowedTools`` takes tools away. ``model`` is ``inherit`` (the parent's
model when the sub-agent starts), ``sonnet``/``opus``/``haiku`` or a model id, resolved
when the sub-agent starts as a command's ``model:`` is (``core/services/model_control.py``).

A file that cannot be used (no front matter, bad YAML, no name or description, a
name against Claude Code's rule, an empty body) is a :class:`FileProblem` with its
line; the other files still load. A key Claude Code knows and agent-tui does not
apply (``permissionMode``, ``hooks``, ...) and a tool name that names no tool are
problems too, but the type still loads.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.frontmatter import (
    DefinitionError,
    FileProblem,
    key_line,
    load_definitions,
    read_definition,
)
from agent_tui.protocol.tool_names import facts_of, is_mcp, our_name, stand_in
from agent_tui.paths import source_read

AGENTS_DIR = Path(".claude") / "agents"
MAX_FILES = 200  # per folder
INHERIT = "inherit"
#: The general sub-agent (today's: every tool but task), used when no type is named.
GENERAL = "general-purpose"
#: Claude Code's tools agent-tui has nothing for (a sub-agent listing one is told so).
MISSING_TOOLS = frozenset({"notebook_edit"})
APPLIED_KEYS = frozenset({"name", "description", "tools", "disallowedTools", "model"})
#: Keys Claude Code documents for sub-agents that agent-tui reads and does not apply.
NOT_APPLIED_KEYS = frozenset({
    "permissionMode", "maxTurns", "skills", "mcpServers", "hooks", "memory", "background",
    "isolation", "color",
})


class AgentScope(StrEnum):
    PROJECT = "project"
    USER = "user"
    PLUGIN = "plugin"  # an enabled plugin's, named PLUGIN:AGENT


class AgentType(DeferredModel):
    """One sub-agent type, as its file gives it."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    system: str  # the file's body
    file: Path
    scope: AgentScope
    # Our tool names (MCP names and ``mcp__SERVER`` prefixes as written); None: every tool.
    tools: tuple[str, ...] | None = None
    disallowed: tuple[str, ...] = ()
    model: str = INHERIT  # as written: inherit, an alias or an id

    def allows(self, tool_name: str) -> bool:
        """Whether a tool of this name is given to the sub-agent (never one that starts
        sub-agents: ``task``)."""
        if facts_of(tool_name).starts_agents or _matches(tool_name, self.disallowed):
            return False
        return self.tools is None or _matches(tool_name, self.tools)

    @property
    def tools_shown(self) -> str:
        if self.tools is None:
            return "all tools" + (f" but {', '.join(self.disallowed)}" if self.disallowed else "")
        return ", ".join(t for t in self.tools if self.allows(t) or is_mcp(t)) or "no tools"


def _matches(tool_name: str, names: tuple[str, ...]) -> bool:
    for name in names:
        if tool_name == name:
            return True
        # ``mcp__github`` stands for every tool of that server
        if is_mcp(name) and name.count("__") == 1 and tool_name.startswith(name + "__"):
            return True
    return False


class AgentTypes(DeferredModel):
    """The session's sub-agent types (fixed for the session) and what was wrong."""

    types: list[AgentType] = []
    problems: list[FileProblem] = []

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def get(self, name: str) -> AgentType | None:
        return next((t for t in self.types if t.name == name), None)

    def names(self) -> list[str]:
        return [t.name for t in self.types]


def agent_dirs(workspace: Path, home: Path | None = None) -> list[tuple[AgentScope, Path]]:
    """(scope, folder), in the order a name is looked up (the project's first)."""
    user_home = home if home is not None else Path.home()
    return [(scope, folder) for scope, folder in (
        (AgentScope.PROJECT, Path(workspace) / AGENTS_DIR),
        (AgentScope.USER, user_home / AGENTS_DIR),
    ) if source_read(scope.value)]


def _agent_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*.md") if p.is_file())


def load_agent_types(workspace: Path, home: Path | None = None) -> AgentTypes:
    """Every type in :func:`agent_dirs`; bad files become problems."""
    types, problems = load_definitions(
        agent_dirs(workspace, home), _agent_files, parse_agent_file, lambda agent: agent.name,
        "sub-agent", cap=MAX_FILES, workspace=workspace, home=home)
    # our own parser's objects: nothing to check again, and no model to build for it
    return AgentTypes.model_construct(types=types, problems=problems)


def parse_agent_file(path: Path, scope: AgentScope) -> tuple[AgentType, list[FileProblem]]:
    """One file as a type, and the notes on it; raises DefinitionError (or OSError)."""
    found = read_definition(path, "sub-agent")
    text, front, meta = found.text, found.front, found.front.meta
    name, description = found.name, found.description
    system = front.body.strip()
    if not system:
        raise DefinitionError("the body (the sub-agent's system prompt) is empty",
                              front.body_line)
    notes: list[FileProblem] = []
    tools = _tool_list(meta, "tools", path, text, notes)
    disallowed = _tool_list(meta, "disallowedTools", path, text, notes) or ()
    model = meta.get("model", INHERIT)
    if model is None:
        model = INHERIT
    if not isinstance(model, str) or not model.strip():
        notes.append(FileProblem(path, f"model {model!r} is not a model name: the parent's "
                                       "model is used", key_line(text, "model")))
        model = INHERIT
    for key in meta:
        if key in APPLIED_KEYS:
            continue
        why = "not applied by agent-tui" if key in NOT_APPLIED_KEYS else "unknown key"
        notes.append(FileProblem(path, f"{key}: {why}, ignored", key_line(text, key)))
    agent = AgentType(
        name=name, description=" ".join(description.split()), system=system, file=path,
        scope=scope, tools=tools, disallowed=tuple(disallowed), model=model.strip(),
    )
    return agent, notes


def _tool_for(bare: str) -> str | None:
    """Ours for a name in either spelling, a stand-in's for a tool done another way
    (its ``stands_in_for``)."""
    return stand_in(bare) or our_name(bare)


def _tool_list(
    meta: dict[str, Any], key: str, path: Path, text: str, notes: list[FileProblem]
) -> tuple[str, ...] | None:
    """A comma (or YAML) list of tool names, as ours; None when the key is absent."""
    if key not in meta or meta[key] is None:
        return None
    raw = meta[key]
    line = key_line(text, key)
    if isinstance(raw, str):
        items = [part.strip() for part in raw.split(",")]
    elif isinstance(raw, list) and all(isinstance(i, str) for i in raw):
        items = [i.strip() for i in raw]
    else:
        notes.append(FileProblem(path, f"{key} must be a comma-separated list of tool names; "
                                       "ignored", line))
        return None
    names: list[str] = []
    for item in filter(None, items):
        bare = item.split("(", 1)[0].strip()  # Task(worker): which types it may start
        ours = _tool_for(bare)
        if ours in MISSING_TOOLS:
            notes.append(FileProblem(path, f"{key}: {item!r}: agent-tui has no such tool; "
                                           "left out", line))
        elif ours is None:
            notes.append(FileProblem(path, f"{key}: {item!r} names no tool; left out", line))
        elif facts_of(ours).starts_agents and key == "tools":
            notes.append(FileProblem(path, f"{key}: {item!r}: a sub-agent cannot start "
                                           "sub-agents here; left out", line))
        elif ours not in names:
            names.append(ours)
    return tuple(names)
