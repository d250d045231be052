"""What the policy decides of a command beyond its ``Bash(...)`` rules.

- :func:`file_ruling`: ``Read(...)`` and ``Edit(...)`` deny rules bind commands too
  (:mod:`.command_paths`): a command that names a denied file is refused; one whose
  file names are only known when it runs (``cat $f``) is asked about.
- :func:`doubt_ruling`: a command the parse cannot vouch for, where deny or ask rules
  guard commands, is asked about rather than run by a mode (``auto``, the sandbox):
  the judge cannot tell whether the rule applies.
- :func:`reads_only`: a read-only command (:func:`.read_only.is_read_only`) that reads
  nothing outside the workspace runs without a rule, as in Claude Code.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Protocol

from agent_tui.core.calls.permission import Ruling
from agent_tui.permissions.command_paths import expand, named_files, recursive_folders
from agent_tui.permissions.read_only import is_read_only, outside_candidates
from agent_tui.permissions.rules import PermissionRules, Rule
from agent_tui.permissions.shell_model import ParsedCommand, Word
from agent_tui.protocol import Verdict
from agent_tui.protocol.tool_names import FileAccess, access_guard, shell_tool

#: How many files a recursive reader's folders are searched for a denied one.
MAX_WALK = 20_000


class PathPolicy(Protocol):
    """What the guard needs of the policy: its rules, its root and its path judge."""

    rules: PermissionRules

    @property
    def root(self) -> str: ...

    def path_rule_matches(self, rule: Rule, path: str) -> bool: ...

    def is_inside(self, path: str) -> bool: ...


def file_ruling(policy: PathPolicy, parsed: ParsedCommand) -> Ruling | None:
    """A deny (a named file is denied) or an ask (a file name is unknown), or None."""
    reading = _deny_rules(policy, access_guard(FileAccess.READS))
    editing = _deny_rules(policy, access_guard(FileAccess.EDITS))
    if not reading and not editing:
        return None
    named = named_files(parsed)
    folders = [policy.root]
    unknown = [w.text for w in named.folders if not w.static]
    folders += [os.path.join(policy.root, os.path.expanduser(w.text))
                for w in named.folders if w.static]
    checks = [(named.reads, reading, "reads"), (named.writes, editing, "writes")]
    for words, rules, verb in checks:
        unknown += [w.text for w in words if rules and not w.static]
        for path in _paths([w for w in words if w.static], folders) if rules else ():
            rule = next((r for r in rules if policy.path_rule_matches(r, path)), None)
            if rule is not None:
                return _refused(rule, f"the command {verb} {path}")
    if reading:
        for folder, skips_hidden in recursive_folders(parsed, folders):
            rule, complete = _denied_below(policy, reading, folder, skips_hidden)
            if rule is not None:
                return _refused(rule, f"the command searches {folder}, which holds a file "
                                "that rule denies (the grep tool leaves such files out)")
            if not complete:
                unknown.append(folder)
    if unknown:
        return Ruling(verdict=Verdict.ASK, rule=f"deny:{(reading or editing)[0].text}",
                      reason=f"cannot tell which files the command reads or writes "
                      f"({', '.join(unknown[:3])}); deny rules on files apply")
    return None


def doubt_ruling(policy: PathPolicy, parsed: ParsedCommand) -> Ruling | None:
    """An ask for a command the parse cannot vouch for, when rules guard commands."""
    if parsed.certain:
        return None
    guards = [r for r in (*policy.rules.deny, *policy.rules.ask)
              if r.specifier is not None and r.matches_tool(shell_tool())]
    guards += (_deny_rules(policy, access_guard(FileAccess.READS))
               + _deny_rules(policy, access_guard(FileAccess.EDITS)))
    if not guards:
        return None
    return Ruling(verdict=Verdict.ASK, rule=f"unsure:{guards[0].text}",
                  reason=f"cannot tell whether rule {guards[0].text} applies: "
                  f"{parsed.doubts[0]}")


def reads_only(policy: PathPolicy, parsed: ParsedCommand) -> bool:
    """Whether a command only reads, and only inside the workspace."""
    if not is_read_only(parsed):
        return False
    return all(text and policy.is_inside(os.path.expanduser(text))
               for text in outside_candidates(parsed))


def _deny_rules(policy: PathPolicy, tool: str) -> list[Rule]:
    return [r for r in policy.rules.deny if r.specifier is not None and r.matches_tool(tool)]


def _refused(rule: Rule, what: str) -> Ruling:
    return Ruling(verdict=Verdict.DENY, rule=f"deny:{rule.text}",
                  reason=f"denied by rule {rule.text}: {what}")


def _paths(words: list[Word], folders: list[str]) -> Iterator[str]:
    for word in words:
        for folder in folders:
            for path in expand(word, folder):
                yield os.path.normpath(os.path.join(folder, path))


def _denied_below(policy: PathPolicy, rules: list[Rule], folder: str,
                  skips_hidden: bool) -> tuple[Rule | None, bool]:
    """The rule denying a file below ``folder`` the search would read (and whether the
    walk was complete)."""
    seen = 0
    skip_git = not any(".git" in r.text for r in rules)  # its objects are many, and unreadable
    for top, dirs, files in os.walk(folder):
        if skip_git or skips_hidden:
            dirs[:] = [d for d in dirs if d != ".git" and not (skips_hidden and d[:1] == ".")]
        for name in (*files, *dirs):
            if skips_hidden and name[:1] == ".":
                continue
            seen += 1
            if seen > MAX_WALK:
                return None, False
            path = os.path.join(top, name)
            rule = next((r for r in rules if policy.path_rule_matches(r, path)), None)
            if rule is not None:
                return rule, True
    return None, True
