"""The search without ripgrep: ``python -m agent_tui.tools.search.fallback QUERY_JSON``.

Run in a child process under the process runner, like ripgrep, and prints ripgrep's
output formats (:mod:`.wire`), so the tools read either the same way. What it keeps
of ripgrep's rules:

- ignore files: ``.gitignore``, ``.ignore`` and ``.rgignore`` of every folder walked
  and of its parents inside the workspace (``Query.levels_up`` of them), and
  ``.git/info/exclude`` beside a ``.git`` folder, read with ``pathspec`` (git's own
  matching rules; a later, deeper file overrides an earlier one);
- ``.git`` is never walked; hidden files are; symbolic links are not followed;
- binary files (a NUL byte anywhere) are skipped;
- globs (:class:`~.query.GlobFilter`): an exclude drops files and whole folders, an
  include keeps only the files it matches (never an ignored one);
- exit status 0 when something matched, 1 when nothing did, 2 on a bad pattern.

Matching is Python's ``re``, line by line, on text decoded as UTF-8 (bytes that are
not UTF-8 match nothing but themselves).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pathspec

from agent_tui.tools.search.query import GlobFilter, Query, SearchMode
from agent_tui.tools.search.wire import json_record

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # later ones win, as in ripgrep
READ_CHUNK = 1 << 16


class _Ignores:
    """The ignore specs that apply in one folder, outermost first."""

    def __init__(self, specs: tuple[tuple[str, str, pathspec.GitIgnoreSpec], ...] = ()) -> None:
        # (folder relative to the walk's start, the start relative to that folder
        # for a parent folder's file, spec)
        self.specs = specs

    def below(self, folder: Path, rel: str, prefix: str = "") -> _Ignores:
        lines: list[str] = []
        for name in IGNORE_FILES:
            lines += _read_lines(folder / name)
        if (folder / ".git").is_dir():
            lines = _read_lines(folder / ".git" / "info" / "exclude") + lines
        if not lines:
            return self
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return _Ignores((*self.specs, (rel, prefix, spec)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        for base, prefix, spec in reversed(self.specs):  # the deepest file decides
            if base == "":
                sub = rel
            elif rel.startswith(base + "/"):
                sub = rel[len(base) + 1 :]
            else:
                continue
            sub = f"{prefix}/{sub}" if prefix else sub
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                return result.include
        return False


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _parents_ignores(start: Path, levels_up: int) -> _Ignores:
    """The ignore files of the folders above the start, inside the workspace."""
    ignores = _Ignores()
    for folder in reversed(start.parents[: min(levels_up, len(start.parents))]):
        ignores = ignores.below(folder, "", prefix=os.path.relpath(start, folder))
    return ignores


def walk(query: Query, cwd: Path) -> Iterator[str]:
    """The files the query looks at, relative to ``cwd``, in a stable order."""
    globs = GlobFilter(query.globs)
    target = query.target
    start = cwd / target
    if not start.is_dir() or start.is_symlink():
        if target != "." and (start.is_file() or start.is_symlink()):
            yield target
        return
    ignores = _parents_ignores(start, query.levels_up)
    top = "" if target == "." else target.rstrip("/")
    stack: list[tuple[Path, str, _Ignores]] = [(start, top, ignores.below(start, top))]
    while stack:
        folder, rel, ignores = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.name == ".git" or entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if ignores.ignored(path, is_dir) or globs.excludes(path):
                continue
            if is_dir:
                stack.append((Path(entry.path), path, ignores.below(Path(entry.path), path)))
            elif entry.is_file(follow_symlinks=False) and globs.wants(path):
                yield path


def _read_text(path: Path) -> str | None:
    """The file as text, or None when it is binary or cannot be read."""
    try:
        with open(path, "rb") as fh:
            data = _read_all(fh)
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def _read_all(fh: BinaryIO) -> bytes:
    chunks = []
    while chunk := fh.read(READ_CHUNK):
        if b"\0" in chunk:
            return b"\0"
        chunks.append(chunk)
    return b"".join(chunks)


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def search(query: Query, cwd: Path, regex: re.Pattern[str], path: str, out: BinaryIO) -> bool:
    text = _read_text(cwd / path)
    if text is None:
        return False
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if regex.search(line.rstrip("\r\n"))]
    if not hits:
        return False
    raw_path = _encode(path)
    if query.mode is SearchMode.FILES_WITH_MATCHES:
        out.write(raw_path + b"\0")
    elif query.mode is SearchMode.COUNT:
        out.write(raw_path + b"\0" + str(len(hits)).encode() + b"\n")
    else:
        shown: dict[int, bool] = {}
        for i in hits:
            for j in range(max(0, i - query.context), min(len(lines), i + query.context + 1)):
                shown.setdefault(j, False)
            shown[i] = True
        for j in sorted(shown):
            kind = "match" if shown[j] else "context"
            out.write(json_record(kind, raw_path, j + 1, _encode(lines[j])))
    return True


def main(argv: list[str]) -> int:
    query = Query.from_json(argv[1])
    cwd = Path.cwd()
    out = sys.stdout.buffer
    regex = None
    if query.mode is not SearchMode.FILES:
        try:
            regex = re.compile(query.pattern, re.IGNORECASE if query.ignore_case else 0)
        except re.error as exc:
            print(f"regex parse error: {exc}", file=sys.stderr)
            return 2
    found = False
    for path in walk(query, cwd):
        if regex is None:
            out.write(_encode(path) + b"\0")
            found = True
        else:
            found = search(query, cwd, regex, path, out) or found
    out.flush()
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
