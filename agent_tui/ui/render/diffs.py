"""The change a call that edits or writes a file makes, as numbered diff lines.

Each line keeps its numbers in the old and the new file, so the change is shown where
it is (a change on line 2 is line 2), with one line of context on each side and the
words that changed inside a changed line marked (``diff_words.py``). Drawn by
``diff_view.py``: every line with its number and symbol (``+`` added, ``-`` removed, a
space for context), never by colour alone.

The diff is exact when the file is read while the call waits (the permission prompt
does, through ``files/preview.py``, as the ACP front end does): an edit (``edit_file``)
is then placed in its file, and a write (``write_file``) compared with what it replaces
(``Tool.file_change`` says which a tool's calls are). Without the file, an edit's old
and new text are compared by themselves (numbered from 1), and a write shows only its
new content's first lines, as such.

What a diff says of itself depends on when it is read (:class:`Tense`): "will write"
while the call waits, "Wrote" once it succeeded, "not written" when it did not run.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from agent_tui.protocol.tool_names import FileChange, facts_of
from agent_tui.ui.render.diff_words import changed_spans
from agent_tui.ui.render.safe_text import clean

MAX_LINES = 400  # diff lines kept; the rest are counted
FIRST_LINES = 20  # of a new file (or a write whose old content is not known)
UNFOLDED_UP_TO = 12  # diffs with this many lines or fewer show unfolded
CONTEXT = 1  # lines of context on each side of a change


class LineKind(StrEnum):
    ADDED = "+"
    REMOVED = "-"
    CONTEXT = " "
    HUNK = "@"  # a gap between two hunks (lines not shown)


class Tense(StrEnum):
    """When a diff is spoken of: before the call runs, after it did, or it never ran."""

    WILL = "will"
    DID = "did"
    DID_NOT = "did_not"


@dataclass(frozen=True)
class DiffLine:
    kind: LineKind
    text: str
    number: int | None = None  # in the new file (context, added) or the old (removed)
    changed: tuple[tuple[int, int], ...] = ()  # character spans of the words that changed


@dataclass(frozen=True)
class FileDiff:
    path: str
    lines: list[DiffLine] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    more: int = 0  # lines left out (past MAX_LINES, or of a new file past FIRST_LINES)
    new_file: bool = False
    content_only: bool = False  # the old content is not known: the new one's first lines

    @property
    def name(self) -> str:
        return Path(self.path).name or self.path

    @property
    def short(self) -> bool:
        return len(self.lines) <= UNFOLDED_UP_TO and not self.more


def _split(text: str) -> list[str]:
    return text.splitlines()


def unified(path: str, old: str, new: str, *, context: int = CONTEXT) -> FileDiff:
    """The numbered diff of two whole texts (``context`` lines each side of a change)."""
    old_lines, new_lines = _split(old), _split(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    lines: list[DiffLine] = []
    added = removed = 0
    groups = list(matcher.get_grouped_opcodes(context))
    for n, group in enumerate(groups):
        if n or group[0][1] > 0:  # lines before this hunk are not shown
            lines.append(DiffLine(LineKind.HUNK, "…"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [DiffLine(LineKind.CONTEXT, new_lines[j], j + 1) for j in range(j1, j2)]
                continue
            gone, come = old_lines[i1:i2], new_lines[j1:j2]
            pairs = changed_spans(gone, come) if tag == "replace" else ([()] * len(gone), [()] * len(come))
            lines += [DiffLine(LineKind.REMOVED, text, i1 + k + 1, pairs[0][k]) for k, text in enumerate(gone)]
            lines += [DiffLine(LineKind.ADDED, text, j1 + k + 1, pairs[1][k]) for k, text in enumerate(come)]
            removed += len(gone)
            added += len(come)
    if groups and groups[-1][-1][2] < len(old_lines):  # and lines after the last
        lines.append(DiffLine(LineKind.HUNK, "…"))
    more = max(0, len(lines) - MAX_LINES)
    return FileDiff(path, lines[:MAX_LINES], added, removed, more)


def new_content(path: str, content: str, *, new_file: bool) -> FileDiff:
    lines = _split(content)
    shown = [DiffLine(LineKind.ADDED, line, i + 1) for i, line in enumerate(lines[:FIRST_LINES])]
    return FileDiff(path, shown, added=len(lines), more=max(0, len(lines) - FIRST_LINES),
                    new_file=new_file, content_only=not new_file)


def shows_diff(name: str) -> bool:
    """Whether a call of the tool ``name`` changes a file, so it is shown as a diff."""
    return facts_of(name).file_change is not FileChange.NONE


def diff_for_call(name: str, args: dict[str, Any] | None, workspace: Path | None = None) -> FileDiff | None:
    """The diff of a call (``workspace``: read the file now, which is only right before
    the call runs: an edit is then placed in its file, a write compared with it)."""
    change = facts_of(name).file_change
    if change is FileChange.NONE or not isinstance(args, dict):
        return None
    path = args.get("path")
    if not isinstance(path, str):
        return None
    before = None
    if workspace is not None:
        from agent_tui.files.preview import preview  # not on the first frame's path

        # The file as the call will find it: the preview both front ends read.
        before = preview(name, args, workspace)
    if change is FileChange.EDIT:
        if before is not None and before.old is not None:
            return unified(path, before.old, before.new)
        old, new = args.get("old_string"), args.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return unified(path, old, new)
        return None
    content = args.get("content")
    if not isinstance(content, str):
        return None
    if before is None:  # not read, unreadable, not text, outside the workspace
        return new_content(path, content, new_file=False)
    if before.old is None:
        return new_content(path, content, new_file=True)
    return unified(path, before.old, content)


def _lines(n: int) -> str:
    return f"{n} line{'s' if n != 1 else ''}"


def _counts(diff: FileDiff, add: str, remove: str) -> str:
    parts = [f"{add} {_lines(diff.added)}"] if diff.added else []
    parts += [f"{remove} {_lines(diff.removed)}"] if diff.removed else []
    return ", ".join(parts)


def summary(diff: FileDiff, tense: Tense = Tense.DID) -> str:
    """What the change is, in the tense of the moment: "Added 1 line, removed 1 line"
    once done, "will add 1 line, remove 1 line" before; a new file "will create
    hello.txt (3 lines)" / "Created hello.txt (3 lines)"."""
    name = clean(diff.name)
    match tense:
        case Tense.DID_NOT:
            return f"{name} not changed"
        case Tense.WILL if diff.new_file:
            return f"will create {name} ({_lines(diff.added)})"
        case Tense.WILL if diff.content_only:
            return f"will write {_lines(diff.added)} to {name}"
        case Tense.WILL:
            return "will " + (_counts(diff, "add", "remove") or "change nothing")
        case Tense.DID if diff.new_file:
            return f"Created {name} ({_lines(diff.added)})"
        case Tense.DID if diff.content_only:
            return f"Wrote {_lines(diff.added)} to {name}"
        case Tense.DID:
            text = _counts(diff, "added", "removed") or "changed nothing"
            return text[:1].upper() + text[1:]


def tense_of(state: str) -> Tense:
    """The tense for a call in this tool state (``ToolState`` values)."""
    if state == "succeeded":
        return Tense.DID
    if state in ("streaming", "queued", "awaiting_approval", "running"):
        return Tense.WILL
    return Tense.DID_NOT

