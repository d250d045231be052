"""Hook matchers: which tool (or trigger) a hook applies to, as Claude Code reads them.

- ``""``, ``"*"`` or no matcher: everything;
- letters, digits, ``_`` and ``|`` only: exact names (``bash``, ``Edit|Write``);
- anything else: a regular expression, searched in the name (``mcp__github__.*``,
  ``Notebook.*``).

A tool event's subject is tried under both its names: agent-tui's (``bash``,
``write_file``) and Claude Code's for the same tool (``Bash``, ``Write``), so a hook
file written for Claude Code matches unchanged. MCP tools are ``mcp__SERVER__TOOL``
in both.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, PrivateAttr

#: agent-tui's tool names -> Claude Code's names for the same tools.
CLAUDE_NAMES: dict[str, str] = {
    "bash": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "grep": "Grep",
    "glob": "Glob",
    "web_fetch": "WebFetch",
    "todo_write": "TodoWrite",
    "task": "Task",
}

_NAMES_ONLY = re.compile(r"[A-Za-z0-9_|]+")


class Matcher(BaseModel):
    """A compiled matcher; ``text`` is what the settings file says."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    _names: frozenset[str] | None = PrivateAttr(default=None)
    _regex: re.Pattern[str] | None = PrivateAttr(default=None)

    @classmethod
    def parse(cls, text: str) -> Matcher:
        """Raises ValueError (with a readable message) for a regex that does not compile."""
        matcher = cls(text=text)
        if text in ("", "*"):
            return matcher
        if _NAMES_ONLY.fullmatch(text):
            matcher._names = frozenset(part for part in text.split("|") if part)
            return matcher
        try:
            matcher._regex = re.compile(text)
        except re.error as exc:
            raise ValueError(f"matcher {text!r} is not a valid regular expression: {exc}") from None
        return matcher

    def matches(self, subject: str | None) -> bool:
        """``subject`` None: an event without one (every matcher applies)."""
        if subject is None or (self._names is None and self._regex is None):
            return True
        names = {subject, CLAUDE_NAMES.get(subject, subject)}
        if self._names is not None:
            return bool(names & self._names)
        assert self._regex is not None
        return any(self._regex.search(name) for name in names)
