"""Splitting a shell command line into the commands it runs, for permission rules.

Not a shell parser: it knows quotes, backslashes and the separators ``;``, ``&&``,
``||``, ``|``, ``&`` and newline, and it flags what an allow rule cannot vouch for
(command or process substitution, output redirected to a file). When unsure, it says
risky. :func:`command_forms` gives what one part may really run, for deny rules.
"""

from __future__ import annotations

import re
import shlex

_SAFE_REDIRECT = re.compile(r"\d*>(?:&\d+|\s*/dev/null)(?=[\s;&|)]|$)")


def split_command(command: str) -> tuple[list[str], bool]:
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


#: Commands that run the command after them (their options skipped).
_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time",
                       "nice", "ionice", "stdbuf", "setsid", "timeout", "xargs"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")


def command_forms(part: str, depth: int = 0) -> list[str]:
    """The commands one part of a command line may really run, for deny and ask rules
    (never for allow): the part itself, then without leading variable assignments and
    wrappers (``sudo``, ``env``, ``nohup``, ``timeout 5``...), with the command's
    folder dropped (``/bin/rm`` is ``rm``, ``\\rm`` too), and what ``bash -c '...'``
    runs. A guard rail, not a parser: ``eval`` or a script still hides a command."""
    forms = [part]
    words = part.split()
    changed = True
    while words and changed:
        changed = False
        if _ASSIGNMENT.fullmatch(words[0]):
            words, changed = words[1:], True
            continue
        head = words[0].lstrip("\\").strip("'\"").rsplit("/", 1)[-1]
        if head != words[0]:
            words, changed = [head, *words[1:]], True
            continue
        if head in _WRAPPERS:
            rest = words[1:]
            while rest and (rest[0].startswith("-") or _ASSIGNMENT.fullmatch(rest[0])
                            or (head == "timeout" and rest[0][:1].isdigit())):
                rest = rest[1:]
            words, changed = rest, True
    plain = " ".join(words)
    if plain and plain not in forms:
        forms.append(plain)
    if depth < 3 and len(words) >= 3 and words[0] in _SHELLS and words[1] == "-c":
        script = plain.split(None, 2)[2]
        try:
            inner = shlex.split(script)[0] if script[:1] in "'\"" else script
        except ValueError:
            inner = script.strip("'\"")
        for sub in split_command(inner)[0]:
            forms += [f for f in command_forms(sub, depth + 1) if f not in forms]
    return forms
