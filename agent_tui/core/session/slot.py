"""One slot for the work that runs in the session: a turn, a compaction, a rewind,
``/clear``, a ``!`` command or a custom command's ``!`` lines, one at a time.

Work starts one way (:meth:`Slot.start`): the slot holds it with the cancel scope it
runs under, runs it as one task, and releases it (the scope detached); then what
follows that work runs, then the ops that waited for it, in order. What arrives while
work runs is decided one way (:func:`arrival`): it starts work, joins the running
turn, waits for the slot, or is refused (:func:`refusal` says why).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, assert_never

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.commands.command_run import CommandRun
from agent_tui.core.commands.op_dispatch import SessionOp
from agent_tui.core.turn.turn import Turn
from agent_tui.protocol import (
    ClearConversation,
    Compact,
    Event,
    FollowUp,
    Notice,
    NoticeLevel,
    Rewind,
    RunShell,
    SendNow,
    UserMessage,
)


class WorkKind(StrEnum):
    """What runs in the slot."""

    TURN = "turn"
    COMPACTION = "compaction"  # /compact between turns
    REWIND = "rewind"
    CLEAR = "clear"  # /clear with hooks (without them it is instant and never holds)
    USER_COMMAND = "user_command"  # a ``!`` command the user typed
    COMMAND_LINES = "command_lines"  # a custom command's ``!`` lines, before its prompt


@dataclass(frozen=True)
class Work:
    """One piece of work in the slot, and the scope that an interrupt cancels."""

    kind: WorkKind
    # A rewind does not read its scope: files are never restored halfway.
    scope: CancelScope
    turn: Turn | None = None  # a TURN's turn: steers and tool cancels reach it
    command: CommandRun | None = None  # whose lines a COMMAND_LINES runs

    def __post_init__(self) -> None:
        if (self.kind is WorkKind.TURN) != (self.turn is not None):
            raise ValueError("a turn, and only a turn, carries its Turn")
        if (self.kind is WorkKind.COMMAND_LINES) != (self.command is not None):
            raise ValueError("a command's lines, and only they, carry their command")


@dataclass
class AfterTurn:
    """What asked to run once the running turn ends (before its queued follow-ups)."""

    compact: str | None = None  # /compact's focus: a compaction runs first
    commands: list[CommandRun] = field(default_factory=list)  # after the steers


class Arrival(StrEnum):
    """What becomes of an op that starts work, by what runs when it arrives."""

    START = "start"  # the slot is free: the op starts its work
    JOIN = "join"  # it joins the running turn: a steer, a follow-up, work after the turn
    WAIT = "wait"  # it waits whole for the slot, then is handled again
    REFUSE = "refuse"  # it is not done, and the user is told why


#: The ops that start work in the slot (or join or wait for what runs there).
SlotOp = UserMessage | SendNow | FollowUp | Compact | ClearConversation | RunShell | Rewind | CommandRun
SLOT_OPS = (
    UserMessage, SendNow, FollowUp, Compact, ClearConversation, RunShell, Rewind, CommandRun,
)


def arrival(running: WorkKind | None, op: SlotOp) -> Arrival:
    """The one rule for an op that arrives while ``running`` runs (None: nothing)."""
    if running is None:
        return Arrival.START
    match running:
        case WorkKind.TURN:
            # Clearing, rewinding or a ``!`` command under a running turn would pull the
            # conversation (or the files) from under it: the user stops it first.
            if isinstance(op, ClearConversation | RunShell | Rewind):
                return Arrival.REFUSE
            return Arrival.JOIN
        case (WorkKind.COMPACTION | WorkKind.REWIND | WorkKind.CLEAR
              | WorkKind.USER_COMMAND | WorkKind.COMMAND_LINES):
            # A rewind is asked about what the conversation is now: never queued behind
            # work that changes it.
            return Arrival.REFUSE if isinstance(op, Rewind) else Arrival.WAIT
        case _:
            assert_never(running)


def refusal(running: WorkKind, op: SlotOp) -> str:
    """What the user is told when ``arrival`` refuses ``op``."""
    match running:
        case WorkKind.TURN:
            if isinstance(op, ClearConversation):
                return "a turn is running: stop it (Esc) before /clear"
            if isinstance(op, RunShell):
                return ("a turn is running: ! commands run when the agent is idle "
                        "(stop it with Esc first)")
            return "a turn is running: stop it (Esc) before rewinding"
        case WorkKind.REWIND:
            return "a rewind is already running"
        case (WorkKind.COMPACTION | WorkKind.CLEAR | WorkKind.USER_COMMAND
              | WorkKind.COMMAND_LINES):
            return f"{_NAMES[running]} is running: rewind once it is done"
        case _:
            assert_never(running)


_NAMES = {
    WorkKind.COMPACTION: "a compaction", WorkKind.CLEAR: "/clear",
    WorkKind.USER_COMMAND: "a ! command", WorkKind.COMMAND_LINES: "a command's ! lines",
}


def counts_as_busy(kind: WorkKind) -> bool:
    """Whether front ends see the agent at work (``Session.busy``): a turn, or the
    lines of a command whose turn follows; a compaction, a rewind, ``/clear`` or a
    ``!`` command holds the session without being a turn."""
    match kind:
        case WorkKind.TURN | WorkKind.COMMAND_LINES:
            return True
        case WorkKind.COMPACTION | WorkKind.REWIND | WorkKind.CLEAR | WorkKind.USER_COMMAND:
            return False
        case _:
            assert_never(kind)


class Slot:
    """What runs in the session now (one piece of work at most), what waits for it,
    and what asked to run after the running turn. Used on the session's loop, except
    :meth:`stop`, which any thread may call."""

    def __init__(self, replay: Callable[[SessionOp], None], emit: Callable[[Event], None]) -> None:
        self._replay = replay  # how a waiting op is handled once the slot is free
        self._emit = emit
        self.running: Work | None = None
        self.after_turn = AfterTurn()
        self._task: asyncio.Task[None] | None = None
        self._waiting: list[SessionOp] = []

    @property
    def kind(self) -> WorkKind | None:
        work = self.running
        return work.kind if work is not None else None

    @property
    def turn(self) -> Turn | None:
        work = self.running
        return work.turn if work is not None else None

    def start(self, work: Work, body: Coroutine[Any, Any, None],
              then: Callable[[], None] | None = None) -> None:
        """Hold the slot for ``work`` and run ``body`` under its scope; once it ends,
        release the slot, run ``then`` (which may start the next work), then hand back
        the ops that waited."""
        if self.running is not None:
            body.close()
            raise RuntimeError(f"{work.kind} started while {self.running.kind} runs")
        self.running = work
        self._task = asyncio.get_running_loop().create_task(self._run(work, body, then))

    async def _run(self, work: Work, body: Coroutine[Any, Any, None],
                   then: Callable[[], None] | None) -> None:
        try:
            await body
        except Exception as exc:  # a bug in the work: say so, never hold the slot
            self._emit(Notice(level=NoticeLevel.ERROR, text=f"{work.kind} failed: {exc!r}"))
        finally:
            work.scope.detach()
            self.running = None
            self._task = None
        if then is not None:
            then()
        waiting, self._waiting = self._waiting, []
        for op in waiting:
            self._replay(op)

    def wait(self, op: SessionOp) -> None:
        """``op`` waits for the slot (``Arrival.WAIT``)."""
        self._waiting.append(op)

    def stop(self, *, hurry: bool = False) -> bool:
        """Cancel what runs (any thread): True when this cancelled it. ``hurry``: what
        is being stopped already is stopped now, without its grace."""
        work = self.running
        if work is None:
            return False
        if work.scope.cancel(CancelReason.USER_INTERRUPT):
            return True
        if hurry:
            work.scope.hurry()
        return False

    async def settle(self) -> None:
        """Wait until nothing runs, what followed each piece of work included."""
        while (task := self._task) is not None:
            await asyncio.wait({task})
