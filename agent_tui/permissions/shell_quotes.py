"""Quote removal for the words the grammar hands over: unquoted backslashes and
``$'...'`` strings (single and double quotes are read in :mod:`.shell_parse`)."""

from __future__ import annotations

import re

_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}"
                          r"|c.|.)", re.DOTALL)
#: Unquoted characters that make a word a pattern the shell may expand.
_PATTERN_CHARS = frozenset("*?[{")


def unquoted(text: str) -> tuple[str, bool]:
    """An unquoted word's text after backslash removal (``\\<newline>`` joins lines),
    and whether an unquoted glob, brace or leading ``~`` makes it a pattern."""
    out: list[str] = []
    pattern = text.startswith("~")
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if c in _PATTERN_CHARS:
            pattern = True
        out.append(c)
        i += 1
    return "".join(out), pattern


def ansi_c(body: str) -> str:
    """The text of ``$'body'``: bash's backslash escapes decoded."""
    return _ANSI_ESCAPE.sub(_decode, body)


def _decode(match: re.Match[str]) -> str:
    code = match[1]
    head = code[0]
    if head in "xuU":
        value = int(code[1:], 16)
        return chr(value) if value <= 0x10FFFF else ""
    if head.isdigit():
        return chr(int(code, 8) & 0xFF)
    if head == "c" and len(code) == 2:
        return chr(ord(code[1].upper()) ^ 0x40) if code[1] != "?" else "\x7f"
    return _SIMPLE_ESCAPES.get(code, "\\" + code)
