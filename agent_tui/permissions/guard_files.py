"""The agent's own guard files: never written by a file tool unasked.

A file that decides what the agent may do or what runs on the user's behalf is a
guard: a settings folder (``.claude/``, ``.agent-tui/``), MCP servers (``.mcp.json``,
Claude Code's ``.claude.json``), git's folder (hooks and config run code on the user's
next git command), and the instructions every session reads (``CLAUDE.md``,
``AGENTS.md``). They count at any depth: a nested ``sub/.claude/settings.json`` is a
project's settings as soon as agent-tui opens ``sub/``.

A file tool's write there asks in every mode but ``auto`` (which the user chose to
ask nothing), over any allow rule; a deny rule still denies. Inside the sandbox and in
plan mode these paths are read-only (``runtime/sandbox.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from agent_tui.core.calls.permission import Ruling
from agent_tui.protocol import PermissionMode, Verdict

#: Folders that are guards with all they hold, wherever they are.
GUARD_FOLDERS = frozenset({".claude", ".agent-tui", ".git"})
#: Files that are guards, wherever they are.
GUARD_NAMES = frozenset({".mcp.json", ".claude.json", "CLAUDE.md", "CLAUDE.local.md",
                         "AGENTS.md"})


def guard_of(path: str) -> str | None:
    """The guard ``path`` (absolute, normalised) falls under, as shown to the user
    (``.claude/``, ``.mcp.json``...), or None."""
    parts = [p for p in path.split(os.sep) if p]
    for part in parts[:-1]:
        if part in GUARD_FOLDERS:
            return f"{part}/"
    if parts and (parts[-1] in GUARD_NAMES or parts[-1] in GUARD_FOLDERS):
        return parts[-1] + ("/" if parts[-1] in GUARD_FOLDERS else "")
    return None


def guard_ruling(
    tool_shown: str, mode: PermissionMode, writes: bool, paths: Iterable[str],
) -> Ruling | None:
    """ASK when a writing file tool's path (any of its forms: as written, as it really
    is) is a guard and the mode is not ``auto``; None to decide as usual."""
    if mode is PermissionMode.AUTO or not writes:
        return None
    for path in paths:
        guard = guard_of(path)
        if guard is not None:
            return Ruling(verdict=Verdict.ASK, rule=f"guard:{guard}", reason=(
                f"{tool_shown} writes {path}, in {guard}: one of the agent's own guard files "
                "(settings, MCP servers, git hooks and config, instructions), which can "
                "widen what the agent may do"))
    return None


def no_one_to_ask(ruling: Ruling, nobody: str) -> str:
    """Why a guard file write is denied where no one can be asked (no allow rule helps:
    only auto mode, which the user chooses)."""
    return f"{ruling.reason}; {nobody}, so it is denied (only auto mode writes them unasked)"
