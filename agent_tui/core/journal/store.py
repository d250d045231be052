"""Saved sessions: one folder per session under the state home, holding its journal.

Lists sessions (time, workspace, first message, how the last turn ended), finds the
latest one for a workspace (``--continue``) and opens one by id (``--resume``). A
session is open in one agent process at a time (``session_lock.py``): opening one
that is open elsewhere forks it, a new session whose journal starts as a copy of
the other's up to its last whole line.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import json
import secrets
import time
from pathlib import Path

from pydantic import ConfigDict

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.atomic import write_atomic
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.journal_lines import encode_line, parse_line
from agent_tui.core.journal.records import (
    AgentProcessRecord,
    SessionStarted,
    TurnEndedRecord,
    ForkReason,
    SessionForkedRecord,
    SessionNamedRecord,
    UserMessageRecord,
)
from agent_tui.core.journal.session_lock import SessionHeld, SessionLock
from agent_tui.paths import folder_bytes, private_dir
from agent_tui.units import format_bytes

JOURNAL_NAME = "journal.jsonl"


class SessionInfo(DeferredModel):
    id: str
    path: Path
    updated: float
    workspace: str = ""
    first_message: str = ""
    last_status: str = ""
    bytes_used: int = 0  # the session's folder: journal, branches, checkpoints
    name: str = ""  # /rename


class SessionNotFound(LookupError):
    pass


class Fork(DeferredModel):
    """Where a forked session came from."""

    source: str  # the session it is a copy of
    reason: ForkReason
    holder_pid: int | None = None  # open elsewhere: the process that has it


class OpenedSession(DeferredModel):
    """A session this process holds: its id, its journal's path and its lock."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    path: Path
    lock: SessionLock
    fork: Fork | None = None


class SessionStore:
    def __init__(self, home: Path) -> None:
        self.root = home / "sessions"

    def new_id(self) -> str:
        return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)

    def journal_path(self, session_id: str) -> Path:
        return self.root / session_id / JOURNAL_NAME

    def create(self) -> OpenedSession:
        """A new session's folder, held by this process (its journal comes later)."""
        while True:
            session_id = self.new_id()
            folder = self.root / session_id
            private_dir(self.root)
            try:
                folder.mkdir(mode=0o700)
            except FileExistsError:
                continue
            return OpenedSession(id=session_id, path=folder / JOURNAL_NAME,
                                 lock=SessionLock.acquire(folder))

    def open(self, session_id: str, *, fork: bool = False,
             fork_if_held: bool = True) -> OpenedSession:
        """Hold saved session ``session_id``; or, when ``fork`` is asked or it is open
        elsewhere (unless ``fork_if_held`` is False: then SessionHeld), a fork of it."""
        info = self.find(session_id)
        if fork:
            return self._fork(info, Fork(source=session_id, reason=ForkReason.ASKED))
        try:
            lock = SessionLock.acquire(info.path.parent)
        except SessionHeld as held:
            if not fork_if_held:
                raise
            return self._fork(info, Fork(source=session_id, reason=ForkReason.OPEN_ELSEWHERE,
                                         holder_pid=held.pid))
        return OpenedSession(id=session_id, path=info.path, lock=lock)

    def _fork(self, info: SessionInfo, fork: Fork) -> OpenedSession:
        """A new session whose journal is the source's up to its last whole line (the
        source's holder may be writing its next one), then a ``session_forked`` record:
        written whole or not at all."""
        data = info.path.read_bytes()
        data = data[: data.rfind(b"\n") + 1]
        seqs = [record.seq for line in data.split(b"\n") if line.strip()
                for record in [parse_line(line)[0]] if record is not None]
        last = max(seqs, default=0)
        data += encode_line(SessionForkedRecord(
            source=fork.source, source_seq=last, reason=fork.reason,
            holder_pid=fork.holder_pid, seq=last + 1, ts=time.time(),
        ))
        opened = self.create()
        try:
            write_atomic(opened.path.parent, JOURNAL_NAME, data)
        except BaseException:
            opened.lock.release()
            raise
        opened.fork = fork
        return opened

    def list(self) -> list[SessionInfo]:
        infos = []
        if not self.root.is_dir():
            return []
        for folder in self.root.iterdir():
            path = folder / JOURNAL_NAME
            if path.is_file():
                infos.append(_summarise(folder.name, path))
        return sorted(infos, key=lambda i: i.updated, reverse=True)

    def latest_for(self, workspace: Path) -> SessionInfo:
        want = str(workspace.resolve())
        infos = self.list()
        for info in infos:
            if info.workspace == want:
                return info
        unknown = [i.id for i in infos if not i.workspace and i.first_message]
        hint = (f" ({len(unknown)} saved session(s) do not say their workspace, their first "
                f"line is damaged: --resume {unknown[0]} opens one)") if unknown else ""
        raise SessionNotFound(f"no saved session for workspace {want}{hint}")

    def find(self, session_id: str) -> SessionInfo:
        path = self.journal_path(session_id)
        if "/" in session_id or not path.is_file():
            raise SessionNotFound(f"no saved session with id {session_id!r}")
        return _summarise(session_id, path)


def _summarise(session_id: str, path: Path) -> SessionInfo:
    info = SessionInfo(
        id=session_id, path=path, updated=path.stat().st_mtime,
        bytes_used=folder_bytes(path.parent),
    )
    try:
        journal = Journal.load(path)
    except OSError:
        return info
    for record in journal.records:
        if isinstance(record, SessionStarted) and not info.workspace:
            info.workspace = record.workspace
        elif isinstance(record, AgentProcessRecord) and not info.workspace:
            info.workspace = record.workspace  # the first line was lost
        elif isinstance(record, UserMessageRecord) and not info.first_message:
            info.first_message = record.text
        elif isinstance(record, TurnEndedRecord):
            info.last_status = record.status
        elif isinstance(record, SessionNamedRecord):
            info.name = record.name
    return info


def describe(info: SessionInfo) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
    first = json.dumps(info.first_message[:60])
    name = f"[{info.name}]  " if info.name else ""
    return (
        f"{info.id}  {when}  {info.last_status or '-':9}  {format_bytes(info.bytes_used):>9}  "
        f"{name}{info.workspace}  {first}"
    )
