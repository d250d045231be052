"""Judging ``Bash(...)`` rules on a parsed command (:mod:`.shell_parse`).

- A **deny** or **ask** rule matches when any simple command anywhere in the tree
  matches it: written anywhere (pipelines, lists, subshells, groups, ``if``/``for``/
  ``while``/``case`` bodies, ``$()``, backticks, ``<()``, function bodies) or run
  through another (wrappers, ``bash -c``, ``eval``, a shell fed a here-document),
  after quote removal, with or without the program's folder (``/bin/rm`` is ``rm``).
- An **allow** rule vouches only for a certain parse (no doubts) whose every simple
  command, the ones run through others included, is allowed by some allow rule, and
  none of which writes a file through a redirection (``> file``; ``> /dev/null`` and
  ``2>&1`` write none).

Specifiers read as Claude Code's: ``npm run test:*`` a prefix of whole words,
``git *`` / ``* --version`` a wildcard over the words joined by single spaces,
anything else the exact words.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from agent_tui.permissions.rules import Rule, command_matches, is_pattern
from agent_tui.permissions.shell_model import ParsedCommand, SimpleCommand
from agent_tui.permissions.shell_parse import parse_command
from agent_tui.permissions.shell_quotes import unquoted


def forms(command: SimpleCommand) -> list[str]:
    """The spellings a deny or ask rule is matched against: the words, the words
    with the program's folder dropped, and the command as written."""
    found = [" ".join(command.argv)] if command.words else []
    if command.words and command.program != command.words[0].text:
        found.append(" ".join((command.program, *command.argv[1:])))
    if command.source and command.source not in found:
        found.append(command.source)
    return found


def first_match(rules: Iterable[Rule], parsed: ParsedCommand) -> Rule | None:
    """The first deny or ask rule any simple command of ``parsed`` matches."""
    rules = [r for r in rules if r.specifier is not None]
    if not rules:
        return None
    spellings = [f for command in parsed.every() for f in forms(command)]
    for rule in rules:
        spec = rule.specifier or ""
        if any(command_matches(spec, form) for form in spellings):
            return rule
    return None


def allowed_by(rules: Iterable[Rule], parsed: ParsedCommand) -> list[Rule] | None:
    """The allow rules that together vouch for every simple command of ``parsed``,
    or None when they do not (see the module's docstring)."""
    rules = [r for r in rules if r.specifier is not None]
    if not parsed.certain or not parsed.commands:
        return None
    used: list[Rule] = []
    for command in parsed.every():
        if any(r.writes_file for r in command.redirects):
            return None
        if not command.words:
            continue  # a lone redirection that writes nothing (`< file`, `2>&1`)
        rule = next((r for r in rules if words_match(r.specifier or "", command.argv)), None)
        if rule is None:
            return None
        if rule not in used:
            used.append(rule)
    return used


def words_match(spec: str, argv: tuple[str, ...]) -> bool:
    """Whether an allow specifier matches one simple command's words.

    A prefix or an exact specifier compares whole words, so a word holding a blank
    (``'ls x'``) or a Unicode space never passes for two."""
    if not argv:
        return False
    if spec.endswith(":*"):
        prefix = spec_words(spec[:-2])
        return argv[: len(prefix)] == prefix
    if is_pattern(spec):
        if _blank(argv[0]):
            return False  # a program named "git status" is not git's status
        return command_matches(spec, " ".join(argv))
    return argv == spec_words(spec)


@lru_cache(maxsize=256)
def spec_words(spec: str) -> tuple[str, ...]:
    """A specifier's words as the shell reads them (``git commit -m "wip"`` is four),
    or split at blanks when it is not one plain command."""
    parsed = parse_command(spec)
    if parsed.certain and len(parsed.commands) == 1:
        return parsed.commands[0].argv
    return tuple(unquoted(word)[0] for word in spec.replace("\t", " ").split(" ") if word)


def _blank(word: str) -> bool:
    return any(c.isspace() for c in word)
