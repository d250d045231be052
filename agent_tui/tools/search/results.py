"""A search's findings worded for the model, within its caps, and the caps said.

The first line is always a headline (``Found 12 matches in 3 files``, ``No files
match``): the tools pane shows it as the call's outcome. Paths are relative to the
workspace. What a cap left out is said at the end, with what to do about it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_tui.tools.search.query import SearchMode
from agent_tui.tools.search.wire import FileHits

MAX_CHARS = 30_000  # the whole result, whatever head_limit says


@dataclass
class Caps:
    head_limit: int  # entries (files, counts) or lines (content) shown
    explicit: bool  # the model gave head_limit (else it is the default)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def headline(mode: SearchMode, files: list[FileHits], *, partial: bool) -> str:
    at_least = "at least " if partial else ""
    if not files:
        return "No files found" if mode is SearchMode.FILES else "No matches found"
    if mode in (SearchMode.FILES, SearchMode.FILES_WITH_MATCHES):
        return f"Found {at_least}{_plural(len(files), 'file')}"
    matches = sum(f.count for f in files)
    return f"Found {at_least}{_plural(matches, 'matching line')} in {_plural(len(files), 'file')}"


def _entries(mode: SearchMode, files: list[FileHits], prefix: str) -> list[str]:
    if mode in (SearchMode.FILES, SearchMode.FILES_WITH_MATCHES):
        return [prefix + f.path for f in files]
    if mode is SearchMode.COUNT:
        return [f"{prefix}{f.path}:{f.count}" for f in files]
    lines: list[str] = []
    for hits in files:
        path, last = prefix + hits.path, None
        if lines:
            lines.append("--")
        for line in hits.lines:
            if last is not None and line.number > last + 1:
                lines.append("--")
            sep = ":" if line.match else "-"
            lines.append(f"{path}{sep}{line.number}{sep}{line.text}")
            last = line.number
    return lines


def word_findings(
    mode: SearchMode,
    files: list[FileHits],
    *,
    prefix: str,
    caps: Caps,
    notes: list[str],
    partial: bool = False,
) -> str:
    """The result text: headline, entries within the caps, then what was left out."""
    entries = _entries(mode, files, prefix)
    shown: list[str] = []
    size = 0
    cut_by = ""
    for entry in entries:
        if len(shown) >= caps.head_limit:
            cut_by = "head_limit" if caps.explicit else "the default limit"
            break
        if size + len(entry) + 1 > MAX_CHARS and shown:
            cut_by = f"the {MAX_CHARS:,}-character output cap"
            break
        shown.append(entry)
        size += len(entry) + 1
    out = [headline(mode, files, partial=partial), *shown]
    if cut_by:
        unit = "lines" if mode is SearchMode.CONTENT else "entries"
        out.append(
            f"[Showing {len(shown):,} of {len(entries):,} {unit} ({cut_by}). Narrow the "
            "search with path or glob, or a more specific pattern"
            + ("" if mode is SearchMode.FILES else ", or raise head_limit")
            + ".]"
        )
    out += notes
    return "\n".join(out)
