"""One slot for the work that runs in the session: a turn, a compaction, a rewind,
``/clear``, a ``!`` command or a custom command's ``!`` lines, one at a time.

Work starts one way (:meth:`Slot.start`): a :class:`~agent_tui.core.services.tasks.SessionTask`
and the cancel scope its starter made for it. The slot holds the task, runs it as one
asyncio task, tells it when its scope cancelled it, and releases it (the scope
detached); then what follows that work runs, then the ops that waited for it, in
order. What arrives while work runs is decided one way (:func:`arrival`): it starts
work, joins the running turn, waits for the slot, or is refused (:func:`refusal`
says why).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import assert_never

from agent_tui.cancel import CancelReason, Cancelled, CancelScope
from agent_tui.core.commands.command_run import CommandRun
from agent_tui.core.commands.op_dispatch import SessionOp
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind
from agent_tui.core.turn.turn import Turn
from agent_tui.core.turn.turn_task import TurnTask
from agent_tui.protocol import (
    ClearConversation,
    Compact,
    FollowUp,
    Notice,
    NoticeLevel,
    Rewind,
    RunShell,
    SendNow,
    UserMessage,
)

__all__ = ["AfterTurn", "Arrival", "SLOT_OPS", "Slot", "SlotOp", "Work", "WorkKind",
           "arrival", "counts_as_busy", "refusal"]


@dataclass(frozen=True)
class Work:
    """The task in the slot, and the scope that an interrupt cancels (a rewind does
    not read its scope: files are never restored halfway)."""

    task: SessionTask
    scope: CancelScope

    @property
    def kind(self) -> WorkKind:
        return self.task.kind


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
    """What runs in the session now (one task at most), what waits for it, and what
    asked to run after the running turn. Used on the session's loop, except
    :meth:`stop`, which any thread may call."""

    def __init__(self, replay: Callable[[SessionOp], None], ctx: TaskContext) -> None:
        self._replay = replay  # how a waiting op is handled once the slot is free
        self._ctx = ctx
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
        """The running turn (steers and tool cancels reach it), if a turn runs."""
        work = self.running
        return work.task.turn if work is not None and isinstance(work.task, TurnTask) else None

    def start(self, task: SessionTask, scope: CancelScope,
              then: Callable[[], None] | None = None) -> None:
        """Hold the slot for ``task`` and run it under ``scope``; once it ends, release
        the slot, run ``then`` (which may start the next work), then hand back the ops
        that waited."""
        if self.running is not None:
            raise RuntimeError(f"{task.kind} started while {self.running.kind} runs")
        work = Work(task, scope)
        self.running = work
        self._task = asyncio.get_running_loop().create_task(self._run(work, then))

    async def _run(self, work: Work, then: Callable[[], None] | None) -> None:
        task, scope, ctx = work.task, work.scope, self._ctx
        try:
            try:
                await task.run(ctx, scope)
            except Cancelled:
                await task.aborted(ctx, scope)
        except Exception as exc:  # a bug in the work: say so, never hold the slot
            ctx.emit(Notice(level=NoticeLevel.ERROR, text=f"{task.what} failed: {exc!r}"))
        finally:
            scope.detach()
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
