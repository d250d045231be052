"""The permission rule grammar: ``TOOL`` or ``TOOL(SPECIFIER)``, and the three lists.

``TOOL`` is a glob on the tool name (``bash``, ``mcp__server__*``). The specifier is
matched against the call's subject (see ``policy.py`` for which subject a call has):

- a command: ``git status:*`` is a prefix match on whole words (``git status``,
  ``git status -s``, not ``git statusx``); without ``:*`` the command must be exactly
  that (:func:`command_matches`);
- a path: a glob (``globs.py``);
- a domain: ``domain:example.com``, a glob on the host (:func:`domain_matches`).

A rule that does not parse raises :class:`InvalidRule` with a message that says what
is wrong, worded for the person who wrote it.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class InvalidRule(ValueError):
    """A permission rule that cannot be parsed; the message says what is wrong."""


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-*?\[\]!]+")


class Rule(BaseModel):
    """One parsed rule, e.g. ``bash(git status:*)``."""

    model_config = ConfigDict(frozen=True)

    text: str
    tool: str  # a glob on the tool name (a literal name when ``exact``)
    specifier: str | None = None
    exact: bool = False  # session rules: no globbing, no prefixes: this call shape only

    @classmethod
    def parse(cls, text: str) -> Rule:
        if not isinstance(text, str):
            raise InvalidRule(f"permission rule must be a string, not {type(text).__name__}")
        raw = text.strip()
        if not raw:
            raise InvalidRule("empty permission rule")
        if "(" in raw:
            tool, _, rest = raw.partition("(")
            if not rest.endswith(")"):
                raise InvalidRule(f"invalid permission rule {text!r}: missing ')' at the end")
            spec: str | None = rest[:-1]
            if not spec.strip():
                raise InvalidRule(
                    f"invalid permission rule {text!r}: empty parentheses "
                    "(write just the tool name to match every call)"
                )
        else:
            if ")" in raw:
                raise InvalidRule(f"invalid permission rule {text!r}: ')' without '('")
            tool, spec = raw, None
        tool = tool.strip()
        if not tool:
            raise InvalidRule(f"invalid permission rule {text!r}: missing tool name before '('")
        if not _TOOL_NAME.fullmatch(tool):
            raise InvalidRule(
                f"invalid permission rule {text!r}: tool name {tool!r} may hold only letters, "
                "digits, '_', '-', '.' and the wildcards * ? [ ]"
            )
        return cls(text=raw, tool=tool, specifier=spec)

    def matches_tool(self, name: str) -> bool:
        return name == self.tool if self.exact else fnmatchcase(name, self.tool)


def command_matches(spec: str, command: str) -> bool:
    """Whether one command (no separators) matches a command specifier."""
    command = command.strip()
    if spec.endswith(":*"):
        prefix = spec[:-2].strip()
        if not prefix:
            return True
        return command == prefix or (command.startswith(prefix) and command[len(prefix)].isspace())
    return command == spec.strip()


DOMAIN_PREFIX = "domain:"


def domain_matches(spec: str, host: str) -> bool:
    """Whether ``domain:PATTERN`` matches ``host`` (a glob on the host, any case)."""
    if not spec.startswith(DOMAIN_PREFIX) or not host:
        return False
    return fnmatchcase(host, spec[len(DOMAIN_PREFIX) :].strip().lower().rstrip("."))


def _parse_rules(value: Any) -> list[Rule]:
    if value is None:
        return []
    if isinstance(value, str):
        raise InvalidRule("permission rules must be a list of strings, not one string")
    return [v if isinstance(v, Rule) else Rule.parse(v) for v in value]


class PermissionRules(BaseModel):
    """The three rule lists (from settings files or the command line)."""

    model_config = ConfigDict(frozen=True)

    allow: list[Rule] = Field(default_factory=list)
    ask: list[Rule] = Field(default_factory=list)
    deny: list[Rule] = Field(default_factory=list)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:  # say what is wrong, not pydantic's framing
            problems = "; ".join(
                str(err.get("ctx", {}).get("error") or err["msg"]) for err in exc.errors()
            )
            raise InvalidRule(problems) from None

    @field_validator("allow", "ask", "deny", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> list[Rule]:
        return _parse_rules(value)
