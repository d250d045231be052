"""The agent's ``fs/read_text_file`` and ``fs/write_text_file`` requests to the editor,
each with a bounded wait and the path checked again after the answer.

The tools check a path before the editor is asked (``files/buffers.py``); this module
keeps the request itself honest:

- **A bounded wait.** An editor that does not answer within :data:`EDITOR_WAIT`
  seconds (``AGENT_TUI_ACP_EDITOR_TIMEOUT`` overrides it) is sent ``$/cancel_request``
  for the request, and the call fails with :class:`EditorUnanswered`. For a write the
  editor gets :data:`CANCEL_GRACE` seconds more to answer the cancel: its answer, or
  else the disk, says whether the file was written, and the message says so.
- **Esc.** The wait runs under the call's cancel scope; on cancel the request is
  cancelled the same way and the call ends at once.
- **Links.** Every folder on the way to the (real) path, and the file, must not be a
  link before the editor is asked, and must still be the same folders, with no link
  anywhere, once it has answered. A swap in between (a folder replaced by a link to
  outside the workspace) discards a read's text and makes a write fail with the
  truth: the editor may have written where the link leads. ACP gives the editor a
  path, not an open folder, so the instant between the editor's own lookup and its
  write cannot be closed from here (docs/acp.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agent_tui.files.buffers import EditorRefused, EditorUnanswered

#: Seconds the agent waits for the editor's answer to one request.
EDITOR_WAIT = 30.0
#: Seconds a write's editor gets, after ``$/cancel_request``, to say what it did.
CANCEL_GRACE = 2.0
#: JSON-RPC error code of a request the peer cancelled (ACP's ``-32800``).
REQUEST_CANCELLED = -32800

SendFrame = Callable[[dict[str, Any]], Awaitable[None]]

# The ids of the requests sent by the task that set it (see :func:`note_sent`).
_sent: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "acp_editor_requests", default=None)


def note_sent(message: dict[str, Any]) -> None:
    """Called by the transport for every frame it sends: the id of a request sent on
    behalf of an editor request is noted, so that request can be cancelled by id."""
    ids = _sent.get()
    if ids is not None and "method" in message and "id" in message:
        ids.append(message["id"])


def editor_wait() -> float:
    """:data:`EDITOR_WAIT`, or ``AGENT_TUI_ACP_EDITOR_TIMEOUT`` seconds when set."""
    raw = os.environ.get("AGENT_TUI_ACP_EDITOR_TIMEOUT", "")
    try:
        value = float(raw)
    except ValueError:
        return EDITOR_WAIT
    return value if 0 < value < 86400 else EDITOR_WAIT


class _NoAnswer(Exception):
    """The editor did not answer within the wait."""


# -- the path's place on disk ----------------------------------------------------------

Place = tuple[tuple[int, int], ...]


def place(path: Path) -> Place:
    """(device, inode) of every folder from ``/`` to ``path``'s folder; raises
    :class:`EditorUnanswered` when one of them, or the file itself, is a link."""
    ids: list[tuple[int, int]] = []
    for folder in (*reversed(path.parents), path):
        try:
            st = os.lstat(folder)
        except FileNotFoundError:
            if folder == path:
                break  # a file the editor is to create
            raise
        if stat.S_ISLNK(st.st_mode):
            raise EditorUnanswered(f"{folder} is a link: the editor is not given a path "
                                   "through a link")
        if folder != path:
            ids.append((st.st_dev, st.st_ino))
    return tuple(ids)


def _swapped(path: Path, before: Place) -> str | None:
    """Why ``path`` is no longer where it was when the editor was asked, or None."""
    try:
        now = place(path)
    except (EditorUnanswered, OSError) as exc:
        return str(exc)
    return None if now == before else f"a folder on the way to {path} was replaced"


# -- the requests ------------------------------------------------------------------------


class EditorFiles:
    """One session's file requests to the editor (``Editor.read`` / ``Editor.save``)."""

    def __init__(self, conn: Any, session_id: str, send: SendFrame | None,
                 wait: float | None = None) -> None:
        self.conn = conn
        self.session_id = session_id
        self.send = send  # raw frames, for $/cancel_request (None: cannot cancel)
        self.wait = editor_wait() if wait is None else wait

    async def read(self, path: Path) -> str | None:
        """The editor's text of ``path``; raises :class:`EditorUnanswered` when it does
        not answer in time or the path changed while it read."""
        before = place(path)
        try:
            answer = await self._ask(lambda: self.conn.read_text_file(
                session_id=self.session_id, path=str(path)))
        except _NoAnswer:
            raise EditorUnanswered(
                f"the editor did not answer fs/read_text_file for {path} within "
                f"{self.wait:g} s; nothing was read") from None
        why = _swapped(path, before)
        if why is not None:
            raise EditorUnanswered(f"{path} changed while the editor read it ({why}): its "
                                   "text is not used")
        return getattr(answer, "content", None)

    async def save(self, path: Path, text: str) -> None:
        """Have the editor write ``text`` to ``path``; on no answer, or a link swapped in
        meanwhile, raise :class:`EditorUnanswered` saying whether it was written."""
        before = place(path)
        try:
            await self._ask(lambda: self.conn.write_text_file(
                session_id=self.session_id, path=str(path), content=text), grace=True)
        except _NoAnswer:
            raise EditorUnanswered(
                f"the editor did not answer fs/write_text_file for {path} within "
                f"{self.wait:g} s, nor its cancel: {_on_disk(path, text)}") from None
        why = _swapped(path, before)
        if why is not None:
            raise EditorUnanswered(
                f"{path} changed while the editor wrote it ({why}): the editor may have "
                "written where a link leads, outside the workspace; check that place")

    async def _ask(self, request: Callable[[], Awaitable[Any]], *, grace: bool = False) -> Any:
        """The answer to ``request``, waited for at most :attr:`wait` seconds."""
        ids: list[Any] = []
        token = _sent.set(ids)
        try:
            task = asyncio.ensure_future(request())  # the task's context holds ``ids``
        finally:
            _sent.reset(token)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.wait)
            if not done:
                await self._cancel(ids)
                if grace:  # the editor's answer to the cancel says what it did
                    done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE)
                if not done:
                    raise _NoAnswer
            return _answer(task)
        finally:
            if not task.done():
                task.cancel()
                await self._cancel(ids)

    async def _cancel(self, ids: list[Any]) -> None:
        """Send ``$/cancel_request`` for each request still open (once each)."""
        while ids and self.send is not None:
            frame = {"jsonrpc": "2.0", "method": "$/cancel_request",
                     "params": {"requestId": ids.pop()}}
            try:
                await asyncio.shield(self.send(frame))
            except (ConnectionError, OSError):
                return


def _answer(task: asyncio.Future[Any]) -> Any:
    """The request's result; an editor that answered the cancel did nothing."""
    exc = task.exception()
    if exc is None:
        return task.result()
    if getattr(exc, "code", None) == REQUEST_CANCELLED:
        raise EditorRefused(f"the editor cancelled the request ({exc})")
    raise exc


def _on_disk(path: Path, text: str) -> str:
    """What the disk says of a write the editor did not confirm."""
    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as fh:
            written = fh.read(len(text.encode("utf-8")) + 1) == text.encode("utf-8")
    except OSError:
        written = False
    if written:
        return "the file on disk holds the new text (it was written)"
    return ("the file on disk does not hold the new text; the editor may still write it "
            "(or hold it unsaved)")


__all__ = ["CANCEL_GRACE", "EDITOR_WAIT", "EditorFiles", "editor_wait", "note_sent", "place"]
