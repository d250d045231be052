"""What a call of a file tool that writes would leave in its file, before it runs.

One answer for the tools and both front ends, by what the tool says its calls do
(``Tool.file_change``): an edit (``edit_file``) replaces exactly one occurrence of its
old text, matching the file's own line endings when the model wrote the lines without
their CR (:func:`locate`, which the tool itself edits by), and a write (``write_file``)
replaces the whole file. :func:`preview` gives the file before and after
(the permission prompt's and the editors' diffs); the file is read through the
workspace's confinement (a path outside it is never read) and bounded by
``MAX_PREVIEW_BYTES``. Beyond that, for a file that is not text, or an edit that cannot
apply (the old text is not there exactly once), there is no preview.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from agent_tui.files.workspace import Workspace, WorkspaceError, pick_root
from agent_tui.protocol.tool_names import FileChange, facts_of

MAX_PREVIEW_BYTES = 1024 * 1024


class FilePreview(NamedTuple):
    path: str  # absolute
    old: str | None  # None: the file does not exist yet
    new: str


def find_all(data: bytes, needle: bytes, cap: int = 1000) -> list[int]:
    """Start offsets of ``needle`` in ``data``, overlapping ones included."""
    found: list[int] = []
    pos = data.find(needle)
    while pos != -1 and len(found) < cap:
        found.append(pos)
        pos = data.find(needle, pos + 1)
    return found


def locate(data: bytes, old: bytes, new: bytes) -> tuple[list[int], bytes, bytes]:
    """Where ``old`` occurs in ``data``, and the old and new text as they will be
    replaced: in the file's own CRLF endings when only those make it match (the model
    saw the lines without their CR)."""
    found = find_all(data, old)
    if not found and b"\r\n" in data and b"\n" in old and b"\r" not in old:
        old, new = old.replace(b"\n", b"\r\n"), new.replace(b"\n", b"\r\n")
        found = find_all(data, old)
    return found, old, new


def preview(name: str, tool_input: dict[str, Any] | None, workspace: Path,
            added_dirs: Sequence[Path] = ()) -> FilePreview | None:
    """The file before and after the call ``name(tool_input)``, or None (see above)."""
    change = facts_of(name).file_change
    if not tool_input or change is FileChange.NONE:
        return None
    path = tool_input.get("path")
    if not isinstance(path, str) or not path:
        return None
    try:
        ws = pick_root(workspace, added_dirs, path)
        absolute = str(ws.resolve(path))
        data = _read(ws, path)
    except FileNotFoundError:  # a folder on its way is missing: a new file, if inside
        absolute, data = os.path.normpath(os.path.join(workspace, path)), None
        if os.path.commonpath([absolute, os.path.abspath(workspace)]) != os.path.abspath(workspace):
            return None
    except (WorkspaceError, OSError):
        return None
    old = _text(data)
    if data is not None and old is None:
        return None  # not text
    if change is FileChange.WRITE:
        content = tool_input.get("content")
        return FilePreview(absolute, old, content) if isinstance(content, str) else None
    before, after = tool_input.get("old_string"), tool_input.get("new_string")
    if data is None or not isinstance(before, str) or not isinstance(after, str) or not before:
        return None
    try:
        found, old_b, new_b = locate(data, before.encode("utf-8"), after.encode("utf-8"))
    except UnicodeEncodeError:
        return None
    if len(found) != 1:
        return None
    pos = found[0]
    return FilePreview(absolute, old, _text(data[:pos] + new_b + data[pos + len(old_b):]) or "")


def _read(ws: Workspace, path: str) -> bytes | None:
    try:
        return ws.read_bytes(path, limit=MAX_PREVIEW_BYTES)
    except FileNotFoundError:
        return None


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
