"""What one search asks for, in a form both back ends read, and its glob filter.

A :class:`Query` is built by the grep and glob tools and handed either to ripgrep
(as its command line, :mod:`.ripgrep`) or, as JSON, to the Python fallback running in
a child process (:mod:`.fallback`).

Globs (:class:`GlobFilter`) are matched by us, the same way for both back ends
(``permissions/globs.py``'s rules, brace lists expanded): ripgrep's own ``--glob``
would let an include glob override ``.gitignore``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import StrEnum

from agent_tui.permissions.globs import glob_regex


class SearchMode(StrEnum):
    """What a search reports. The first three are grep's ``output_mode``."""

    CONTENT = "content"  # matching lines: path:line:text
    FILES_WITH_MATCHES = "files_with_matches"  # the paths of files that match
    COUNT = "count"  # matching lines per file
    FILES = "files"  # every file (glob): no pattern is searched


@dataclass(frozen=True)
class Query:
    """One search, relative to the folder it runs in (its ``cwd``)."""

    mode: SearchMode
    pattern: str = ""  # a regular expression (not used in FILES mode)
    target: str = "."  # what to search, relative to the cwd: "." or one file
    globs: tuple[str, ...] = ()  # include globs; a leading "!" excludes
    ignore_case: bool = False
    context: int = 0  # lines before and after each match (CONTENT mode)
    # folders above the cwd, inside the workspace, whose ignore files apply (the
    # fallback reads them; ripgrep reads every parent's by itself)
    levels_up: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Query:
        data = json.loads(text)
        data["mode"] = SearchMode(data["mode"])
        data["globs"] = tuple(data.get("globs", ()))
        return cls(**data)


def expand_braces(pattern: str) -> list[str]:
    """``*.{ts,tsx}`` -> ``["*.ts", "*.tsx"]``: the brace lists ripgrep's globs accept.

    Nested braces expand too; an unmatched brace is kept literally.
    """
    start = pattern.find("{")
    if start == -1:
        return [pattern]
    depth = 0
    for end in range(start, len(pattern)):
        char = pattern[end]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                break
    else:
        return [pattern]
    options, depth, current = [], 0, ""
    for char in pattern[start + 1 : end]:
        if char == "," and depth == 0:
            options.append(current)
            current = ""
            continue
        depth += char == "{"
        depth -= char == "}"
        current += char
    options.append(current)
    if len(options) == 1:  # "{x}" is not a list: keep it as written, expand the rest
        head = pattern[: end + 1]
        return [head + rest for rest in expand_braces(pattern[end + 1 :])]
    out: list[str] = []
    for option in options:
        out.extend(expand_braces(pattern[:start] + option + pattern[end + 1 :]))
    return out


class GlobFilter:
    """Include and exclude (``!``) globs, matched against paths relative to the cwd.

    A file is wanted when no exclude glob matches it or one of its folders, and some
    include glob matches it (or none was given).
    """

    def __init__(self, globs: tuple[str, ...]) -> None:
        self.include = [glob_regex(p) for g in globs if not g.startswith("!")
                        for p in expand_braces(g)]
        self.exclude = [glob_regex(p) for g in globs if g.startswith("!")
                        for p in expand_braces(g[1:])]

    def excludes(self, rel: str) -> bool:
        return any(r.fullmatch(rel) for r in self.exclude)

    def wants(self, rel: str) -> bool:
        parts = rel.split("/")
        if any(self.excludes("/".join(parts[:i])) for i in range(1, len(parts) + 1)):
            return False
        return not self.include or any(r.fullmatch(rel) for r in self.include)
