"""The session's conversation as a transcript in Claude Code's JSONL shape, for hooks.

Claude Code gives every hook ``transcript_path``: a file with one JSON object per
line, each a message of the conversation (``type`` ``user`` or ``assistant``, and
``message`` with ``role`` and ``content`` blocks as the Messages API has them), linked
by ``uuid`` and ``parentUuid`` (a tree: the conversation is the chain that ends at
the last line; a rewind of the conversation branches from the line before the
rewound message, and ``/clear`` starts a new root) and stamped with ``sessionId``, ``timestamp`` and
``cwd``, written compact as Claude Code writes it (``{"type":"assistant"...}``, no
spaces): hook scripts grep it, a Stop hook for the last thing the assistant said.

:class:`ClaudeTranscript` writes that file beside the journal (``transcript.jsonl`` in
the session's folder) from the journal's records, which stay the one source of
truth: what the user said (``user_message``, injected steers), what the model
answered (``assistant_message``: its tool calls under Claude Code's tool names and
input keys), each tool's result (a ``user`` line with a ``tool_result`` block), and a
compaction's summary. :meth:`ClaudeTranscript.sync` appends the records not written
yet; the hook points call it before every hook runs, so a hook reads the
conversation up to the moment it runs. The file is append-only and owner-only
(0600); each line's ``uuid`` is derived from the session and the record's sequence
number, so a resumed session goes on where the file ends and never writes a line
twice. Writing it is never a reason a turn fails: a failed write is said once, in a
notice, and tried again at the next sync.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    CompactionRecord,
    ConversationClearedRecord,
    RewindRecord,
    SteerRecord,
    ToolResultRecord,
    UserMessageRecord,
)
from agent_tui.protocol.events import Event, Notice
from agent_tui.protocol.states import NoticeLevel, RestoreWhat
from agent_tui.protocol.tool_names import claude_input, claude_name

TRANSCRIPT_NAME = "transcript.jsonl"
_NAMESPACE = uuid.UUID("6f1c4b1e-55d2-4c47-9a43-0d6c2b1f7a31")


class ClaudeTranscript:
    """The transcript of one journal: the main agent's, or a sub-agent's (``agent_id``
    given: its lines are a side chain, ``isSidechain`` and ``agentId``, as Claude Code's)."""

    def __init__(
        self, journal: Journal, path: Path, *, session_id: str, cwd: str,
        emit: Callable[[Event], None] | None = None, agent_id: str | None = None,
    ) -> None:
        self.journal = journal
        self.agent_id = agent_id
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.emit = emit
        self._lock = threading.Lock()
        self._written: set[str] | None = None  # uuids in the file (read on first sync)
        self._last: str | None = None  # the conversation's last line: the next one's parent
        self._done_seq = 0  # every record up to this one is in the file
        # turn id -> the parent of its user message's line: where a rewind goes back to
        self._before_turn: dict[str, str | None] = {}
        self._failing = False

    @classmethod
    def beside(
        cls, journal: Journal, *, session_id: str, cwd: str,
        emit: Callable[[Event], None] | None = None,
    ) -> ClaudeTranscript | None:
        """The transcript in the journal's folder (None: a journal without a file)."""
        if journal.path is None:
            return None
        return cls(journal, journal.path.parent / TRANSCRIPT_NAME, session_id=session_id,
                   cwd=cwd, emit=emit)

    def sync(self) -> None:
        """Append the lines of the records not in the file yet; never raises."""
        with self._lock:
            try:
                self._sync()
            except (OSError, ValueError) as exc:
                if not self._failing and self.emit is not None:
                    self.emit(Notice(level=NoticeLevel.WARNING, text=(
                        f"the transcript for hooks ({self.path}) could not be written: "
                        f"{getattr(exc, 'strerror', None) or exc}; hooks that read it see "
                        "an older conversation")))
                self._failing = True
                return
            self._failing = False

    def _sync(self) -> None:
        if self._written is None:
            self._written = self._read_written()
        records = self.journal.records_after(self._done_seq)  # outputs let go of: read back
        lines: list[bytes] = []
        new: list[str] = []
        # The first sync walks the whole journal (lines already in the file included),
        # so a resumed session links its lines as the first process did.
        last = self._last if self._done_seq else None
        for record in records:
            match record:
                case UserMessageRecord(turn_id=turn_id):
                    self._before_turn[turn_id] = last
                case RewindRecord(restore=restore, checkpoint_id=checkpoint) if (
                        restore is not RestoreWhat.CODE and checkpoint in self._before_turn):
                    last = self._before_turn[checkpoint]  # a branch from before that message
                case ConversationClearedRecord():
                    last = None  # /clear: a conversation of its own from here
                case _:
                    pass
            for n, entry in enumerate(_entries(record, self.cwd)):
                line_id = str(uuid.uuid5(_NAMESPACE, f"{self.session_id}:{record.seq}:{n}"))
                if line_id in self._written:
                    last = line_id
                    continue
                line = {
                    "parentUuid": last, "isSidechain": self.agent_id is not None,
                    **({"agentId": self.agent_id} if self.agent_id is not None else {}),
                    "userType": "external",
                    "cwd": self.cwd, "sessionId": self.session_id, "version": _version(),
                    **entry, "uuid": line_id, "timestamp": _stamp(record.ts),
                }
                text = json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)
                lines.append(text.encode() + b"\n")
                new.append(line_id)
                last = line_id
        if lines:
            self._append(b"".join(lines))
            self._written.update(new)
        if records:
            self._last = last
            self._done_seq = records[-1].seq

    def _append(self, data: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a line cut short stays alone on its line
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError:
            self._written = None  # part of it may be there: next time the file says what
            raise
        finally:
            os.close(fd)

    def _read_written(self) -> set[str]:
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return set()
        written: set[str] = set()
        for raw in data.split(b"\n"):
            try:
                line = json.loads(raw)
            except ValueError:
                continue  # a line cut short: written again
            if isinstance(line, dict) and isinstance(line.get("uuid"), str):
                written.add(line["uuid"])
        return written


def _entries(record: Any, cwd: str) -> list[dict[str, Any]]:
    """The transcript lines one record stands for (most records: none)."""
    match record:
        case UserMessageRecord(text=text, images=images):
            return [_user(_user_content(text, images))]
        case SteerRecord(delivery="injected", text=text, images=images):
            return [_user(_user_content(text, images))]
        case AssistantMessageRecord(blocks=blocks, ended=ended, model=model):
            message = {
                "id": f"msg_{record.seq}", "type": "message", "role": "assistant",
                "model": model or "", "content": [_claude_block(b, cwd) for b in blocks],
                "stop_reason": ended, "stop_sequence": None,
            }
            return [{"type": "assistant", "message": message}]
        case ToolResultRecord(tool_use_id=tool_use_id, content=content, is_error=is_error):
            block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content,
                     "is_error": is_error}
            entry = _user([block])
            entry["toolUseResult"] = content
            return [entry]
        case CompactionRecord(summary=summary):
            entry = _user(summary)
            entry["isCompactSummary"] = True
            return [entry]
        case _:
            return []


def _user(content: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}}


def _user_content(text: str, images: list[Any]) -> Any:
    if not images:
        return text
    blocks: list[dict[str, Any]] = [
        {"type": "image", "source": {"type": "base64", "media_type": str(i.media_type),
                                     "data": i.data}}
        for i in images
    ]
    return [*blocks, {"type": "text", "text": text}]


def _claude_block(block: dict[str, Any], cwd: str) -> dict[str, Any]:
    """A content block as Claude Code writes it: a tool call under its tool's name."""
    if block.get("type") != "tool_use":
        return block
    name = str(block.get("name", ""))
    given = block.get("input")
    return {**block, "name": claude_name(name),
            "input": claude_input(name, given, cwd) if isinstance(given, dict) else given}


def _stamp(ts: float) -> str:
    when = datetime.fromtimestamp(ts or 0, tz=timezone.utc)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@functools.cache
def _version() -> str:
    """agent-tui's version, read from its package's metadata at the first line written (a
    session whose hooks never run never reads it)."""
    try:
        from importlib.metadata import version

        return version("agent-tui")
    except Exception:  # not installed as a package: the version is unknown
        return ""
