"""Who may run what: permission modes, allow/ask/deny rules, and session memory.

:class:`Permissions` implements the core's ``PermissionPolicy``. A call is decided by
the first of these that speaks:

1. a **deny** rule that matches;
2. a **session** rule (the user chose "allow for this session" for this exact call
   shape: the same command, the same file, or the same tool);
3. an **ask** rule that matches;
4. an **allow** rule that matches;
5. the **mode**: ``ask`` allows read-only calls and asks for the rest,
   ``accept-edits`` also allows ``write_file``/``edit_file`` inside the workspace
   (except the files that grant power: agent-tui's project settings, ``.mcp.json``
   and ``.git/``, see :data:`PROTECTED_PATHS`), ``auto`` allows everything.

In print mode (``non_interactive=True``) nobody can answer, so "ask" becomes "deny",
with a reason that says how to allow it.

Rule syntax: ``TOOL`` or ``TOOL(SPECIFIER)``. ``TOOL`` is a glob on the tool name
(``bash``, ``mcp__server__*``). The specifier is matched against the call's subject:

- a command (tools with a ``command`` argument, i.e. ``bash``): ``git status:*`` is a
  prefix match on whole words (``git status``, ``git status -s``, not ``git statusx``);
  without ``:*`` the command must be exactly that. An *allow* prefix rule only matches
  a command whose every part (split on ``;``, ``&&``, ``||``, ``|``, ``&``, newline) is
  allowed, and never one with command substitution or output redirection to a file;
  *deny* and *ask* rules match if any part matches. Deny rules on commands are a
  guard rail, not a sandbox (``bash -c``, ``eval`` and friends can hide a command).
- a path (tools with a ``path`` argument): a glob relative to the workspace (``src/**``,
  ``*.py`` matches at any depth, like ``.gitignore``); a pattern starting with ``/`` is
  matched against the absolute path. Both the path as written and its real location
  (symlinks resolved) are considered: *allow* needs both to match, *deny*/*ask* either.
- other tools have no subject: a rule with a specifier never matches them.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent_tui.core.permission import Ruling, Verdict
from agent_tui.core.tool import Tool


class PermissionMode(StrEnum):
    ASK = "ask"
    ACCEPT_EDITS = "accept-edits"
    AUTO = "auto"


class InvalidRule(ValueError):
    """A permission rule that cannot be parsed; the message says what is wrong."""


class SubjectKind(StrEnum):
    COMMAND = "command"
    PATH = "path"
    NONE = "none"


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


#: Workspace files whose edit grants more than an edit: the project's settings (its
#: rules and mode apply to the next session), MCP servers (commands agent-tui starts)
#: and git's folder (hooks, config aliases run code on the user's next git command).
#: ``accept-edits`` asks before writing them, so a model cannot widen its own powers.
PROTECTED_PATHS = (".agent-tui/**", ".mcp.json", ".git/**")


class Permissions:
    """The permission policy of a session (implements ``core.permission.PermissionPolicy``)."""

    # tools ``accept-edits`` lets through when their path is inside the workspace
    EDIT_TOOLS = frozenset({"write_file", "edit_file"})

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        mode: PermissionMode | str = PermissionMode.ASK,
        rules: PermissionRules | None = None,
        *,
        non_interactive: bool = False,
    ) -> None:
        try:
            self.mode = PermissionMode(mode)
        except ValueError:
            choices = ", ".join(m.value for m in PermissionMode)
            raise ValueError(f"unknown permission mode {mode!r} (use one of {choices})") from None
        self.rules = rules or PermissionRules()
        self.non_interactive = non_interactive
        self._root = os.path.abspath(workspace)
        self._real_root = os.path.realpath(self._root)
        self._session: list[Rule] = []

    # -- the policy -------------------------------------------------------------

    def check(self, tool: Tool, args: BaseModel) -> Ruling:
        ruling = self._decide(tool, args)
        if ruling.verdict is Verdict.ASK and self.non_interactive:
            reason = self._no_one_to_ask(tool, ruling)
            return Ruling(verdict=Verdict.DENY, rule=ruling.rule, reason=reason)
        return ruling

    def remember(self, tool: Tool, args: BaseModel) -> None:
        kind, subject = _subject(args)
        name = tool.name
        if kind is SubjectKind.COMMAND:
            rule = Rule(text=f"{name}({subject})", tool=name, specifier=subject, exact=True)
        elif kind is SubjectKind.PATH:
            real = self._forms(subject)[-1][1]
            rule = Rule(text=f"{name}({real})", tool=name, specifier=real, exact=True)
        else:
            rule = Rule(text=name, tool=name, exact=True)
        if rule not in self._session:
            self._session.append(rule)

    @property
    def session_rules(self) -> list[Rule]:
        return list(self._session)

    # -- deciding ---------------------------------------------------------------

    def _decide(self, tool: Tool, args: BaseModel) -> Ruling:
        kind, subject = _subject(args)
        for rule in self.rules.deny:
            if self._matches(rule, tool.name, kind, subject, broad=True):
                return Ruling(
                    verdict=Verdict.DENY,
                    rule=f"deny:{rule.text}",
                    reason=f"denied by rule {rule.text}",
                )
        for rule in self._session:
            if self._matches(rule, tool.name, kind, subject, broad=False):
                return Ruling(
                    verdict=Verdict.ALLOW,
                    rule=f"session:{rule.text}",
                    reason="allowed for this session",
                )
        for rule in self.rules.ask:
            if self._matches(rule, tool.name, kind, subject, broad=True):
                return Ruling(
                    verdict=Verdict.ASK, rule=f"ask:{rule.text}", reason=f"rule {rule.text} asks"
                )
        allowed = self._allowed(tool.name, kind, subject)
        if allowed is not None:
            return Ruling(
                verdict=Verdict.ALLOW, rule=f"allow:{allowed}", reason=f"allowed by rule {allowed}"
            )
        return self._by_mode(tool, args, kind, subject)

    def _by_mode(self, tool: Tool, args: BaseModel, kind: SubjectKind, subject: str) -> Ruling:
        rule = f"mode:{self.mode.value}"
        if self.mode is PermissionMode.AUTO:
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="auto mode allows all")
        if tool.is_read_only(args):
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="read-only")
        if tool.runs_sandboxed(args):  # deny and ask rules were checked before
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="runs in the sandbox")
        if (
            self.mode is PermissionMode.ACCEPT_EDITS
            and tool.name in self.EDIT_TOOLS
            and kind is SubjectKind.PATH
            and self._inside(subject)
        ):
            protected = self._protected(subject)
            if protected is None:
                return Ruling(
                    verdict=Verdict.ALLOW, rule=rule, reason="file edit inside the workspace"
                )
            return Ruling(
                verdict=Verdict.ASK,
                rule=rule,
                reason=f"{tool.name} edits {protected}, which can widen what the agent may do",
            )
        if kind is SubjectKind.PATH:
            inside = self.mode is not PermissionMode.ACCEPT_EDITS or self._inside(subject)
            what = "writes files" if inside else "writes outside the workspace"
        elif kind is SubjectKind.COMMAND:
            what = "runs a command"
        else:
            what = "may have side effects"
        return Ruling(verdict=Verdict.ASK, rule=rule, reason=f"{tool.name} {what}")

    def _no_one_to_ask(self, tool: Tool, ruling: Ruling) -> str:
        if ruling.rule and ruling.rule.startswith("ask:"):
            return (
                f"rule {ruling.rule[4:]} asks before {tool.name}, and there is no one to ask "
                "in print mode; denied (change the rule to allow it)"
            )
        return (
            f"permission mode {self.mode.value} denies {tool.name} in print mode "
            "(there is no one to ask); use --permission-mode accept-edits or auto, "
            "or an allow rule"
        )

    def _allowed(self, name: str, kind: SubjectKind, subject: str) -> str | None:
        """The text of the allow rule that lets this call through, if any."""
        rules = [r for r in self.rules.allow if r.matches_tool(name)]
        for rule in rules:
            if rule.specifier is None:
                return rule.text
        if kind is SubjectKind.COMMAND:
            return _allowed_command(rules, subject)
        if kind is SubjectKind.PATH:
            for rule in rules:
                if self._path_matches(rule, subject, broad=False):
                    return rule.text
        return None

    def _matches(
        self, rule: Rule, name: str, kind: SubjectKind, subject: str, *, broad: bool
    ) -> bool:
        if not rule.matches_tool(name):
            return False
        if rule.specifier is None:
            return True
        if kind is SubjectKind.COMMAND:
            if rule.exact:
                return subject.strip() == rule.specifier.strip()
            parts = [subject, *(_split_command(subject)[0])]
            return any(_command_matches(rule.specifier, part) for part in parts)
        if kind is SubjectKind.PATH:
            return self._path_matches(rule, subject, broad=broad)
        return False

    # -- paths ------------------------------------------------------------------

    def _forms(self, path: str) -> list[tuple[str | None, str]]:
        """(relative-or-None-if-outside, absolute) for the path as written and as it really is."""
        if "\0" in path:
            return [(None, path)]
        joined = os.path.join(self._root, path)
        lexical = os.path.normpath(joined)
        try:
            real = os.path.realpath(joined)
        except (OSError, ValueError):
            real = lexical
        return [(_rel(lexical, self._root), lexical), (_rel(real, self._real_root), real)]

    def _protected(self, path: str) -> str | None:
        """The protected pattern the path (as written or really) falls under, if any."""
        for pattern in PROTECTED_PATHS:
            regex = _glob_regex(pattern)
            if any(rel is not None and regex.fullmatch(rel) for rel, _ in self._forms(path)):
                return pattern.removesuffix("/**") + ("/" if pattern.endswith("/**") else "")
        return None

    def _inside(self, path: str) -> bool:
        return all(rel is not None for rel, _ in self._forms(path))

    def _path_matches(self, rule: Rule, path: str, *, broad: bool) -> bool:
        spec = rule.specifier or ""
        forms = self._forms(path)
        if rule.exact:
            return forms[-1][1] == spec
        regex = _glob_regex(spec)
        absolute = spec.startswith("/")
        hits = []
        for rel, abs_path in forms:
            target = abs_path if absolute else rel
            hits.append(target is not None and regex.fullmatch(target) is not None)
        return any(hits) if broad else all(hits)


# -- commands ---------------------------------------------------------------------


def _subject(args: BaseModel) -> tuple[SubjectKind, str]:
    command = getattr(args, "command", None)
    if isinstance(command, str):
        return SubjectKind.COMMAND, command
    path = getattr(args, "path", None)
    if isinstance(path, str):
        return SubjectKind.PATH, path
    return SubjectKind.NONE, ""


def _command_matches(spec: str, command: str) -> bool:
    command = command.strip()
    if spec.endswith(":*"):
        prefix = spec[:-2].strip()
        if not prefix:
            return True
        return command == prefix or (command.startswith(prefix) and command[len(prefix)].isspace())
    return command == spec.strip()


def _allowed_command(rules: list[Rule], command: str) -> str | None:
    for rule in rules:  # the user listed exactly this command
        if rule.specifier is not None and not rule.specifier.endswith(":*"):
            if command.strip() == rule.specifier.strip():
                return rule.text
    parts, risky = _split_command(command)
    if risky or not parts:
        return None
    used: list[str] = []
    for part in parts:
        rule = next((r for r in rules if r.specifier and _command_matches(r.specifier, part)), None)
        if rule is None:
            return None
        if rule.text not in used:
            used.append(rule.text)
    return ", ".join(used)


_SAFE_REDIRECT = re.compile(r"\d*>(?:&\d+|\s*/dev/null)(?=[\s;&|)]|$)")


def _split_command(command: str) -> tuple[list[str], bool]:
    """Split a shell command at unquoted ``; && || | & newline``.

    Returns the parts and whether the command does something an allow-prefix rule
    cannot vouch for: command or process substitution, or redirecting output to a
    file. Conservative: when unsure, risky.
    """
    parts: list[str] = []
    risky = False
    buf: list[str] = []
    quote: str | None = None
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote == "'":
            buf.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            buf.append(command[i : i + 2])
            i += 2
            continue
        if quote == '"':
            if c == "`" or command.startswith("$(", i):
                risky = True
            buf.append(c)
            if c == '"':
                quote = None
            i += 1
            continue
        if c in "'\"":
            quote = c
            buf.append(c)
            i += 1
            continue
        if c == "`" or command.startswith(("$(", "<(", ">("), i):
            risky = True
        if c == ">":
            start = i
            while start > 0 and command[start - 1].isdigit():
                start -= 1
            if not _SAFE_REDIRECT.match(command, start):
                risky = True
        if command.startswith(("&&", "||"), i):
            parts.append("".join(buf))
            buf = []
            i += 2
            continue
        if c in ";|&\n" and not (c == "&" and i > 0 and command[i - 1] == ">"):
            parts.append("".join(buf))
            buf = []
            i += 1
            continue
        buf.append(c)
        i += 1
    if quote is not None:
        risky = True  # unterminated quote: the shell will reject or read more
    parts.append("".join(buf))
    return [p.strip() for p in parts if p.strip()], risky


# -- path globs -------------------------------------------------------------------


def _rel(path: str, root: str) -> str | None:
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob: ``**`` spans directories, ``*``/``?``/``[...]`` stay in one.

    ``src/`` means ``src/**``; a pattern without ``/`` matches at any depth.
    """
    absolute = pattern.startswith("/")
    body = pattern.strip("/")
    if pattern.endswith("/") and body:
        body += "/**"
    comps = body.split("/")
    out: list[str] = ["/"] if absolute else []
    if not absolute and len(comps) == 1 and comps[0] != "**":
        out.append("(?:.*/)?")  # like .gitignore: a bare name matches in any directory
    skip_sep = True  # no separator before the first component
    for idx, comp in enumerate(comps):
        if comp == "**" and len(comps) > 1:
            if idx == 0:
                out.append("(?:.*/)?")  # zero or more leading directories
                skip_sep = True
            else:
                out.append("(?:/.*)?")  # the directory itself or anything below it
                skip_sep = False
            continue
        if not skip_sep:
            out.append("/")
        skip_sep = False
        out.append(".*" if comp == "**" else _component_regex(comp))
    try:
        return re.compile("".join(out))
    except re.error:  # a bracket expression Python cannot read: match literally
        return re.compile(re.escape(pattern))


def _component_regex(comp: str) -> str:
    out: list[str] = []
    i, n = 0, len(comp)
    while i < n:
        c = comp[i]
        if c == "*":
            out.append("[^/]*")
            while i + 1 < n and comp[i + 1] == "*":
                i += 1
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            first = i + 2 if comp.startswith(("[!", "[^"), i) else i + 1
            end = comp.find("]", first + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                inner = comp[i + 1 : end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
