"""Whole-file diffs for the file tools that write, as ACP clients show them.

A client places a diff in its file by its text: a diff of the replaced snippet alone
shows at the wrong line, or nowhere. So the diff is the whole file before and after:
for ``edit_file`` the file as it is when the call is first seen, with its one
occurrence replaced (as the tool does it, line endings included); for ``write_file``
the file it replaces (none for a new file) and the new content. Files are read
through the file tools' workspace confinement (a path outside the workspace is never
read) and bounded by ``MAX_DIFF_BYTES``; beyond that, for a file that is not text, or
an edit that cannot apply (the old text is not there exactly once), there is no diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from agent_tui.tools.workspace import Workspace, WorkspaceError

MAX_DIFF_BYTES = 1024 * 1024


class FileDiff(NamedTuple):
    path: str  # absolute
    old: str | None  # None: the file does not exist yet
    new: str


def file_diff(name: str, tool_input: dict[str, Any] | None, workspace: Path) -> FileDiff | None:
    if not tool_input or name not in ("write_file", "edit_file"):
        return None
    path = tool_input.get("path")
    if not isinstance(path, str) or not path:
        return None
    try:
        ws = Workspace(workspace)
        absolute = str(ws.resolve(path))
        old = _read(ws, path)
    except (WorkspaceError, OSError, UnicodeDecodeError):
        return None
    if name == "write_file":
        content = tool_input.get("content")
        return FileDiff(absolute, old, content) if isinstance(content, str) else None
    before, after = tool_input.get("old_string"), tool_input.get("new_string")
    if old is None or not isinstance(before, str) or not isinstance(after, str) or not before:
        return None
    if before not in old and "\r\n" in old and "\n" in before and "\r" not in before:
        before, after = before.replace("\n", "\r\n"), after.replace("\n", "\r\n")
    if old.count(before) != 1:
        return None
    return FileDiff(absolute, old, old.replace(before, after, 1))


def _read(ws: Workspace, path: str) -> str | None:
    try:
        data = ws.read_bytes(path, limit=MAX_DIFF_BYTES)
    except FileNotFoundError:
        return None
    return data.decode("utf-8")


__all__ = ["MAX_DIFF_BYTES", "FileDiff", "file_diff"]
