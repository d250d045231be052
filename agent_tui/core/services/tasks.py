"""What runs in the session's slot: one task type per kind of work, one interface.

A :class:`SessionTask` names its kind, runs under the cancel scope its starter made
for it (``run(ctx, scope)``), says what happens when that scope cancelled it
(``aborted``), and lists the journal records it writes (``records``). The slot
(``core/session/slot.py``) starts every task the same way and decides by the kind
what may arrive while it runs. Each task class stands in the room of the work it
does: the turn in ``core/turn/``, compaction in ``core/compaction/``, a ``!`` command
in ``core/modes/``, a custom command's lines in ``core/commands/``, rewind and
``/clear`` in ``core/session/``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from pydantic import BaseModel

from agent_tui.cancel import CancelScope
from agent_tui.core.journal.journal import JournalWriteError
from agent_tui.core.journal.records import Record
from agent_tui.core.services.deps import SessionDeps
from agent_tui.protocol import Event


class WorkKind(StrEnum):
    """What runs in the slot."""

    TURN = "turn"
    COMPACTION = "compaction"  # /compact between turns
    REWIND = "rewind"
    CLEAR = "clear"  # /clear with hooks (without them it is instant and never holds)
    USER_COMMAND = "user_command"  # a ``!`` command the user typed
    COMMAND_LINES = "command_lines"  # a custom command's ``!`` lines, before its prompt


@dataclass(frozen=True)
class TaskContext:
    """What a task is given of its session: its dependencies and the two ways out."""

    deps: SessionDeps
    emit: Callable[[Event], None]

    def record(self, record: Record) -> None:
        """Append ``record`` to the journal; a failed write is shown, never raised."""
        try:
            self.deps.journal.append(record)
        except JournalWriteError as exc:
            self.emit(exc.notice())


class SessionTask(ABC):
    """One piece of work for the slot. A subclass sets ``kind`` (what the slot decides
    arrivals by), ``records`` (the journal records it writes) and implements ``run``;
    it overrides ``aborted`` when a cancel must be said or cleaned up."""

    kind: ClassVar[WorkKind]
    #: The journal records this work writes (what a reader of the journal finds of it).
    records: ClassVar[tuple[type[BaseModel], ...]] = ()

    @property
    def what(self) -> str:
        """How a failure of this work is named to the user (``"<what> failed: ..."``)."""
        return str(self.kind)

    @abstractmethod
    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        """Do the work under ``scope`` (its cancel points raise
        :class:`~agent_tui.cancel.Cancelled` once Esc cancelled it)."""

    async def aborted(self, ctx: TaskContext, scope: CancelScope) -> None:
        """``run`` ended on ``Cancelled`` (``scope`` says why): say or undo what must be.
        By default nothing: the work said it already, or nothing was done."""
