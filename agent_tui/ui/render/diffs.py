"""The change an ``edit_file`` or ``write_file`` call makes, as a unified diff, and how
it is drawn: every line with its symbol (``+`` added, ``-`` removed, a space for
context), never by colour alone, the colour (and the syntax of the file's language)
only helping. Long diffs fold to a summary: "+12 −3 in app.py".

``edit_file``'s diff is exact: its input holds the old and the new text. A
``write_file``'s is exact when the file was read before the call ran (the permission
prompt reads it while the call waits, through ``files/preview.py``, as the ACP front
end does); otherwise only the new content is known, and its first lines are shown as
such.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from rich.style import Style
from rich.text import Text

from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.render.states import role_style

DIFF_TOOLS = ("edit_file", "write_file")
MAX_LINES = 400  # diff lines kept; the rest are counted
FIRST_LINES = 20  # of a new file (or a write whose old content is not known)
UNFOLDED_UP_TO = 12  # diffs with this many lines or fewer show unfolded


class LineKind(StrEnum):
    ADDED = "+"
    REMOVED = "-"
    CONTEXT = " "
    HUNK = "@"


@dataclass(frozen=True)
class FileDiff:
    path: str
    lines: list[tuple[LineKind, str]] = field(default_factory=list)
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


def unified(path: str, old: str, new: str) -> FileDiff:
    old_lines, new_lines = _split(old), _split(new)
    lines: list[tuple[LineKind, str]] = []
    added = removed = 0
    for line in list(difflib.unified_diff(old_lines, new_lines, lineterm="", n=3))[2:]:
        kind = LineKind(line[:1] or " ")
        if kind is LineKind.HUNK:
            lines.append((kind, line))
            continue
        added += kind is LineKind.ADDED
        removed += kind is LineKind.REMOVED
        lines.append((kind, line[1:]))
    more = max(0, len(lines) - MAX_LINES)
    return FileDiff(path, lines[:MAX_LINES], added, removed, more)


def new_content(path: str, content: str, *, new_file: bool) -> FileDiff:
    lines = _split(content)
    shown = [(LineKind.ADDED, line) for line in lines[:FIRST_LINES]]
    return FileDiff(path, shown, added=len(lines), more=max(0, len(lines) - FIRST_LINES),
                    new_file=new_file, content_only=not new_file)


def diff_for_call(name: str, args: dict[str, Any] | None, workspace: Path | None = None) -> FileDiff | None:
    """The diff of a call (``workspace``: read the file now for a write_file, which is
    only right before the call runs)."""
    if name not in DIFF_TOOLS or not isinstance(args, dict):
        return None
    path = args.get("path")
    if not isinstance(path, str):
        return None
    if name == "edit_file":
        old, new = args.get("old_string"), args.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return unified(path, old, new)
        return None
    content = args.get("content")
    if not isinstance(content, str):
        return None
    from agent_tui.files.preview import preview  # not on the first frame's path

    # The file as the call will find it: the preview both front ends read.
    before = preview(name, args, workspace) if workspace is not None else None
    if before is None:  # unreadable, not text, outside the workspace: show what is known
        return new_content(path, content, new_file=False)
    if before.old is None:
        return new_content(path, content, new_file=True)
    return unified(path, before.old, content)


def summary(diff: FileDiff) -> str:
    """"+12 −3 in app.py" (a new file: "new file app.py, 40 lines")."""
    if diff.new_file:
        return f"new file {clean(diff.name)}, {diff.added} line{'s' if diff.added != 1 else ''}"
    if diff.content_only:
        return f"wrote {clean(diff.name)}, {diff.added} line{'s' if diff.added != 1 else ''}"
    return f"+{diff.added} −{diff.removed} in {clean(diff.name)}"


def _highlighter(path: str) -> Any:
    from rich.syntax import Syntax

    try:
        lexer = Syntax.guess_lexer(path)
    except Exception:
        lexer = "text"
    return Syntax("", lexer, theme="ansi_dark", background_color="default")


def render(diff: FileDiff, variables: dict[str, str], *, highlight: bool = True) -> Text:
    """Every line with its symbol; added and removed lines in the theme's success and
    error colours, the code in its language's colours."""
    added = role_style(variables, "success", bold=True)
    removed = role_style(variables, "error", bold=True)
    muted = role_style(variables, "text-muted")
    syntax = _highlighter(diff.path) if highlight else None
    out = Text(no_wrap=False)
    if diff.new_file or diff.content_only:
        out.append("new file\n" if diff.new_file else
                   "the old content was not read before the write: the new content's first lines\n",
                   style=muted)
    for i, (kind, line) in enumerate(diff.lines):
        if i:
            out.append("\n")
        if kind is LineKind.HUNK:
            out.append(clean(line), style=muted)
            continue
        symbol_style = {LineKind.ADDED: added, LineKind.REMOVED: removed}.get(kind, muted)
        out.append(f"{kind.value} ", style=symbol_style)
        code = clean(line).expandtabs(4)
        if syntax is not None and kind is not LineKind.REMOVED:
            body = syntax.highlight(code)
            body.rstrip()
            body.end = ""
            out.append_text(body)
        else:
            out.append(code, style=Style(dim=True) if kind is LineKind.REMOVED else None)
    if diff.more:
        out.append(f"\n… {diff.more} more line{'s' if diff.more != 1 else ''}", style=muted)
    return out
