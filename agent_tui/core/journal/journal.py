"""The journal: an append-only record of what happened in a session.

The records are the models of ``records.py``; the journal numbers and stamps each as
it appends it. It lives in memory and, when given a path, in a JSONL file (0600) that
is fsynced at the moments that matter: after a tool's intent, after its final record,
and at turn end. Each line carries the CRC-32 of its record (``journal_lines.py``), so
a line cut short or changed on disk is set aside at load (and named to the user),
never read as something else. A write that fails raises :class:`JournalWriteError` and
leaves no part of a line behind; the record is still kept in memory (the session goes
on), the caller says so to the user, and the next write that succeeds saves every
waiting record first (``on_recovered`` is told). A session's journal is written only
while its process holds the session's lock (``session_lock.py``, given as ``lock``);
closing the journal lets the lock go. The model view (``history.py``) is derived from
these records and never edited by hand."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agent_tui import crash_points
from agent_tui.core.journal.records import AssistantMessageRecord, Record, ToolResultRecord
from agent_tui.core.journal.journal_lines import SET_ASIDE_SUFFIX, SetAside, encode_line, parse_line
from agent_tui.core.journal.session_lock import SessionLock
from agent_tui.protocol.events import Notice
from agent_tui.protocol.states import NoticeCode, NoticeLevel

#: The kinds of record that cut the conversation: where each stands is kept as the
#: records are appended, so that the model view late in a long session finds them
#: without looking at every record (``history.py``).
INDEXED_KINDS = ("rewind", "conversation_cleared", "compaction")
# A tool result's output longer than this is let go from memory once no model view can
# send it again (it stays in the file; see :meth:`Journal.let_go_output`).
LET_GO_AT = 4096


class Records(list[Record]):
    """A copy of the journal's records, and ``at``: the positions in it of the
    records of each of INDEXED_KINDS (a slice or a copy of it is a plain list)."""

    __slots__ = ("at",)

    def __init__(self, records: Iterable[Record] = (),
                 at: dict[str, list[int]] | None = None) -> None:
        super().__init__(records)
        self.at = at  # None (a copy made elsewhere): nothing is known of the positions


class JournalWriteError(OSError):
    """The record could not be saved to disk (it is still kept in memory)."""

    def notice(self) -> Notice:
        """What the user is told (the status line keeps saying it)."""
        return Notice(level=NoticeLevel.ERROR, text=str(self), code=NoticeCode.JOURNAL_WRITE_FAILED)


class Journal:
    """Append-only; thread-safe; optionally backed by a JSONL file.

    A write that fails is undone (the file is cut back to its last whole line) and
    the records wait in memory; the next write that succeeds saves them first, in
    order, so the file is always a prefix of the conversation.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._records: list[Record] = []
        self._at: dict[str, list[int]] = {kind: [] for kind in INDEXED_KINDS}
        self._tool_use_ids: set[str] = set()  # of the assistant messages' tool calls
        self._let_go: set[int] = set()  # positions of tool results whose output is on disk only
        self._let_go_upto = 0  # positions before this were looked at
        self._lock = threading.Lock()
        self._seq = 0
        self._fd: int | None = None
        self._unsaved: list[bytes] = []  # encoded lines not yet on disk, in order
        self._failing = False
        self.set_aside: list[str] = []  # unreadable lines found when loading
        self.damaged: list[SetAside] = []  # the same lines, described
        # Told when writes succeed again after a failure (the session's emit).
        self.on_recovered: Callable[[Notice], None] | None = None
        # The session's lock: while it is held no other process writes this file.
        self.lock: SessionLock | None = None

    @classmethod
    def load(cls, path: Path) -> Journal:
        """Read a journal back; a torn, damaged or unreadable line is set aside, not fatal.

        Lines without a checksum are accepted only before the first line that has
        one (journals written before lines carried it).
        """
        journal = cls(path)
        with open(path, "rb") as fh:
            data = fh.read()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" unless the last line was cut short
        checked = False
        for number, raw in enumerate([*lines, tail] if tail else lines, 1):
            if not raw.strip():
                continue
            record, ok = parse_line(raw, unchecked_ok=not checked)
            if record is None:
                journal._set_aside(number, raw, torn=bool(tail) and number == len(lines) + 1)
                continue
            checked = checked or ok
            journal._keep(record)
            journal._seq = max(journal._seq, record.seq)
        return journal

    def _set_aside(self, number: int, raw: bytes, *, torn: bool) -> None:
        self.set_aside.append(raw.decode("utf-8", errors="replace"))
        self.damaged.append(SetAside.of(number, raw, torn=torn))

    def set_aside_notice(self) -> Notice | None:
        """What the user is told about the lines set aside at load (None: there were none)."""
        if not self.damaged:
            return None
        shown = "; ".join(d.describe() for d in self.damaged[:8])
        if len(self.damaged) > 8:
            shown += f"; and {len(self.damaged) - 8} more"
        return Notice(level=NoticeLevel.WARNING, text=(
            f"journal {self.path}: {len(self.damaged)} damaged line(s) set aside ({shown}); "
            "the rest of the session is loaded"))

    def let_go_output(self, before_seq: int) -> int:
        """Let go, in memory, of the output (and details) of the tool results before ``before_seq``
        (what a compaction replaced: no model view sends it again) that the file holds.
        :meth:`records_in_full` reads them back, and a rewind (which may bring them
        back into the model view) restores them. Returns how many were let go."""
        with self._lock:
            if self.path is None or self._unsaved:
                return 0  # the file must hold every record first
            count, i = 0, self._let_go_upto
            while i < len(self._records) and self._records[i].seq < before_seq:
                record = self._records[i]
                if isinstance(record, ToolResultRecord) and (
                        len(record.content) > LET_GO_AT or record.details):
                    record.content = "" if len(record.content) > LET_GO_AT else record.content
                    record.details = {}  # the run's facts: read when the result was made
                    self._let_go.add(i)
                    count += 1
                i += 1
            self._let_go_upto = i
            return count

    def _read_back(self) -> dict[int, ToolResultRecord]:
        """The records let go of, as the file holds them, by position."""
        assert self.path is not None
        want = {self._records[i].seq: i for i in self._let_go}
        return {want[r.seq]: r for r in Journal.load(self.path)._records
                if r.seq in want and isinstance(r, ToolResultRecord)}

    def records_in_full(self) -> Records:
        """:attr:`records`, with every tool result's output (read back from the file
        where it was let go of): for an export or a replay of the whole session."""
        with self._lock:
            if not self._let_go:
                return Records(self._records, {k: list(v) for k, v in self._at.items()})
            back = self._read_back()
            return Records([back.get(i, r) for i, r in enumerate(self._records)],
                           {k: list(v) for k, v in self._at.items()})

    def records_after(self, seq: int) -> list[Record]:
        """The records after ``seq``, each in full (a tool result's output that was let
        go of is read back from the file): for a reader that fell behind a compaction."""
        with self._lock:
            first = next((i for i, r in enumerate(self._records) if r.seq > seq), len(self._records))
            if not any(i >= first for i in self._let_go):
                return self._records[first:]
            back = self._read_back()
            return [back.get(i, r) for i, r in enumerate(self._records) if i >= first]

    def _keep(self, record: Record) -> None:
        kind = record.kind
        if kind == "rewind" and self._let_go:  # the view may reach back: restore them
            for i, full in self._read_back().items():
                kept = self._records[i]
                assert isinstance(kept, ToolResultRecord)
                kept.content, kept.details = full.content, full.details
            self._let_go.clear()
        if kind in self._at:
            self._at[kind].append(len(self._records))
        elif isinstance(record, AssistantMessageRecord):
            self._tool_use_ids.update(
                str(b.get("id")) for b in record.blocks if b.get("type") == "tool_use")
        self._records.append(record)

    @property
    def records(self) -> Records:
        with self._lock:
            return Records(self._records, {k: list(v) for k, v in self._at.items()})

    def has_tool_use(self, tool_use_id: str) -> bool:
        """Whether an assistant message of this journal holds a call with this id."""
        with self._lock:
            return tool_use_id in self._tool_use_ids

    def append(self, record: Record, *, durable: bool = False) -> Record:
        """Add a record; write it through to disk when the journal has a file.

        Raises JournalWriteError when the disk write fails; the record stays in
        memory (and is written with the next write that succeeds), so the
        conversation can go on.
        """
        recovered: Notice | None = None
        with self._lock:
            self._seq += 1
            # Stamped in place, not by pydantic's __setattr__: that also adds each name
            # to the record's set of fields set, half a KB more for every record of a
            # session kept all along (nothing reads that set).
            record.__dict__["seq"], record.__dict__["ts"] = self._seq, time.time()
            self._keep(record)
            if self.path is None:
                return record
            self._unsaved.append(encode_line(record))
            waiting = len(self._unsaved)
            try:
                self._write_unsaved(record.kind, durable)
            except OSError as exc:
                self._failing = True
                raise JournalWriteError(
                    exc.errno or 0, f"journal not saved ({record.kind}): {exc.strerror or exc}"
                ) from exc
            if self._failing:
                self._failing = False
                recovered = Notice(level=NoticeLevel.INFO, code=NoticeCode.JOURNAL_WRITE_RECOVERED,
                                   text=f"journal saved again ({waiting} record(s) that had "
                                   "waited in memory are on disk now)")
        if recovered is not None and self.on_recovered is not None:
            self.on_recovered(recovered)
        return record

    def _write_unsaved(self, kind: str, durable: bool) -> None:
        assert self.path is not None
        if self.lock is not None and not self.lock.held:
            # Another agent process may hold the session now: never write beside it.
            raise OSError(0, "the session is closed in this process")
        point = f"{kind}:{self.path.name}"
        fd = self._open()
        start = os.fstat(fd).st_size
        data = b"".join(self._unsaved)
        crash_points.reached(f"journal.write:{point}")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                crash_points.reached(f"journal.fsync:{point}")
                os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, start)  # no part of a line stays behind
            except OSError:
                self._close_quietly()  # reopening looks at the tail again
            raise
        self._unsaved.clear()

    def _open(self) -> int:
        if self._fd is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            try:
                self._set_aside_torn_tail(fd)
            except OSError:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    def _set_aside_torn_tail(self, fd: int) -> None:
        """A last line cut short would swallow the next record: move it to the side file."""
        size = os.fstat(fd).st_size
        end = size
        while end > 0:
            chunk = os.pread(fd, min(65536, end), end - min(65536, end))
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                end = end - len(chunk) + newline + 1
                break
            end -= len(chunk)
        if end == size:
            return
        tail = os.pread(fd, size - end, end)
        assert self.path is not None
        side = os.open(self.path.with_name(self.path.name + SET_ASIDE_SUFFIX),
                       os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            os.write(side, tail + b"\n")
            os.fsync(side)
        finally:
            os.close(side)
        os.ftruncate(fd, end)

    def _close_quietly(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        """Close the file and let the session's lock go."""
        with self._lock:
            self._close_quietly()
            if self.lock is not None:
                self.lock.release()
