"""Tool names and inputs as Claude Code spells them, beside agent-tui's own.

A user writes and reads Claude Code's names (``Bash``, ``Read``, ``Edit``...) in
permission rules, hook matchers, hook payloads, ``/permissions`` and notices; the model
sees agent-tui's own (``bash``, ``read_file``...). Each tool says its Claude Code name
and input keys itself (``core/calls/tool.py``); the tool catalog (``tools/catalog.py``)
registers them here, so every layer, even one below the tools, translates the same way:

- :func:`claude_name` gives the name a user sees for one of our tools (an MCP tool,
  ``mcp__SERVER__TOOL``, and a name we do not know are given back as they are);
- :func:`our_name` takes either spelling and gives ours, or ``None`` for a name that is
  neither (so a rule naming no tool can be warned about);
- :func:`claude_input` turns one call's input into the shape Claude Code's tool takes
  (``path`` becomes an absolute ``file_path``, ``timeout_ms`` becomes ``timeout``), and
  :func:`our_input` turns such a shape (a hook's ``updatedInput``) back;
- :func:`facts` gives the rest of what a tool says of itself to those layers
  (:func:`facts_of`: a tool's defaults for a name that says nothing, an MCP tool's),
  which they ask rather than compare names: the file a call names and what it does to
  it, the shape hooks get of its response, what of its result is shown, whether it
  starts sub-agents, and whether it runs a command line (:func:`runs_command`).

The table is filled once, at the first question, by the loader the entry point gives
(:func:`load_with`); asked with no loader and nothing registered, it raises rather than
answer "no such tool" (a deny rule naming ``Bash`` must never read as naming nothing).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

MCP_PREFIX = "mcp__"


class FileAccess(StrEnum):
    """The files a tool's calls read or edit, by their path: Claude Code's ``Read`` rules
    govern the tools that read files, its ``Edit`` rules the tools that edit them."""

    NONE = "none"
    READS = "reads"
    EDITS = "edits"


class RuleSubject(StrEnum):
    """What of a call a permission rule's specifier matches (``Bash(npm test)``)."""

    NONE = "none"  # nothing: ``TodoWrite(x)`` would never match
    PATH = "path"
    COMMAND = "command"
    DOMAIN = "domain"  # ``WebFetch(domain:example.com)``
    NAME = "name"  # what the call starts: ``Task(code-reviewer)``, ``Skill(pdf)``


class FileChange(StrEnum):
    """What a call does to the one file its ``path`` names, so the front ends can show
    the change before and after it runs (``files/preview.py``, ``ui/render/diffs.py``)."""

    NONE = "none"
    EDIT = "edit"  # the one occurrence of ``old_string`` becomes ``new_string``
    WRITE = "write"  # the whole file becomes ``content``


class HookResponse(StrEnum):
    """The shape of the ``tool_response`` Claude Code's tool of that name gives hooks
    (``hooks/payloads.py``): a hook written for Claude Code reads those fields."""

    PLAIN = "plain"  # ours as it is (``content``, ``is_error``, ``exit_code``)
    COMMAND = "command"  # ``stdout``, ``stderr``, ``interrupted``
    FILE_EDIT = "file_edit"  # ``filePath``, ``success``, the old and new text
    FILE_READ = "file_read"  # ``file``: the lines read, their first and their count


class ResultShown(StrEnum):
    """What of a finished call's result the front ends show beside its line."""

    NONE = "none"
    HEADLINE = "headline"  # its first line, in the tools pane ("12 matches")
    SOURCES = "sources"  # a web search's pages found, listed under its line


@dataclass(frozen=True)
class ToolFacts:
    """What one tool says of itself that layers without the tool read by its name."""

    name: str  # ours, as the model sees it
    claude: str  # Claude Code's name for it
    # Claude Code's other spellings of the same tool (older or newer names).
    aliases: tuple[str, ...] = ()
    # Claude Code's tools agent-tui has none of, whose work this one does (a sub-agent
    # listing ``MultiEdit`` gets ``edit_file``).
    stands_in_for: tuple[str, ...] = ()
    # Our input key -> Claude Code's (``path`` -> ``file_path``), as hooks see the input.
    keys: Mapping[str, str] = field(default_factory=dict)
    # The permission prompt's heading (empty: "Tool" and the Claude Code name).
    prompt_title: str = ""
    # ACP's kind of tool call: "read", "edit", "execute", "search", "fetch", "think"...
    acp_kind: str = "other"
    # (verb, one, many) for a tool whose consecutive calls fold into one transcript line.
    folds_as: tuple[str, str, str] | None = None
    # The files its calls read or edit, and whether a rule naming it governs every tool
    # of that access (``Read``: Glob and Grep too; ``Edit``, ``Write``: every editor).
    file_access: FileAccess = FileAccess.NONE
    family_rule: bool = False
    # What a rule's specifier matches, and for NAME the input key that names it.
    rule_subject: RuleSubject = RuleSubject.NONE
    names_key: str = ""
    # The input keys naming the one file a call reads or edits and the line it starts at
    # (ACP's location of the call), and what the call does to that file.
    file_key: str = ""
    line_key: str = ""
    file_change: FileChange = FileChange.NONE
    hook_response: HookResponse = HookResponse.PLAIN
    result_shown: ResultShown = ResultShown.NONE
    # Its calls start sub-agents (a sub-agent is never given it).
    starts_agents: bool = False
    # Its rules guard its kind of file access wherever else it happens (a command's
    # reads and writes, a search's findings, a memory file's import): one tool per
    # access, as Claude Code's ``Read`` and ``Edit`` rules do.
    guards_access: bool = False
    # It is the shell: the user's command lines run through it (``!`` in the prompt, a
    # custom command's ``!`` lines), and its rules guard every command line. One tool.
    shell: bool = False
    # Its calls run the session's skills (``/skills`` lists what it offers).
    offers_skills: bool = False
    # Its call asks to leave plan mode (outside plan mode there is nothing to approve).
    leaves_plan: bool = False
    # Its calls write the model's plan (the plan pane, ACP's plan, the Task hooks).
    writes_plan: bool = False


#: Claude Code's tools that agent-tui does not have, named the way ours would be, so a
#: rule or matcher naming them still parses (``Edit`` rules cover ``MultiEdit`` too).
_CLAUDE_ONLY = (
    ToolFacts("multi_edit", "MultiEdit", keys={"path": "file_path"}, prompt_title="Edit file",
              file_access=FileAccess.EDITS, family_rule=True, rule_subject=RuleSubject.PATH,
              hook_response=HookResponse.FILE_EDIT),
    ToolFacts("notebook_edit", "NotebookEdit", file_access=FileAccess.EDITS, family_rule=True,
              rule_subject=RuleSubject.PATH),
)

_table: dict[str, ToolFacts] = {f.name: f for f in _CLAUDE_ONLY}
_loader: Callable[[], None] | None = None
_loaded = False
_views: dict[str, dict[str, str]] = {}  # the two spellings' tables, built when first read


def register(facts: ToolFacts) -> None:
    """Make one tool's facts known (the catalog does, for every built-in tool).

    A name, in either spelling, names one tool: a tool that would take another's (a
    ``Bash`` that is not ``bash``) is refused, or a rule written for one would govern
    the other."""
    known = _table.get(facts.name)
    if known is not None and known != facts:
        raise ValueError(f"tool {facts.name!r} is registered twice, with other facts")
    for other in _table.values():
        taken = {other.name, other.claude, *other.aliases}
        clash = taken & {facts.name, facts.claude, *facts.aliases}
        if other.name != facts.name and clash:
            raise ValueError(f"tool {facts.name!r} would take the name {min(clash)!r} of "
                             f"tool {other.name!r}")
    role, holder = _role_taken(facts)
    if holder is not None:
        raise ValueError(f"tool {facts.name!r} would be {role}, which tool {holder!r} is")
    _table[facts.name] = facts
    _views.clear()


def _role_taken(facts: ToolFacts) -> tuple[str, str | None]:
    """A role ``facts`` claims that another tool holds (the shell, the guard of one
    access): one tool each, or which rules guard a command line would be left open."""
    others = [f for f in _table.values() if f.name != facts.name]
    if facts.shell:
        return "the shell", next((f.name for f in others if f.shell), None)
    if facts.guards_access:
        return f"the guard of {facts.file_access} access", next(
            (f.name for f in others if f.guards_access and f.file_access is facts.file_access),
            None)
    return "", None


def forget(name: str) -> None:
    """Forget a tool registered at run time (a test's own, once the test is over)."""
    _table.pop(name, None)
    _views.clear()


def load_with(loader: Callable[[], None]) -> None:
    """Where the built-in tools' facts come from: run once, at the first question."""
    global _loader
    _loader = loader


def loaded() -> None:
    """The catalog has registered every built-in tool."""
    global _loaded
    _loaded = True


def _facts() -> dict[str, ToolFacts]:
    if not _loaded:
        if _loader is None:
            raise RuntimeError("the tool catalog is not loaded (tool_names.load_with)")
        _loader()
        if not _loaded:
            raise RuntimeError("the tool catalog's loader registered no tools")
    return _table


def facts(ours: str) -> ToolFacts | None:
    """What the tool named ``ours`` says of itself, if it is one we know."""
    return _facts().get(ours)


def facts_of(name: str) -> ToolFacts:
    """What the tool named ``name`` says of itself, or the defaults of a tool that says
    nothing (an MCP tool, a name we do not know): no file, no command, a plain result."""
    return _facts().get(name) or ToolFacts(name, name)


def runs_command(ours: str) -> bool:
    """Whether a call's ``command`` is a command line that it runs (what ``Bash(...)``
    rules match): the permission prompt edits it, ACP shows it in a terminal."""
    return facts_of(ours).rule_subject is RuleSubject.COMMAND


def tool_with(fact: Callable[[ToolFacts], bool]) -> str | None:
    """The first known tool (ours) of which ``fact`` holds, if any: how a layer finds
    the tool that does a thing without naming it."""
    return next((f.name for f in _facts().values() if fact(f)), None)


def stand_in(name: str) -> str | None:
    """Our tool that does the work of Claude Code's tool ``name`` (either spelling),
    one agent-tui has none of (``MultiEdit``: ``edit_file``); None: no such tool."""
    ours = our_name(name)
    spelled = {name} if ours is None else {name, claude_name(ours)}
    return tool_with(lambda f: not spelled.isdisjoint(f.stands_in_for))


def writes_plan(name: str) -> bool:
    """Whether calls of the tool ``name`` write the model's plan (its ``writes_plan``)."""
    return facts_of(name).writes_plan


def shell_tool() -> str:
    """The shell: the tool the user's command lines run through, whose rules guard
    every command line (``Bash(npm test)``); LookupError when none is known (a guard
    never reads that as "no rules apply")."""
    found = tool_with(lambda f: f.shell)
    if found is None:
        raise LookupError("no known tool runs command lines")
    return found


def access_guard(access: FileAccess) -> str:
    """The tool whose rules guard ``access`` wherever it happens (``Read`` for reads,
    ``Edit`` for edits); LookupError when none is known."""
    found = tool_with(lambda f: f.guards_access and f.file_access is access)
    if found is None:
        raise LookupError(f"no known tool guards {access} access")
    return found


class _Names(Mapping[str, str]):
    """A read-only view of the table, one spelling to the other, built when first read."""

    def __init__(self, build: Callable[[], dict[str, str]]) -> None:
        self._build = build

    def __getitem__(self, key: str) -> str:
        return self._build()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())


def _claude_names() -> dict[str, str]:
    if "claude" not in _views:
        _views["claude"] = {f.name: f.claude for f in _facts().values()}
    return _views["claude"]


def _our_names() -> dict[str, str]:
    if "ours" not in _views:
        found = {f.claude: f.name for f in _facts().values()}
        found.update({alias: f.name for f in _facts().values() for alias in f.aliases})
        _views["ours"] = found
    return _views["ours"]


#: Ours -> Claude Code's, for every built-in tool and the ones Claude Code has that we
#: do not (``multi_edit``, ``notebook_edit``).
CLAUDE_NAMES: Mapping[str, str] = _Names(_claude_names)

#: Claude Code's -> ours, with its older and newer spellings of the same tools.
OUR_NAMES: Mapping[str, str] = _Names(_our_names)

def every_tool() -> list[ToolFacts]:
    """Every tool we know by name: the built-in ones, Claude Code's that we do not have,
    and any registered since."""
    return list(_facts().values())


def _keys(ours: str) -> Mapping[str, str]:
    found = facts(ours)
    return found.keys if found is not None else {}


#: Keys whose value is a path that Claude Code gives absolute.
_ABSOLUTE = frozenset({"file_path"})


def is_mcp(name: str) -> bool:
    return name.startswith(MCP_PREFIX)


def claude_name(ours: str) -> str:
    """The name a user sees for one of our tools (MCP and unknown names unchanged)."""
    return CLAUDE_NAMES.get(ours, ours)


def our_name(name: str) -> str | None:
    """Ours for either spelling; an MCP name as it is; ``None`` for a name that is neither."""
    if name in CLAUDE_NAMES or is_mcp(name):
        return name
    return OUR_NAMES.get(name)


def known_tool(name: str) -> bool:
    """Whether ``name`` names a tool in either spelling (or is an MCP tool's name)."""
    return our_name(name) is not None


def claude_input(ours: str, tool_input: Mapping[str, Any], workspace: str) -> dict[str, Any]:
    """One call's input in the shape of Claude Code's tool of that name.

    Keys we do not rename pass through; a relative path is made absolute against the
    workspace, as Claude Code's tools only take absolute paths.
    """
    keys = _keys(ours)
    given: dict[str, Any] = {}
    for key, value in tool_input.items():
        theirs = keys.get(key, key)
        if theirs in _ABSOLUTE and isinstance(value, str) and "\0" not in value:
            value = os.path.normpath(os.path.join(workspace, os.path.expanduser(value)))
        given[theirs] = value
    return given


def our_input(ours: str, claude_shaped: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`claude_input` (paths stay absolute: our tools take those)."""
    back = {theirs: key for key, theirs in _keys(ours).items()}
    return {back.get(key, key): value for key, value in claude_shaped.items()}
