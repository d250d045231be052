"""An editor's open files: the text of a file as the user sees it, saved or not.

An ACP client that offers ``fs/read_text_file`` reads a file from its buffers, so a
read sees what the user typed and has not saved. The front end hands such a reader to
the tools that read (:class:`ReadsBuffers`, found among the session's tools); the
tool checks the path as always (confined to the workspace, a regular file, not an
image or binary) before it asks, and reads the disk when the reader has no answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

#: The text of the file at this absolute path as the editor holds it (None: read the disk).
OpenBuffers = Callable[[Path], Awaitable[str | None]]


@runtime_checkable
class ReadsBuffers(Protocol):
    """A tool that reads files, and may read them from the editor's buffers."""

    buffers: OpenBuffers | None


__all__ = ["OpenBuffers", "ReadsBuffers"]
