"""Splitting a shell command line into the commands it runs, for permission rules.

Not a shell parser: it knows quotes, backslashes and the separators ``;``, ``&&``,
``||``, ``|``, ``&`` and newline, and it flags what an allow rule cannot vouch for
(command or process substitution, output redirected to a file). When unsure, it says
risky.
"""

from __future__ import annotations

import re

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
