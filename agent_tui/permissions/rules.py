"""The permission rule grammar: ``TOOL`` or ``TOOL(SPECIFIER)``, and the three lists.

The grammar is Claude Code's. ``TOOL`` is a tool's name in Claude Code's spelling
(``Bash``, ``Read``, ``Edit``, ``WebFetch``...) or agent-tui's own (``bash``,
``read_file``...), an MCP name (``mcp__server`` for every tool of that server,
``mcp__server__*``, ``mcp__server__tool``), or a glob on those names. A name that
names no tool is refused (:class:`InvalidRule`, with a "did you mean").

Some names stand for a family, as in Claude Code: ``Read`` rules also govern Glob and
Grep, ``Edit`` (and ``Write``, ``MultiEdit``, ``NotebookEdit``) rules govern every tool
that edits a file.

The specifier is matched against the call's subject (see ``policy.py`` for which
subject a call has):

- a command: ``npm run test:*`` is a prefix match on whole words (``npm run test``,
  ``npm run test -- -x``, not ``npm run testx``); ``git diff *`` is a wildcard (``*``
  matches any text; a final `` *`` also matches nothing, so ``git diff`` too); without
  either the command must be exactly that (:func:`command_matches`);
- a path: a gitignore-style glob whose start says where it is rooted
  (:mod:`.rule_paths`);
- a domain: ``domain:example.com``, a glob on the host (:func:`domain_matches`).

A rule is shown (``text``) in Claude Code's spelling, whichever spelling it was
written in. A rule that does not parse raises :class:`InvalidRule` with a message
that says what is wrong, worded for the person who wrote it.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import difflib
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.permissions.rule_paths import PathSpec, parse_path_spec
from agent_tui.protocol.tool_names import (
    CLAUDE_NAMES,
    OUR_NAMES,
    FileAccess,
    RuleSubject,
    claude_name,
    every_tool,
    facts,
    is_mcp,
    our_name,
)


class InvalidRule(ValueError):
    """A permission rule that cannot be parsed; the message says what is wrong."""


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-*?\[\]!]+")
_WILDCARDS = frozenset("*?[")

def family(ours: str) -> frozenset[str]:
    """The tools (ours) a rule naming ``ours`` governs: a tool whose ``family_rule`` is
    set governs every tool of its file access (``Read``: Glob and Grep too; ``Edit``,
    ``Write``: every tool that edits), any other only itself."""
    given = facts(ours)
    if given is None or not given.family_rule or given.file_access is FileAccess.NONE:
        return frozenset({ours})
    return frozenset(f.name for f in every_tool() if f.file_access is given.file_access)


def rule_subject(ours: str) -> RuleSubject:
    """What a rule's specifier matches of a call of ``ours`` (NONE: an unknown tool)."""
    given = facts(ours)
    return given.rule_subject if given is not None else RuleSubject.NONE


def _known_names() -> list[str]:
    return sorted({*CLAUDE_NAMES, *OUR_NAMES})


def unknown_tool_message(text: str, tool: str) -> str:
    close = difflib.get_close_matches(tool, list(OUR_NAMES), n=1, cutoff=0.6)
    if not close:
        close = [claude_name(n) for n in difflib.get_close_matches(tool, list(CLAUDE_NAMES), n=1)]
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return f"permission rule {text!r} names no known tool {tool!r}{hint}"


class Rule(DeferredModel):
    """One parsed rule, e.g. ``Bash(git status:*)``."""

    model_config = ConfigDict(frozen=True)

    text: str  # as shown to the user: Claude Code's tool name
    tool: str  # our name, an MCP name, or a glob on tool names (a literal name when ``exact``)
    specifier: str | None = None
    exact: bool = False  # session rules: no globbing, no prefixes: this call shape only
    tools: frozenset[str] = frozenset()  # the tools (ours) it governs; empty: by ``tool`` alone
    path: PathSpec | None = None  # the specifier read as a path pattern

    @classmethod
    def parse(cls, text: str, *, settings_root: str | None = None) -> "Rule":
        """Parse one rule. ``settings_root`` is the folder a ``/path`` specifier is
        relative to (the project root when None: project files, the command line)."""
        if not isinstance(text, str):
            raise InvalidRule(f"permission rule must be a string, not {type(text).__name__}")
        raw = text.strip()
        if not raw:
            raise InvalidRule("empty permission rule")
        if "(" in raw:
            written, _, rest = raw.partition("(")
            if not rest.endswith(")"):
                raise InvalidRule(f"invalid permission rule {text!r}: missing ')' at the end")
            inside = rest[:-1]
            if not inside.strip():
                raise InvalidRule(
                    f"invalid permission rule {text!r}: empty parentheses "
                    "(write just the tool name to match every call)"
                )
            spec: str | None = inside
        else:
            if ")" in raw:
                raise InvalidRule(f"invalid permission rule {text!r}: ')' without '('")
            written, spec = raw, None
        written = written.strip()
        if not written:
            raise InvalidRule(f"invalid permission rule {text!r}: missing tool name before '('")
        if not _TOOL_NAME.fullmatch(written):
            raise InvalidRule(
                f"invalid permission rule {text!r}: tool name {written!r} may hold only letters, "
                "digits, '_', '-', '.' and the wildcards * ? [ ]"
            )
        if spec is not None and spec.strip() == "*":
            spec = None  # Bash(*) is Bash: every call
        tool, tools = _resolve_tool(text, written)
        legacy = written in CLAUDE_NAMES  # agent-tui's own spelling: its old meanings hold
        path = None
        if spec is not None and any(rule_subject(t) is RuleSubject.PATH for t in tools):
            path = parse_path_spec(spec, settings_root=settings_root, legacy=legacy)
        shown = claude_name(tool) if not any(c in tool for c in _WILDCARDS) else written
        shown = shown if spec is None else f"{shown}({spec})"
        return cls(text=shown, tool=tool, specifier=spec, tools=tools, path=path)

    @classmethod
    def for_call(cls, tool: str, specifier: str | None = None, shown: str | None = None) -> "Rule":
        """An exact rule for one call shape (what "allow for this session" keeps)."""
        text = claude_name(tool) + (f"({shown or specifier})" if specifier is not None else "")
        return cls(text=text, tool=tool, specifier=specifier, exact=True)

    @property
    def specifier_can_match(self) -> bool:
        """False for ``TodoWrite(x)`` or ``mcp__s__t(x)``: those calls have nothing a
        specifier could match, so the rule would never match."""
        return (self.specifier is None or self.exact
                or any(rule_subject(t) is not RuleSubject.NONE for t in self.tools))

    def matches_tool(self, name: str) -> bool:
        if self.exact:
            return name == self.tool
        if name in self.tools:
            return True
        if is_mcp(self.tool) and is_mcp(name):
            if _server_only(self.tool):
                return name == self.tool or name.startswith(self.tool + "__")
            return fnmatchcase(name, self.tool)
        return any(c in self.tool for c in _WILDCARDS) and fnmatchcase(name, self.tool)


def _server_only(name: str) -> bool:
    """``mcp__server`` (every tool of that server), not ``mcp__server__tool``."""
    return "__" not in name[len("mcp__") :] and not any(c in name for c in _WILDCARDS)


def _resolve_tool(text: str, written: str) -> tuple[str, frozenset[str]]:
    """(the rule's tool, the tools it governs) for a name as written."""
    if is_mcp(written):
        return written, frozenset()
    if any(c in written for c in _WILDCARDS):
        names = frozenset(
            our_name(n) or n for n in _known_names() if fnmatchcase(n, written)
        )
        if not names and not fnmatchcase("mcp__server__tool", written):
            raise InvalidRule(unknown_tool_message(text, written))
        return written, frozenset(names)
    ours = our_name(written)
    if ours is None:
        raise InvalidRule(unknown_tool_message(text, written))
    return ours, family(ours)


# -- commands ---------------------------------------------------------------------


def command_matches(spec: str, command: str) -> bool:
    """Whether one command (no separators) matches a command specifier.

    Runs of blanks count as one on both sides (the shell splits words the same way),
    so ``git  push`` cannot slip past a rule on ``git push``."""
    command = _words(command)
    if spec.endswith(":*"):
        prefix = _words(spec[:-2])
        if not prefix:
            return True
        return command == prefix or command.startswith(prefix + " ")
    if "*" in spec:
        return _wildcard_regex(_words(spec)).fullmatch(command) is not None
    return command == _words(spec)


def _words(text: str) -> str:
    return " ".join(text.split())


def is_pattern(spec: str) -> bool:
    """Whether a command specifier matches more than the one command it spells."""
    return spec.endswith(":*") or "*" in spec


@lru_cache(maxsize=256)
def _wildcard_regex(spec: str) -> re.Pattern[str]:
    # Claude Code: ``*`` matches any text, spaces included; a lone final `` *`` may also
    # match nothing ("git diff *" matches "git diff").
    if spec.endswith(" *") and spec.count("*") == 1:
        return re.compile(re.escape(spec[:-2]) + r"(?: .*)?", re.DOTALL)
    return re.compile(".*".join(re.escape(part) for part in spec.split("*")), re.DOTALL)


def name_matches(spec: str, name: str) -> bool:
    """Whether a sub-agent's or a skill's name matches a rule's specifier: exactly,
    ``acme:*`` (``acme`` and every ``acme:...`` name), or a glob."""
    spec, name = spec.strip(), name.strip()
    if spec.endswith(":*"):
        prefix = spec[:-2]
        return name == prefix or name.startswith(prefix + ":")
    return fnmatchcase(name, spec) if "*" in spec else name == spec


DOMAIN_PREFIX = "domain:"


def domain_matches(spec: str, host: str) -> bool:
    """Whether ``domain:PATTERN`` matches ``host`` (a glob on the host, any case)."""
    if not spec.startswith(DOMAIN_PREFIX) or not host:
        return False
    return fnmatchcase(host, spec[len(DOMAIN_PREFIX) :].strip().lower().rstrip("."))


# -- the lists --------------------------------------------------------------------


def _parse_rules(value: Any) -> list[Rule]:
    if value is None:
        return []
    if isinstance(value, str):
        raise InvalidRule("permission rules must be a list of strings, not one string")
    return [v if isinstance(v, Rule) else Rule.parse(v) for v in value]


class PermissionRules(DeferredModel):
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
