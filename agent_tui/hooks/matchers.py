"""Hook matchers: which tool (or trigger) a hook applies to, as Claude Code reads them.

- ``""``, ``"*"`` or no matcher: everything;
- letters, digits, ``_`` and ``|`` only: exact names (``bash``, ``Edit|Write``);
- anything else: a regular expression, searched in the name (``mcp__github__.*``,
  ``Notebook.*``).

A tool event's subject is tried under both its names: Claude Code's (``Bash``,
``Write``), which hook files are written in, and agent-tui's own for the same tool
(``bash``, ``write_file``), accepted as aliases. The table between the two is
:mod:`agent_tui.protocol.tool_names`. MCP tools are ``mcp__SERVER__TOOL`` in both.
:meth:`Matcher.unknown_names` lists the exact names of a matcher that name no tool,
for the settings to warn about.
"""

from __future__ import annotations

import re

from pydantic import ConfigDict, PrivateAttr

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.protocol.tool_names import claude_name, known_tool, our_name

_NAMES_ONLY = re.compile(r"[A-Za-z0-9_|]+")


class Matcher(DeferredModel):
    """A compiled matcher; ``text`` is what the settings file says."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    _names: frozenset[str] | None = PrivateAttr(default=None)
    _ours: frozenset[str] = PrivateAttr(default=frozenset())  # _names, in our spelling
    _regex: re.Pattern[str] | None = PrivateAttr(default=None)

    @classmethod
    def parse(cls, text: str) -> Matcher:
        """Raises ValueError (with a readable message) for a regex that does not compile."""
        matcher = cls(text=text)
        if text in ("", "*"):
            return matcher
        if _NAMES_ONLY.fullmatch(text):
            matcher._names = frozenset(part for part in text.split("|") if part)
            matcher._ours = frozenset(our_name(n) or n for n in matcher._names)
            return matcher
        try:
            matcher._regex = re.compile(text)
        except re.error as exc:
            raise ValueError(f"matcher {text!r} is not a valid regular expression: {exc}") from None
        return matcher

    def names(self) -> frozenset[str]:
        """The exact names this matcher lists (none for everything or a regular expression)."""
        return self._names or frozenset()

    def unknown_names(self) -> list[str]:
        """The exact names this matcher lists that are no tool's in either spelling
        (a regular expression is not judged)."""
        return sorted(n for n in self._names or () if not known_tool(n))

    def matches(self, subject: str | None) -> bool:
        """``subject`` None: an event without one (every matcher applies)."""
        if subject is None or (self._names is None and self._regex is None):
            return True
        if self._names is not None:
            return subject in self._ours or claude_name(subject) in self._names
        assert self._regex is not None
        return any(self._regex.search(name) for name in {subject, claude_name(subject)})
