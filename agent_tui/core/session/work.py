"""The work the session runs in its slot, started where its cancel scope is made.

:class:`SessionWork` holds the handlers of the ops that start work (a message, a
compaction, ``/clear``, a ``!`` command, a rewind, a custom command with a turn of its
own) and what follows each piece of work: after a turn, a compaction asked
meanwhile, then queued steers, a command that waited, follow-ups. Each piece of work
is one task (``core/services/tasks.py``) started in the slot with a child of the
session's scope, made beside the start.

A custom command sent while idle runs at once: its ``!`` lines in the slot, then its
prompt as a turn under the command's policy and model. Sent while a turn runs, it
waits for that turn to end and starts after the steers (before the follow-ups); when
that turn does not complete, it is not run, and said so.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence

from agent_tui.cancel import CancelScope
from agent_tui.core.commands.command_run import CommandRun
from agent_tui.core.commands.command_task import CommandLinesTask
from agent_tui.core.compaction.compaction_task import CompactionTask
from agent_tui.core.hooks.idle import IdleReminder
from agent_tui.core.journal.records import SteerRecord
from agent_tui.core.modes.bash_mode import UserCommandTask
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.queue import Queued
from agent_tui.core.services.tasks import TaskContext
from agent_tui.core.session.clear import ClearTask, clear
from agent_tui.core.session.rewind import Rewinder, RewindTask
from agent_tui.core.session.slot import Slot
from agent_tui.core.turn.request import thinking_params
from agent_tui.core.turn.turn import Turn
from agent_tui.core.turn.turn_task import TurnTask
from agent_tui.protocol import (
    ClearConversation,
    Compact,
    FollowUp,
    ImageAttachment,
    Notice,
    NoticeLevel,
    Rewind,
    RunShell,
    SendNow,
    SteerDelivery,
    SteerKind,
    SteerState,
    SteerStatus,
    TurnStatus,
    UserMessage,
)

#: What a turn waits for (bounded by each) before its first model request.
Ready = asyncio.Future[list[BaseException | None]]


class SessionWork:
    """Starts the session's work in its slot, and what follows each piece of it."""

    def __init__(self, ctx: TaskContext, *, root: CancelScope, slot: Slot, rewinder: Rewinder,
                 idle: IdleReminder, ready: Callable[[], Ready | None], first_turn: int) -> None:
        self.ctx = ctx
        self.deps = ctx.deps
        self.root = root
        self.slot = slot
        self.rewinder = rewinder
        self.idle = idle
        self._ready = ready
        self._turn_ids = itertools.count(first_turn)
        self.last_status: TurnStatus | None = None  # how the last turn ended

    # -- the handlers ---------------------------------------------------------------

    def on_message(self, op: UserMessage | SendNow | FollowUp) -> None:
        turn = self.slot.turn
        if turn is None:
            self.start_turn(op.text, images=op.images)
            return
        kind = SteerKind.FOLLOW_UP if isinstance(op, FollowUp) else SteerKind.STEER
        self._enqueue(kind, op.text, op.images)
        if isinstance(op, SendNow):
            turn.send_to_background()

    def on_compact(self, op: Compact) -> None:
        if self.slot.turn is not None:
            self.slot.after_turn.compact = op.instructions
            self.ctx.emit(Notice(level=NoticeLevel.INFO,
                                 text="compaction will run when this turn ends"))
        else:
            self._start_compaction(op.instructions)

    def on_clear_conversation(self, op: ClearConversation) -> None:
        if self.deps.hooks is None:
            clear(self.ctx)
        else:  # in the slot while the hooks run; Esc ends them
            self.slot.start(ClearTask(), self.root.child("clear"))

    def on_run_shell(self, op: RunShell) -> None:
        self.slot.start(UserCommandTask(op.command), self.root.child("bash_mode"))

    def on_rewind(self, op: Rewind) -> None:
        # Its scope is never read: files are never restored halfway.
        self.slot.start(RewindTask(self.rewinder, op), self.root.child("rewind"))

    def on_command(self, run: CommandRun) -> None:
        if self.slot.turn is None:
            self._start_command(run)
            return
        self.slot.after_turn.commands.append(run)
        self.ctx.emit(Notice(level=NoticeLevel.INFO, text=f"/{run.name} runs when this turn ends"))

    # -- turns ----------------------------------------------------------------------

    def start_turn(self, text: str, applied: Sequence[Queued] = (),
                   images: Sequence[ImageAttachment] = (),
                   deps: SessionDeps | None = None) -> None:
        turn_id = f"t{next(self._turn_ids)}"
        images = [*images, *(image for item in applied for image in item.images)]
        for item in applied:
            self.ctx.record(SteerRecord(
                id=item.id, steer_kind=item.kind, state=SteerStatus.APPLIED, text=item.text,
                turn_id=turn_id, delivery=SteerDelivery.NEW_TURN,
            ))
            self.ctx.emit(SteerState(id=item.id, state=SteerStatus.APPLIED, kind=item.kind,
                                     text=item.text, images=[i.label for i in item.images]))
        checkpoint = self.rewinder.start_checkpoint(turn_id, text)
        scope = self.root.child(turn_id)
        task = TurnTask(Turn(deps or self.deps, turn_id, scope, text, checkpoint,
                             ready=self._ready(), images=images))
        self.slot.start(task, scope, then=lambda: self._after_turn(task))

    def _after_turn(self, task: TurnTask) -> None:
        self.last_status = task.status
        after = self.slot.after_turn
        if after.compact is not None:
            # /compact asked while the turn ran: now, before what was queued starts.
            focus, after.compact = after.compact, None
            self._start_compaction(focus, then=self._next_turn)
            return
        self._next_turn()
        if self.slot.kind is None:  # nothing follows: the user is waited for
            self.idle.arm()

    def _next_turn(self) -> None:
        """After a turn: queued steers start the next one, then follow-ups."""
        if self.last_status is TurnStatus.COMPLETED:
            steers = self.deps.queue.take_steers()
            if steers:
                self.start_turn("\n\n".join(s.text for s in steers), steers)
                return
            if self._next_command():
                return
            follow_up = self.deps.queue.take_follow_up()
            if follow_up is not None:
                self.start_turn(follow_up.text, [follow_up])
                return
        else:
            self.return_queued()
            self._drop_commands()

    def _start_compaction(self, focus: str, then: Callable[[], None] | None = None) -> None:
        """``/compact`` between turns, in the slot; Esc cancels it."""
        task = CompactionTask(focus, thinking_params(self.deps))
        self.slot.start(task, self.root.child("compaction"), then=then)

    # -- custom commands with a turn of their own ----------------------------------------

    def _start_command(self, run: CommandRun) -> None:
        task = CommandLinesTask(run)
        self.slot.start(task, self.root.child(f"command {run.name}"),
                        then=lambda: self._command_turn(task))

    def _command_turn(self, task: CommandLinesTask) -> None:
        """Its lines ran and its prompt went through: its turn starts."""
        if task.prompt is not None:
            self.start_turn(task.prompt.text, deps=task.turn_deps(self.deps))

    def _next_command(self) -> bool:
        """After a completed turn: start the command that waited for it, if any."""
        waiting = self.slot.after_turn.commands
        if not waiting:
            return False
        self._start_command(waiting.pop(0))
        return True

    def _drop_commands(self) -> None:
        """The turn they waited for did not complete: they are not run."""
        waiting = self.slot.after_turn.commands
        for run in waiting:
            self.ctx.emit(Notice(level=NoticeLevel.WARNING,
                                 text=f"/{run.name} not run: the turn before it did not complete"))
        waiting.clear()

    # -- the queue --------------------------------------------------------------------

    def _enqueue(self, kind: SteerKind, text: str, images: list[ImageAttachment]) -> None:
        item = self.deps.queue.add(kind, text, images)
        self.ctx.record(SteerRecord(id=item.id, steer_kind=kind, state=SteerStatus.QUEUED,
                                    text=text))
        self.ctx.emit(SteerState(id=item.id, state=SteerStatus.QUEUED, kind=kind, text=text,
                                 images=[i.label for i in images]))

    def return_queued(self) -> None:
        """Give back to the user what is still queued (never sent unseen)."""
        for item in self.deps.queue.take_all():
            self.ctx.record(SteerRecord(id=item.id, steer_kind=item.kind,
                                        state=SteerStatus.RETURNED, text=item.text))
            self.ctx.emit(SteerState(id=item.id, state=SteerStatus.RETURNED, kind=item.kind,
                                     text=item.text))
