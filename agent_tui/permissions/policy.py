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
   (but the agent's own guard files, which ask before any allow rule in every mode
   but ``auto``: ``guard_files.py``), ``auto`` allows everything,
   ``dont-ask`` decides as ``ask`` does. A ``Task`` (a sub-agent, whose own calls are
   each decided here) is allowed in every mode but ``plan``, as Claude Code runs it.

In ``dont-ask`` mode (Claude Code's ``dontAsk``) nobody is ever asked, and in print
mode (``non_interactive=True``) nobody can answer: there "ask" becomes "deny", with a
reason that says why and which rule would allow the call.

Rule syntax (``rules.py``) is Claude Code's: ``TOOL`` or ``TOOL(SPECIFIER)``, ``TOOL`` in
Claude Code's names (``Bash``, ``Read``, ``Edit``, ``mcp__server``...) or ours. Rules,
reasons and remembered rules are shown in Claude Code's names. The specifier is
matched against the call's subject:

- a command (tools with a ``command`` argument, i.e. ``bash``), parsed with bash's
  grammar (``shell_parse.py``) and judged on the parse (``command_judge.py``):
  ``git status:*`` is a prefix of whole words (``git status``, ``git status -s``, not
  ``git statusx``), ``git diff *`` a wildcard; without either the command must be
  exactly that. An *allow* rule vouches only for a certain parse whose every simple
  command (wherever it stands, and what runs through wrappers) is allowed, with no
  redirection writing a file; *deny* and *ask* rules match if any simple command
  anywhere matches, after quote removal, through wrappers, ``bash -c`` and ``eval``.
  ``Read``/``Edit`` deny rules bind the commands that name a denied file
  (``command_guard.py``); a command the parse cannot vouch for is asked about where
  any of these rules guard commands. A read-only command (``read_only.py``) that reads
  only inside the workspace runs without a rule in ``ask``, ``accept-edits`` and
  ``dont-ask``, as in Claude Code.
- a path (tools with a ``path`` argument; Glob and Grep without one search the
  workspace): a gitignore-style glob rooted as Claude Code roots it (``rule_paths.py``:
  ``//`` the filesystem, ``~/`` home, ``/`` the settings file's root, else the
  workspace; ``*.py`` matches at any depth). ``Read`` rules govern Glob and Grep by the
  folder they search, and a *deny* ``Read`` rule also keeps each file it names out of
  what a search finds (:meth:`Permissions.read_denied`). Both the path as written
  and its real location (symlinks resolved) are considered: *allow* needs both to
  match, *deny*/*ask* either.
- a domain (tools with a ``url`` argument, i.e. ``web_fetch``): ``domain:example.com``
  matches that host, ``domain:*.example.com`` its subdomains (a glob on the host).
  "Allow for this session" remembers the host.
- a name: the sub-agent type a ``Task`` starts (``Task(code-reviewer)``), the skill a
  ``Skill`` loads (``Skill(pdf)``, ``Skill(acme:*)``: :func:`rules.name_matches`).
- other tools have no subject: a rule with a specifier never matches them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from agent_tui.core.calls.permission import Ruling
from agent_tui.protocol import PermissionMode, Verdict
from agent_tui.core.calls.tool import AnyTool
from agent_tui.permissions.guard_files import guard_ruling, no_one_to_ask as guard_denial
from agent_tui.permissions.globs import glob_regex, relative
from agent_tui.permissions.plan import planning
from agent_tui.permissions.rule_paths import parse_path_spec
from agent_tui.permissions.rules import (
    DOMAIN_PREFIX,
    InvalidRule,
    PermissionRules,
    Rule,
    domain_matches,
    is_pattern,
    name_matches,
    rule_subject,
)
from agent_tui.protocol.tool_names import (
    FileAccess,
    RuleSubject,
    access_guard,
    claude_name,
    facts,
)


class SubjectKind(StrEnum):
    COMMAND = "command"
    PATH = "path"
    DOMAIN = "domain"
    NAME = "name"  # the sub-agent a Task starts, the skill a Skill loads
    NONE = "none"



class Permissions:
    """The permission policy of a session (implements ``core.permission.PermissionPolicy``)."""

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        mode: PermissionMode | str = PermissionMode.ASK,
        rules: PermissionRules | None = None,
        *,
        non_interactive: bool = False,
        added_dirs: Sequence[Path] = (),
    ) -> None:
        self.mode = mode if isinstance(mode, PermissionMode) else PermissionMode.parse(mode)
        self.rules = rules or PermissionRules()
        self.non_interactive = non_interactive
        self._root = os.path.abspath(workspace)
        self._real_root = os.path.realpath(self._root)
        self._session: list[Rule] = []
        # Folders added to the workspace (AgentConfig.added_dirs, the same list: /add-dir
        # appends to it): accept-edits allows edits inside them as inside the workspace.
        # Rules with relative paths stay relative to the workspace.
        self.added_dirs = added_dirs

    # -- the policy -------------------------------------------------------------

    def matches_input(self, rule: Rule, name: str, tool_input: Mapping[str, Any]) -> bool:
        """Whether ``rule`` matches a call of tool ``name`` (ours) with ``tool_input``
        (our keys) as a deny or ask rule would: any part of a command, wrappers seen
        through (a hook's ``if`` condition: a guard runs whenever it may be at stake)."""
        kind, subject = _subject_of(name, tool_input,
                                    has_path=rule_subject(name) is RuleSubject.PATH)
        return self._matches(rule, name, kind, subject, broad=True)

    def set_mode(self, mode: PermissionMode) -> None:
        """Decide calls by ``mode`` from now on (session rules stay)."""
        self.mode = mode

    def check(self, tool: AnyTool, args: BaseModel) -> Ruling:
        if self.mode is not PermissionMode.PLAN and tool.leaves_plan:
            return Ruling(verdict=Verdict.ALLOW, rule="policy:not-planning",
                          reason="not in plan mode: nothing to approve")
        ruling = self._decide(tool, args)
        if self.mode is PermissionMode.PLAN:
            ruling = planning(tool, args, ruling)
        if ruling.verdict is Verdict.ASK and (self.non_interactive
                                               or self.mode is PermissionMode.DONT_ASK):
            reason = self._no_one_to_ask(tool, args, ruling)
            return Ruling(verdict=Verdict.DENY, rule=ruling.rule, reason=reason, unasked=True)
        return ruling

    def remember(self, tool: AnyTool, args: BaseModel) -> None:
        rule = self._call_rule(tool, args)
        if rule not in self._session:
            self._session.append(rule)

    def allow(self, rules: list[str]) -> None:
        """Allow rules the user chose at a prompt: from now on, as if read from settings
        (after deny and ask rules, so these still catch what they name)."""
        try:
            added = PermissionRules(allow=rules).allow
        except InvalidRule:
            return
        allow = [*self.rules.allow, *(r for r in added if r not in self.rules.allow)]
        self.rules = self.rules.model_copy(update={"allow": allow})

    def _call_rule(self, tool: AnyTool, args: BaseModel) -> Rule:
        """The exact rule for this call's shape: what "allow for this session" keeps."""
        kind, subject = _subject(tool, args)
        name = tool.name
        if kind is SubjectKind.COMMAND:
            return Rule.for_call(name, subject)
        if kind is SubjectKind.PATH:
            real = self._forms(subject)[-1][1]
            return Rule.for_call(name, real, shown="/" + real)  # "//": from the root
        if kind is SubjectKind.DOMAIN:
            return Rule.for_call(name, f"{DOMAIN_PREFIX}{subject}")
        if kind is SubjectKind.NAME:
            return Rule.for_call(name, subject)
        return Rule.for_call(name)

    @property
    def session_rules(self) -> list[Rule]:
        return list(self._session)

    def read_denied(self, path: str) -> str | None:
        """The deny rule that forbids reading ``path``, if any: for what a search finds
        (Glob, Grep), so a search of a folder never shows a file ``Read`` may not."""
        reads = access_guard(FileAccess.READS)
        for rule in self.rules.deny:
            if rule.specifier is not None and rule.matches_tool(reads):
                if self._path_matches(rule, path, broad=True):
                    return rule.text
        return None

    @property
    def denies_reads(self) -> bool:
        """Whether any deny rule names files to keep from reading."""
        reads = access_guard(FileAccess.READS)
        return any(r.specifier is not None and r.matches_tool(reads) for r in self.rules.deny)

    # -- what the command guard asks of the policy (command_guard.PathPolicy) ----

    @property
    def root(self) -> str:
        return self._root

    def path_rule_matches(self, rule: Rule, path: str) -> bool:
        return self._path_matches(rule, path, broad=True)

    def is_inside(self, path: str) -> bool:
        return self._inside(path)

    # -- deciding ---------------------------------------------------------------

    def _decide(self, tool: AnyTool, args: BaseModel) -> Ruling:
        from agent_tui.permissions.command_guard import doubt_ruling, file_ruling
        from agent_tui.permissions.shell_parse import parse_command  # a command's only, as its judges
        kind, subject = _subject(tool, args)
        files = None
        for rule in self.rules.deny:
            if self._matches(rule, tool.name, kind, subject, broad=True):
                return Ruling(
                    verdict=Verdict.DENY,
                    rule=f"deny:{rule.text}",
                    reason=f"denied by rule {rule.text}",
                )
        if kind is SubjectKind.PATH and tool.file_access is FileAccess.EDITS and (
                secret := self.read_denied(subject)):
            # an edit's answer ("not found", "occurs 3 times") would spell the file out
            return Ruling(verdict=Verdict.DENY, rule=f"deny:{secret}",
                          reason=f"denied by rule {secret}: a file that may not be read may "
                          "not be edited or written either")
        if kind is SubjectKind.COMMAND and (files := file_ruling(self, parse_command(subject))):
            if files.verdict is Verdict.DENY:
                return files
        for rule in self._session:
            if self._matches(rule, tool.name, kind, subject, broad=False):
                return Ruling(
                    verdict=Verdict.ALLOW,
                    rule=f"session:{rule.text}",
                    reason="allowed for this session",
                )
        if kind is SubjectKind.PATH:  # the agent's own guard files ask (guard_files.py)
            guard = guard_ruling(claude_name(tool.name), self.mode, not tool.is_read_only(args),
                                 [p for _, p in self._forms(subject)])
            if guard is not None:
                return guard
        for rule in self.rules.ask:
            if self._matches(rule, tool.name, kind, subject, broad=True):
                return Ruling(
                    verdict=Verdict.ASK, rule=f"ask:{rule.text}", reason=f"rule {rule.text} asks"
                )
        if kind is SubjectKind.COMMAND and files is not None:
            return files  # a file name only known when it runs, under a deny rule on files
        allowed = self._allowed(tool.name, kind, subject)
        if allowed is not None:
            return Ruling(
                verdict=Verdict.ALLOW, rule=f"allow:{allowed}", reason=f"allowed by rule {allowed}"
            )
        if kind is SubjectKind.COMMAND and (unsure := doubt_ruling(self, parse_command(subject))):
            return unsure
        return self._by_mode(tool, args, kind, subject)

    def _by_mode(self, tool: AnyTool, args: BaseModel, kind: SubjectKind, subject: str) -> Ruling:
        from agent_tui.permissions.command_guard import reads_only
        from agent_tui.permissions.shell_parse import parse_command  # a command's only, as its judges
        rule = f"mode:{self.mode.value}"
        if self.mode is PermissionMode.AUTO:
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="auto mode allows all")
        if tool.is_read_only(args):
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="read-only")
        if (kind is SubjectKind.COMMAND and self.mode is not PermissionMode.PLAN
                and reads_only(self, parse_command(subject))):
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="read-only command")
        if tool.starts_agents and self.mode is not PermissionMode.PLAN:
            # as Claude Code's Task: the sub-agent's own calls are each checked (plan mode
            # keeps asking; deny and ask rules were checked before)
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="sub-agent: its calls are checked")
        if tool.runs_sandboxed(args):  # deny and ask rules were checked before
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="runs in the sandbox")
        if (
            self.mode is PermissionMode.ACCEPT_EDITS
            and tool.file_access is FileAccess.EDITS
            and kind is SubjectKind.PATH
            and self._inside(subject)
        ):  # the guard files asked before (guard_files.py)
            return Ruling(verdict=Verdict.ALLOW, rule=rule, reason="file edit inside the workspace")
        if kind is SubjectKind.PATH:
            inside = self.mode is not PermissionMode.ACCEPT_EDITS or self._inside(subject)
            what = "writes files" if inside else "writes outside the workspace"
        elif kind is SubjectKind.COMMAND:
            what = "runs a command"
        elif kind is SubjectKind.DOMAIN:
            what = f"fetches from {subject}"
        else:
            what = tool.asks_because
        return Ruling(verdict=Verdict.ASK, rule=rule, reason=f"{claude_name(tool.name)} {what}")

    def _no_one_to_ask(self, tool: AnyTool, args: BaseModel, ruling: Ruling) -> str:
        """Why a call that would be asked is denied (the mode asks no one, or print mode
        has no one to ask), and what would allow it."""
        shown = claude_name(tool.name)
        dont_ask = self.mode is PermissionMode.DONT_ASK
        if ruling.rule and ruling.rule.startswith("guard:"):
            return guard_denial(ruling, "this session does not ask" if dont_ask
                                else "there is no one to ask in print mode")
        if ruling.rule and ruling.rule.startswith("ask:"):
            nobody = (f"this session does not ask (permission mode {self.mode.claude_name})"
                      if dont_ask else "there is no one to ask in print mode")
            return (f"rule {ruling.rule[4:]} asks before {shown}, and {nobody}; denied "
                    "(change the rule to allow it)")
        exact = self._call_rule(tool, args).text
        allow = f"an allow rule such as {exact}" if len(exact) <= 120 and "\n" not in exact \
            else f"an allow rule for {shown}"
        if dont_ask:
            return (f"permission mode {self.mode.claude_name} denies {shown} without asking "
                    f"(this session does not ask); {allow} would allow it")
        return (f"permission mode {self.mode.value} denies {shown} in print mode (there is no "
                f"one to ask); use --permission-mode accept-edits or auto, or {allow}")

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
        if kind is SubjectKind.DOMAIN:
            for rule in rules:
                if domain_matches(rule.specifier or "", subject):
                    return rule.text
        if kind is SubjectKind.NAME:
            for rule in rules:
                if name_matches(rule.specifier or "", subject):
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
            from agent_tui.permissions.command_judge import first_match
            from agent_tui.permissions.shell_parse import parse_command  # a command's only, as its judges
            return first_match([rule], parse_command(subject)) is not None
        if kind is SubjectKind.PATH:
            return self._path_matches(rule, subject, broad=broad)
        if kind is SubjectKind.DOMAIN:
            return domain_matches(rule.specifier, subject)
        if kind is SubjectKind.NAME:
            if rule.exact:
                return subject == rule.specifier
            return name_matches(rule.specifier, subject)
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
        return [(relative(lexical, self._root), lexical), (relative(real, self._real_root), real)]

    def _inside(self, path: str) -> bool:
        if all(rel is not None for rel, _ in self._forms(path)):
            return True
        if not os.path.isabs(path) or "\0" in path:
            return False
        real = _real(path)  # where it really lands (the roots are resolved)
        return any(relative(real, str(root)) is not None for root in self.added_dirs)

    def _path_matches(self, rule: Rule, path: str, *, broad: bool) -> bool:
        forms = self._forms(path)
        if rule.exact:
            return forms[-1][1] == rule.specifier
        spec = rule.path or parse_path_spec(rule.specifier or "", settings_root=None, legacy=False)
        regex = glob_regex(spec.pattern, anchored=spec.anchored)
        hits = []
        for base in spec.bases(self._root, broad=broad):
            real_base = _real(base)
            hit = []
            for (_rel, abs_path), root in zip(forms, (base, real_base)):
                rel = relative(abs_path, root)
                hit.append(rel is not None and regex.fullmatch(rel) is not None)
            hits.append(any(hit) if broad else all(hit))
        return any(hits)


# -- commands ---------------------------------------------------------------------


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def _subject(tool: AnyTool, args: BaseModel) -> tuple[SubjectKind, str]:
    return _subject_of(tool.name, args.model_dump(), has_path=hasattr(args, "path"))


def _subject_of(name: str, given: Mapping[str, Any], *, has_path: bool) -> tuple[SubjectKind, str]:
    command = given.get("command")
    if isinstance(command, str):
        return SubjectKind.COMMAND, command
    path = given.get("path")
    if isinstance(path, str):
        return SubjectKind.PATH, path
    if path is None and rule_subject(name) is RuleSubject.PATH and has_path:
        return SubjectKind.PATH, "."  # Glob and Grep without a path search the workspace
    url = given.get("url")
    if isinstance(url, str):
        return SubjectKind.DOMAIN, url_host(url) or ""
    named = given.get(key) if (key := _names_key(name)) else None
    if isinstance(named, str):
        return SubjectKind.NAME, named
    return SubjectKind.NONE, ""


def _names_key(name: str) -> str:
    """The input key naming what a call starts, for a tool whose rules name it
    (``Task(code-reviewer)``, ``Skill(pdf)``: its ``names_key``); empty for any other."""
    given = facts(name)
    return given.names_key if given is not None and given.rule_subject is RuleSubject.NAME else ""


def url_host(url: str) -> str | None:
    """The host a URL names, lower case, or None when it names none."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.lower().rstrip(".") if host else None


def _allowed_command(rules: list[Rule], command: str) -> str | None:
    for rule in rules:  # the user listed exactly this command
        if rule.specifier is not None and not is_pattern(rule.specifier):
            if command.strip() == rule.specifier.strip():
                return rule.text
    from agent_tui.permissions.command_judge import allowed_by
    from agent_tui.permissions.shell_parse import parse_command  # a command's only, as its judges
    used = allowed_by(rules, parse_command(command))
    return None if used is None else ", ".join(r.text for r in used)
