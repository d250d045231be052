"""An editor's open files: the text of a file as the user sees it, saved or not.

An ACP client that offers ``fs/read_text_file`` reads a file from its buffers, so a
read sees what the user typed and has not saved. The front end hands such a reader to
the tools that read (:class:`ReadsBuffers`, found among the session's tools); the
tool checks the path as always (confined to the workspace, a regular file, not an
image or binary) before it asks, and reads the disk when the reader has no answer.

A client that offers ``fs/write_text_file`` has the write tools' files written by the
editor (:class:`WritesBuffers`, :func:`write_through`), so the change shows in its
buffer. Everything before the write is as for a write to disk: the approval, the path
checked (the editor is given the real absolute path, links resolved by us), the cancel
check and the rewind pre-image last, right before the editor is asked. The pre-image is
the text the editor showed (unsaved edits included), so a rewind gives the user back
what they had; edit_file edits that text, and refuses if it changed meanwhile. A file
that is not UTF-8 text (:func:`is_text`) is edited on disk, byte for byte.

Every request to the editor waits under the call's cancel scope (Esc ends the wait);
the front end bounds the wait and raises :class:`EditorUnanswered` when the editor
does not answer, or when the path changed under the request (``acp/editor_files.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.files.workspace import BeforeWrite, Workspace, WorkspaceError, WriteReport

#: The text of the file at this absolute path as the editor holds it (None: read the disk).
OpenBuffers = Callable[[Path], Awaitable[str | None]]
#: Have the editor write this text to the file at this absolute path.
SaveBuffer = Callable[[Path, str], Awaitable[None]]


@runtime_checkable
class ReadsBuffers(Protocol):
    """A tool that reads files, and may read them from the editor's buffers."""

    buffers: OpenBuffers | None


@dataclass
class Editor:
    """An editor that writes files for the agent, and may say what its buffers hold."""

    save: SaveBuffer
    read: OpenBuffers | None = None


@runtime_checkable
class WritesBuffers(Protocol):
    """A tool that writes files, and may have the editor write them."""

    editor: Editor | None


class EditorRefused(WorkspaceError):
    """The editor did not write the file."""


class EditorUnanswered(WorkspaceError):
    """The editor gave no usable answer in time, or the path changed under the request:
    the message says what is known of the file (for a write: whether it was written)."""


def is_text(data: bytes) -> bool:
    """Whether an editor can hold ``data`` as it is: UTF-8 text without NUL bytes."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data


async def shown_text(read: OpenBuffers | None, ws: Workspace, path: str,
                     scope: CancelScope) -> bytes | None:
    """The editor's text of the (checked) file ``path``, as UTF-8; None: as on disk."""
    if read is None:
        return None
    try:
        async with scope.linked():  # cancel point: waiting for the editor
            text = await read(ws.resolve(path))
    except (Cancelled, EditorUnanswered):
        raise
    except Exception:  # noqa: BLE001 - no such buffer or file: the disk says
        return None
    return text.encode("utf-8", errors="surrogatepass") if text is not None else None


async def write_through(editor: Editor, ws: Workspace, path: str, data: bytes, *,
                        make_parents: bool, before_write: BeforeWrite,
                        scope: CancelScope) -> WriteReport:
    """Write ``data`` to ``path`` through the editor, checked as a disk write is."""
    shown = await shown_text(editor.read, ws, path, scope)

    def hook(target: Path, old: bytes | None) -> None:
        before_write(target, shown if shown is not None else old)

    report = ws.write_atomic(path, data, make_parents=make_parents, before_write=hook,
                             write=False)
    try:
        async with scope.linked():  # cancel point: waiting for the editor
            await editor.save(report.path, data.decode("utf-8"))
    except (Cancelled, EditorUnanswered):
        raise
    except Exception as exc:  # noqa: BLE001 - the editor's reason, told to the model
        raise EditorRefused(f"the editor did not write {ws.display(path)}: {exc}") from exc
    if shown is not None and not report.created:
        report.old_size = len(shown)
    return report


__all__ = ["Editor", "EditorRefused", "EditorUnanswered", "OpenBuffers", "ReadsBuffers", "SaveBuffer",
           "WritesBuffers", "is_text", "shown_text", "write_through"]
