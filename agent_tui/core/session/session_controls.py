"""The session's ops about its settings, its queue, approvals and background work.

:class:`SessionControls` holds the handlers ``core/commands/op_dispatch.py`` reaches
through ``Session`` for them: model and thinking switches, model listing,
``/rename``, the permission mode, queue edits, approvals, stopping a call or a
background job, and the rewind menu's points and plans. None of them starts work in
the session's slot (``work.py`` does that); what they run on the side
(:class:`SideTasks`) never holds the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol

from agent_tui.cancel import CancelScope
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.hooks.work_points import directory_added
from agent_tui.core.journal.records import SessionNamedRecord, SteerRecord
from agent_tui.core.modes.plan_mode import switch_mode
from agent_tui.core.services.deps import SubAgentsPort
from agent_tui.core.services.model_control import ModelControl, validate_model
from agent_tui.core.services.queue import Queued
from agent_tui.core.services.tasks import TaskContext
from agent_tui.core.session.rewind import Rewinder
from agent_tui.core.session.slot import Slot
from agent_tui.protocol import (
    CancelTool,
    Decide,
    Decision,
    EditQueued,
    Event,
    Interrupt,
    ListModels,
    ListRewindPoints,
    Notice,
    NoticeLevel,
    PlanRewind,
    RemoveQueued,
    RenameSession,
    SetModel,
    SetPermissionMode,
    SetThinking,
    SteerState,
    SteerStatus,
    StopBackground,
)
from agent_tui.providers.base import ErrorKind


class BackgroundWork(Protocol):
    """Work that outlives turns (background commands, background sub-agents)."""

    def request_stop(self, job_id: str) -> bool:
        """Ask job ``job_id`` to stop; False when it is not one of these."""

    async def shutdown(self) -> None: ...


class SideTasks:
    """Work the session runs beside the slot (model listings, rewind plans, hooks of
    an added folder): it holds nothing, and a failure is said, never raised."""

    def __init__(self, emit: Callable[[Event], None]) -> None:
        self._emit = emit
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def answer(self, coro: Awaitable[Event | None], what: str) -> None:
        """Run ``coro`` beside the slot and emit the event it answers with."""
        self.start(self._answer(coro, what))

    async def _answer(self, coro: Awaitable[Event | None], what: str) -> None:
        try:
            event = await coro
        except Exception as exc:
            self._emit(Notice(level=NoticeLevel.ERROR, text=f"{what} failed: {exc!r}"))
            return
        if event is not None:
            self._emit(event)


class SessionControls:
    """The handlers for the ops about settings, the queue, approvals, background work
    and the rewind menu; ``Session`` hands each op to its one method here."""

    def __init__(self, ctx: TaskContext, *, root: CancelScope, slot: Slot, models: ModelControl,
                 rewinder: Rewinder, subagents: SubAgentsPort, background: list[BackgroundWork],
                 interrupt: Callable[[Interrupt], None],
                 loop: Callable[[], asyncio.AbstractEventLoop | None]) -> None:
        self.ctx = ctx
        self.deps = ctx.deps
        self.root = root
        self.slot = slot
        self.models = models
        self.rewinder = rewinder
        self.subagents = subagents
        self.background = background  # the session's list: the wiring adds to it
        self._interrupt = interrupt
        self._loop = loop
        self.side = SideTasks(ctx.emit)

    def hooked(self, event: str) -> bool:
        """Whether any hook is configured for ``event`` (Claude Code's name), from any thread."""
        hooks = self.deps.hooks
        return hooks is not None and any(row.event == event for row in hooks.rows())

    def directory_added(self, folder: Path) -> None:
        """``DirectoryAdded`` hooks for a folder ``/add-dir`` added (from any thread;
        the folder is in ``added_dirs`` already: the hooks cannot undo it)."""
        loop = self._loop()
        if loop is None or self.deps.hooks is None:
            return
        points = HookPoints(self.deps, self.root, self.ctx.record)
        try:
            loop.call_soon_threadsafe(
                lambda: self.side.start(directory_added(points, str(folder), "slash_command")))
        except RuntimeError:
            pass  # the session has stopped

    def on_set_model(self, op: SetModel) -> None:
        self.side.start(self.models.set_model(op.model))

    def on_set_thinking(self, op: SetThinking) -> None:
        self.models.set_thinking(op.thinking)

    def on_rename_session(self, op: RenameSession) -> None:
        name = " ".join(op.name.split())  # one line: it is listed with the sessions
        if not name:
            self.ctx.emit(Notice(level=NoticeLevel.WARNING, text="/rename needs a name"))
        else:
            self.ctx.record(SessionNamedRecord(name=name))
            self.ctx.emit(Notice(level=NoticeLevel.INFO, text=f"this session is named {name!r}"))

    def on_list_models(self, op: ListModels) -> None:
        self.side.answer(self.models.list_models(), what="listing models")

    def on_set_permission_mode(self, op: SetPermissionMode) -> None:
        switch_mode(self.deps, self.ctx.record, self.ctx.emit, op.mode)

    def on_edit_queued(self, op: EditQueued) -> None:
        self._queue_changed(self.deps.queue.edit(op.id, op.text), SteerStatus.EDITED)

    def on_remove_queued(self, op: RemoveQueued) -> None:
        self._queue_changed(self.deps.queue.remove(op.id), SteerStatus.REMOVED)

    def on_decide(self, op: Decide) -> None:
        if not self.deps.approvals.resolve(op):
            self.ctx.emit(
                Notice(level=NoticeLevel.INFO, text="that permission request is no longer open")
            )
        elif op.stop and op.decision is Decision.DENY:
            # After the waiting call has woken with its answer (it was scheduled first):
            # an interrupt now would reach it first, and it would end cancelled.
            asyncio.get_running_loop().call_soon(self._interrupt, Interrupt())

    def on_cancel_tool(self, op: CancelTool) -> None:
        turn = self.slot.turn
        if not (turn is not None and turn.cancel_call(op.tool_use_id)) and not (
            self.subagents.cancel_call(op.tool_use_id)
        ):
            self.ctx.emit(Notice(level=NoticeLevel.WARNING,
                                 text=f"no running tool call {op.tool_use_id!r}"))

    def on_stop_background(self, op: StopBackground) -> None:
        if not any(work.request_stop(op.id) for work in self.background):
            self.ctx.emit(Notice(level=NoticeLevel.WARNING, text=f"no background job {op.id!r}"))

    def on_list_rewind_points(self, op: ListRewindPoints) -> None:
        self.side.answer(self.rewinder.points(), what="rewind")

    def on_plan_rewind(self, op: PlanRewind) -> None:
        self.side.answer(self.rewinder.plan(op), what="rewind")

    def _queue_changed(self, item: Queued | None, status: SteerStatus) -> None:
        if item is None:  # it was applied (or returned) first: an edit never races it
            self.ctx.emit(Notice(level=NoticeLevel.INFO,
                                 text="that message is no longer queued (already applied)"))
            return
        self.ctx.record(SteerRecord(id=item.id, steer_kind=item.kind, state=status, text=item.text))
        self.ctx.emit(SteerState(id=item.id, state=status, kind=item.kind, text=item.text))

    async def check_model(self) -> None:
        """Learn the model's limits; an unknown model is said at once, with close matches."""
        cfg = self.deps.config
        await self.deps.limits.learn(self.deps.provider, cfg.model)
        error = self.deps.limits.error(cfg.model)
        if error is not None and error.kind is ErrorKind.NOT_FOUND:
            message = await validate_model(self.deps.provider, cfg.model)
            if message:
                self.ctx.emit(Notice(level=NoticeLevel.ERROR, text=(
                    f"{message}. Pick another with --model or /model.")))
