"""The journal: an append-only record of what happened in a session.

One pydantic model per record kind, each stamped with the schema version, a
monotonic sequence number and a timestamp. The journal lives in memory and, when
given a path, in a JSONL file (0600) that is fsynced at the moments that matter:
after a tool's intent, after its final record, and at turn end. Each line carries
the CRC-32 of its record, so a line cut short or changed on disk is set aside at
load (and named to the user), never read as something else. A write that fails
raises :class:`JournalWriteError` and leaves no part of a line behind; the record is
still kept in memory (the session goes on), the caller says so to the user, and the
next write that succeeds saves every waiting record first (``on_recovered`` is told).
The model view (``history.py``) is derived from these records and never edited by hand.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from agent_tui import crash_points
from agent_tui.protocol.events import Notice
from agent_tui.protocol.ops import ImageAttachment
from agent_tui.protocol.states import (
    BackgroundState,
    CompactionTrigger,
    Decision,
    HookDecision,
    HookEnding,
    HookEvent,
    NoticeCode,
    NoticeLevel,
    RequestPurpose,
    RestoreWhat,
    SideEffects,
    SteerDelivery,
    SteerKind,
    SteerStatus,
    ToolState,
    TurnStatus,
    Verdict,
)

SCHEMA_VERSION = 1


class _Record(BaseModel):
    v: int = SCHEMA_VERSION
    seq: int = 0
    ts: float = 0.0


class SessionStarted(_Record):
    kind: Literal["session_started"] = "session_started"
    session_id: str
    workspace: str
    provider: str
    model: str


class AgentProcessRecord(_Record):
    """An agent process opened this session; ``owner`` tags the processes it starts,
    so a resumed session can find what a crashed one left running."""

    kind: Literal["agent_process"] = "agent_process"
    owner: str
    pid: int
    workspace: str = ""  # again here: the session is found even if its first line is lost


class UserMessageRecord(_Record):
    kind: Literal["user_message"] = "user_message"
    turn_id: str
    text: str
    # Sent with the text, bytes and all: a resumed session sends the same images.
    images: list[ImageAttachment] = Field(default_factory=list)


class ModelRequestRecord(_Record):
    """A request is about to be sent: which attempt, how long the model view is."""

    kind: Literal["model_request"] = "model_request"
    turn_id: str
    attempt: int
    messages: int
    model: str


class RetryRecord(_Record):
    kind: Literal["retry"] = "retry"
    turn_id: str
    attempt: int
    delay: float
    reason: str


class AssistantMessageRecord(_Record):
    """What the model said in one response: complete blocks only.

    ``ended`` says why the stream stopped (the model's stop reason, or
    ``cancelled`` / ``error``); ``incomplete_tool_uses`` lists calls whose
    arguments never finished arriving (never run, never shown to the model).
    """

    kind: Literal["assistant_message"] = "assistant_message"
    turn_id: str
    blocks: list[dict[str, Any]]
    ended: str
    incomplete_tool_uses: list[dict[str, Any]] = Field(default_factory=list)
    # Thinking cut off before its signature arrived: kept here, never sent back.
    incomplete_thinking: list[dict[str, Any]] = Field(default_factory=list)
    model: str | None = None  # which model wrote it (its thinking signatures are that model's)


class UsageRecord(_Record):
    """One model request's usage, exactly as the API reported it (an interrupted
    request: what ``message_start`` said and the output so far)."""

    kind: Literal["usage"] = "usage"
    turn_id: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    interrupted: bool = False
    purpose: RequestPurpose = RequestPurpose.TURN
    cost_usd: float | None = None


class CompactionRecord(_Record):
    """The conversation before ``kept_from_seq`` is replaced, in the model view, by
    ``summary``; the records themselves stay in the journal."""

    kind: Literal["compaction"] = "compaction"
    compaction_id: str
    summary: str
    kept_from_seq: int  # the first record kept verbatim
    replaced_through_seq: int  # the last record the summary stands for
    tokens_before: int = 0
    tokens_after: int = 0
    trigger: CompactionTrigger = CompactionTrigger.AUTO
    focus: str = ""


class MemoryNoteRecord(_Record):
    """A subfolder's own memory file joined the conversation (as a note)."""

    kind: Literal["memory_note"] = "memory_note"
    path: str
    text: str


class ModelChangeRecord(_Record):
    """From here on requests use this model and thinking setting."""

    kind: Literal["model_change"] = "model_change"
    model: str
    thinking: str = ""


class ConversationClearedRecord(_Record):
    """``/clear``: the model view starts afresh here; what came before stays here."""

    kind: Literal["conversation_cleared"] = "conversation_cleared"


class ToolIntentRecord(_Record):
    kind: Literal["tool_intent"] = "tool_intent"
    turn_id: str
    tool_use_id: str
    name: str
    input: dict[str, Any]
    operation_id: str


class ToolStateRecord(_Record):
    kind: Literal["tool_state"] = "tool_state"
    turn_id: str
    tool_use_id: str
    state: ToolState


class ToolResultRecord(_Record):
    """A tool call's final state and the facts of how it ended."""

    kind: Literal["tool_result"] = "tool_result"
    turn_id: str
    tool_use_id: str
    name: str
    state: ToolState
    content: str
    is_error: bool = False
    side_effects: SideEffects = SideEffects.NONE
    exit_code: int | None = None
    signal: str | None = None
    ended_by: str | None = None
    residue: list[dict[str, Any]] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    note: str = ""  # the user's note with a denial, or the rule's reason
    denied_by: Literal["user", "policy", "hook"] | None = None
    blocks: list[dict[str, Any]] | None = None  # images after the text (ToolResult.blocks)


class PermissionRecord(_Record):
    """A permission decision about one tool call: who decided, and by which rule.

    The policy's ruling comes first (``decided_by`` ``rule``, ``mode``, ``session``
    or ``policy``; ``verdict`` ``ask`` when it asked the user); the user's answer
    follows as a second record (``decided_by`` ``user``).
    """

    kind: Literal["permission"] = "permission"
    turn_id: str
    tool_use_id: str
    verdict: Verdict
    decided_by: Literal["rule", "mode", "session", "policy", "user", "hook"]
    rule: str | None = None  # e.g. "deny:bash(rm:*)", "mode:accept-edits", "session:bash(ls)"
    reason: str = ""  # the policy's reason, or the note the user gave with a denial
    decision: Decision | None = None  # the user's answer


class SteerRecord(_Record):
    kind: Literal["steer"] = "steer"
    id: str
    steer_kind: SteerKind
    state: SteerStatus
    text: str
    turn_id: str | None = None
    # injected: rides after a tool batch's results; new_turn: starts a turn of its
    # own (its text is that turn's user message).
    delivery: SteerDelivery | None = None
    images: list[ImageAttachment] = Field(default_factory=list)  # kept when injected


class TurnEndedRecord(_Record):
    kind: Literal["turn_ended"] = "turn_ended"
    turn_id: str
    status: TurnStatus
    detail: str = ""


class CheckpointRecord(_Record):
    kind: Literal["checkpoint"] = "checkpoint"
    checkpoint_id: str
    turn_id: str | None = None
    label: str = ""
    scope: str = ""
    warnings: list[str] = Field(default_factory=list)


class RewindRecord(_Record):
    """A rewind. With the conversation restored, the model view goes back to before
    the checkpoint's user message; the records after it stay here (a branch)."""

    kind: Literal["rewind"] = "rewind"
    checkpoint_id: str
    restore: RestoreWhat
    undo_checkpoint_id: str | None = None
    restored: list[str] = Field(default_factory=list)
    skipped_conflicts: list[str] = Field(default_factory=list)


class BackgroundResultRecord(_Record):
    """A background job (sub-agent) ended: the model sees it on its next request."""

    kind: Literal["background_result"] = "background_result"
    job_id: str
    description: str
    state: BackgroundState
    text: str


class HookRecord(_Record):
    """One hook command's run: what ran (``command``, configured at ``source``), how it
    ended, what it decided; ``context`` is what the model is told because of it."""

    kind: Literal["hook"] = "hook"
    event: HookEvent
    command: str
    source: str
    ending: HookEnding
    decision: HookDecision = HookDecision.NONE
    turn_id: str | None = None
    tool_use_id: str | None = None
    exit_code: int | None = None
    signal: str | None = None
    duration_s: float = 0.0
    reason: str = ""
    context: str = ""


class NoticeRecord(_Record):
    kind: Literal["notice"] = "notice"
    level: NoticeLevel
    text: str


Record = Annotated[
    Union[
        SessionStarted,
        AgentProcessRecord,
        UserMessageRecord,
        ModelRequestRecord,
        RetryRecord,
        AssistantMessageRecord,
        ToolIntentRecord,
        ToolStateRecord,
        ToolResultRecord,
        PermissionRecord,
        SteerRecord,
        TurnEndedRecord,
        CheckpointRecord,
        RewindRecord,
        BackgroundResultRecord,
        HookRecord,
        NoticeRecord,
        UsageRecord,
        CompactionRecord,
        MemoryNoteRecord,
        ModelChangeRecord,
        ConversationClearedRecord,
    ],
    Field(discriminator="kind"),
]
RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)


class JournalWriteError(OSError):
    """The record could not be saved to disk (it is still kept in memory)."""

    def notice(self) -> Notice:
        """What the user is told (the status line keeps saying it)."""
        return Notice(level=NoticeLevel.ERROR, text=str(self), code=NoticeCode.JOURNAL_WRITE_FAILED)


class SetAside(BaseModel):
    """A line of a loaded journal that could not be trusted, and what it seems to hold."""

    line: int
    kind: str | None = None
    tool_use_id: str | None = None
    torn: bool = False  # the last line, cut short (a crash while it was written)

    def describe(self) -> str:
        what = self.kind or "unreadable"
        if self.kind == "tool_result" and self.tool_use_id:
            what = f"the result of {self.tool_use_id}, which now reads as unknown"
        elif self.tool_use_id:
            what += f" of {self.tool_use_id}"
        return f"line {self.line}{' (cut short)' if self.torn else ''}: {what}"


# Each line ends with the CRC-32 of the record's JSON before it: a line that was cut
# short or changed on disk is set aside, never taken for what it seemed to say.
_CRC_TAIL = re.compile(rb',"crc":"([0-9a-f]{8})"\}$')
# The shape of a checksum tail with its key or digits changed: such a line is damaged,
# not one written before lines had a checksum.
_CRC_SHAPED = re.compile(rb',"[^"]{3}":"[^"]{8}"\}$')
_KIND = re.compile(r'"kind":\s*"([a-z_]{1,40})"')
_TOOL_USE_ID = re.compile(r'"tool_use_id":\s*"([A-Za-z0-9_-]{1,80})"')
SET_ASIDE_SUFFIX = ".set-aside"  # where a torn last line goes before the next append


def encode_line(record: Any) -> bytes:
    body = record.model_dump_json().encode("utf-8")
    return body[:-1] + b',"crc":"%08x"}\n' % zlib.crc32(body)


def _checked(line: bytes) -> tuple[bytes, bool | None]:
    """The record's JSON, and whether its checksum holds (None: the line has none)."""
    match = _CRC_TAIL.search(line)
    if match is None:
        return line, False if _CRC_SHAPED.search(line) else None
    body = line[: match.start()] + b"}"
    return body, zlib.crc32(body) == int(match.group(1), 16)


def parse_line(raw: bytes, *, unchecked_ok: bool = True) -> tuple[Any | None, bool]:
    """The record one line holds, and whether its checksum held. None when the line
    cannot be trusted; a line without a checksum only when ``unchecked_ok``."""
    body, ok = _checked(raw)
    if ok is False or (ok is None and not unchecked_ok):
        return None, False
    try:
        record = RECORD_ADAPTER.validate_python(json.loads(body.decode("utf-8", errors="replace")))
    except (ValueError, ValidationError, RecursionError):  # nested too deep
        return None, False
    return record, bool(ok)


class Journal:
    """Append-only; thread-safe; optionally backed by a JSONL file.

    A write that fails is undone (the file is cut back to its last whole line) and
    the records wait in memory; the next write that succeeds saves them first, in
    order, so the file is always a prefix of the conversation.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._records: list[Any] = []
        self._lock = threading.Lock()
        self._seq = 0
        self._fd: int | None = None
        self._unsaved: list[bytes] = []  # encoded lines not yet on disk, in order
        self._failing = False
        self.set_aside: list[str] = []  # unreadable lines found when loading
        self.damaged: list[SetAside] = []  # the same lines, described
        # Told when writes succeed again after a failure (the session's emit).
        self.on_recovered: Callable[[Notice], None] | None = None

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
            journal._records.append(record)
            journal._seq = max(journal._seq, record.seq)
        return journal

    def _set_aside(self, number: int, raw: bytes, *, torn: bool) -> None:
        text = raw.decode("utf-8", errors="replace")
        self.set_aside.append(text)
        kind = _KIND.search(text[:4000])
        tool = _TOOL_USE_ID.search(text[:4000])
        self.damaged.append(SetAside(
            line=number, kind=kind.group(1) if kind else None,
            tool_use_id=tool.group(1) if tool else None, torn=torn,
        ))

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

    @property
    def records(self) -> list[Any]:
        with self._lock:
            return list(self._records)

    def append(self, record: Any, *, durable: bool = False) -> Any:
        """Add a record; write it through to disk when the journal has a file.

        Raises JournalWriteError when the disk write fails; the record stays in
        memory (and is written with the next write that succeeds), so the
        conversation can go on.
        """
        recovered: Notice | None = None
        with self._lock:
            self._seq += 1
            record.seq = self._seq
            record.ts = time.time()
            self._records.append(record)
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
        with self._lock:
            self._close_quietly()
