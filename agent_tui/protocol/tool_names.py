"""Tool names and inputs as Claude Code spells them, beside agent-tui's own.

A user writes and reads Claude Code's names (``Bash``, ``Read``, ``Edit``...) in
permission rules, hook matchers, hook payloads, ``/permissions`` and notices; the model
sees agent-tui's own (``bash``, ``read_file``...). This module is the one table between
the two, so every layer translates the same way:

- :func:`claude_name` gives the name a user sees for one of our tools (an MCP tool,
  ``mcp__SERVER__TOOL``, and a name we do not know are given back as they are);
- :func:`our_name` takes either spelling and gives ours, or ``None`` for a name that is
  neither (so a rule naming no tool can be warned about);
- :func:`claude_input` turns one call's input into the shape Claude Code's tool takes
  (``path`` becomes an absolute ``file_path``, ``timeout_ms`` becomes ``timeout``), and
  :func:`our_input` turns such a shape (a hook's ``updatedInput``) back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

#: Ours -> Claude Code's, for every built-in tool and the ones Claude Code has that we
#: name the same way when they exist here (``multi_edit``, ``web_search``, ``skill``,
#: ``exit_plan_mode``).
CLAUDE_NAMES: dict[str, str] = {
    "bash": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "multi_edit": "MultiEdit",
    "glob": "Glob",
    "grep": "Grep",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "task": "Task",
    "todo_write": "TodoWrite",
    "skill": "Skill",
    "bash_output": "BashOutput",
    "kill_shell": "KillShell",
    "exit_plan_mode": "ExitPlanMode",
    "notebook_edit": "NotebookEdit",
}

#: Claude Code's -> ours.
OUR_NAMES: dict[str, str] = {claude: ours for ours, claude in CLAUDE_NAMES.items()}
# Claude Code's older and newer spellings of the same tools.
OUR_NAMES.update({"Agent": "task", "LS": "glob"})

MCP_PREFIX = "mcp__"

#: The tools whose subject is a file path, in Claude Code's names (``Read(...)``,
#: ``Edit(...)`` rules; Claude Code's ``Edit`` rules cover every tool that edits).
PATH_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep"})

#: Our input key -> Claude Code's, per tool (ours on the left, as the model sends it).
_KEYS: dict[str, dict[str, str]] = {
    "read_file": {"path": "file_path"},
    "write_file": {"path": "file_path"},
    "edit_file": {"path": "file_path"},
    "multi_edit": {"path": "file_path"},
    "bash": {"timeout_ms": "timeout"},
    "grep": {"context": "-C"},
    "bash_output": {"shell_id": "bash_id"},
    "kill_shell": {"shell_id": "shell_id"},
    "skill": {"name": "skill"},
}

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
    keys = _KEYS.get(ours, {})
    given: dict[str, Any] = {}
    for key, value in tool_input.items():
        theirs = keys.get(key, key)
        if theirs in _ABSOLUTE and isinstance(value, str) and "\0" not in value:
            value = os.path.normpath(os.path.join(workspace, os.path.expanduser(value)))
        given[theirs] = value
    return given


def our_input(ours: str, claude_shaped: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`claude_input` (paths stay absolute: our tools take those)."""
    back = {theirs: key for key, theirs in _KEYS.get(ours, {}).items()}
    return {back.get(key, key): value for key, value in claude_shaped.items()}
