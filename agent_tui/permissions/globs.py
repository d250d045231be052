"""Path globs of permission rules, compiled to regular expressions.

``**`` spans folders, ``*``, ``?`` and ``[...]`` stay within one; ``src/`` means
``src/**``; a pattern without ``/`` matches at any depth, like ``.gitignore``; a
pattern starting with ``/`` is matched against the absolute path. A bracket
expression Python cannot read is matched literally rather than refused.
"""

from __future__ import annotations

import re
from functools import lru_cache


def relative(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (``.`` for the root itself), None if outside."""
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


@lru_cache(maxsize=256)
def glob_regex(pattern: str, *, anchored: bool = False) -> re.Pattern[str]:
    """Compile a path glob: ``**`` spans directories, ``*``/``?``/``[...]`` stay in one.

    ``src/`` means ``src/**``; a pattern without ``/`` matches at any depth, unless
    ``anchored`` (a pattern relative to its root, matched against a relative path).
    """
    absolute = pattern.startswith("/")
    body = pattern.strip("/")
    if pattern.endswith("/") and body:
        body += "/**"
    comps = body.split("/")
    out: list[str] = ["/"] if absolute else []
    if not absolute and not anchored and len(comps) == 1 and comps[0] != "**":
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
