"""The session's ops about its settings, queue and compaction (a part of ``Session``).

The handlers ``core/commands/op_dispatch.py`` calls for them: model and thinking switches, model
listing, ``/clear`` (with its ``SessionEnd`` and ``SessionStart`` hooks, in the
session's slot), ``/rename``, queue edits, approvals, stopping a call or a
background job, ``!`` commands, rewind, and ``/compact`` between turns (in the slot:
nothing starts until it is done, and Esc cancels it, leaving the conversation
exactly as it was). What may start while other work runs is decided before these
handlers are called (``slot.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.core.modes.bash_mode import run_user_command
from agent_tui.core.compaction.compaction import CompactionFailed, Compactor
from agent_tui.core.compaction.context_report import context_report
from agent_tui.core.services.deps import SessionDeps, SubAgentsPort
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.hooks.work_points import directory_added
from agent_tui.core.memory.memory import MemoryFile
from agent_tui.core.journal.records import (
    ConversationClearedRecord,
    Record,
    SessionNamedRecord,
    SteerRecord,
)
from agent_tui.core.services.model_control import ModelControl, validate_model
from agent_tui.core.modes.plan_mode import switch_mode
from agent_tui.core.services.queue import Queued
from agent_tui.core.turn.request import thinking_params
from agent_tui.core.session.rewind import Rewinder
from agent_tui.core.session.slot import Slot, Work, WorkKind
from agent_tui.protocol import (
    Decision,
    Interrupt,
    CancelTool,
    ClearConversation,
    Compact,
    CompactionTrigger,
    ConversationCleared,
    Decide,
    EditQueued,
    Event,
    ListModels,
    ListRewindPoints,
    Notice,
    NoticeLevel,
    PlanRewind,
    RemoveQueued,
    RenameSession,
    Rewind,
    RunShell,
    SetModel,
    SetPermissionMode,
    ShowContext,
    SessionEndReason,
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


class SessionControls:
    """Mixed into ``Session``: the handlers of ``core/commands/op_dispatch.py`` for the ops about
    settings, the queue, approvals, background work and rewind. What it uses of the
    session is declared here with its type; ``Session`` defines each."""

    deps: SessionDeps
    models: ModelControl
    root: CancelScope
    rewinder: Rewinder
    subagents: SubAgentsPort
    background: list[BackgroundWork]
    slot: Slot
    memory_files: list[MemoryFile]
    context_notes: list[str]
    _emit: Callable[[Event], None]
    _record: Callable[[Record], None]
    _side: Callable[[Coroutine[Any, Any, None]], None]
    _answer: Callable[..., Coroutine[Any, Any, None]]
    on_interrupt: Callable[[Interrupt], None]
    _loop: asyncio.AbstractEventLoop | None

    def hooked(self, event: str) -> bool:
        """Whether any hook is configured for ``event`` (Claude Code's name), from any thread."""
        hooks = self.deps.hooks
        return hooks is not None and any(row.event == event for row in hooks.rows())

    def directory_added(self, folder: Path) -> None:
        """``DirectoryAdded`` hooks for a folder ``/add-dir`` added (from any thread;
        the folder is in ``added_dirs`` already: the hooks cannot undo it)."""
        loop = self._loop
        if loop is None or self.deps.hooks is None:
            return
        points = HookPoints(self.deps, self.root, self._record)
        try:
            loop.call_soon_threadsafe(
                lambda: self._side(directory_added(points, str(folder), "slash_command")))
        except RuntimeError:
            pass  # the session has stopped

    def on_set_model(self, op: SetModel) -> None:
        self._side(self.models.set_model(op.model))

    def on_set_thinking(self, op: SetThinking) -> None:
        self.models.set_thinking(op.thinking)

    def on_rename_session(self, op: RenameSession) -> None:
        name = " ".join(op.name.split())  # one line: it is listed with the sessions
        if not name:
            self._emit(Notice(level=NoticeLevel.WARNING, text="/rename needs a name"))
        else:
            self._record(SessionNamedRecord(name=name))
            self._emit(Notice(level=NoticeLevel.INFO, text=f"this session is named {name!r}"))

    def on_list_models(self, op: ListModels) -> None:
        self._side(self._answer(self.models.list_models(), what="listing models"))

    def on_compact(self, op: Compact) -> None:
        if self.slot.turn is not None:
            self.slot.after_turn.compact = op.instructions
            self._emit(Notice(level=NoticeLevel.INFO,
                              text="compaction will run when this turn ends"))
        else:
            self._start_compaction(op.instructions)

    def on_clear_conversation(self, op: ClearConversation) -> None:
        if self.deps.hooks is None:
            self._clear()
        else:  # in the slot while the hooks run; Esc ends them
            scope = self.root.child("clear")
            self.slot.start(Work(kind=WorkKind.CLEAR, scope=scope),
                            self._answer(self._clear_with_hooks(scope), what="/clear"))

    def on_set_permission_mode(self, op: SetPermissionMode) -> None:
        switch_mode(self.deps, self._record, self._emit, op.mode)

    def on_show_context(self, op: ShowContext) -> None:
        self._emit(context_report(self.deps, self.memory_files, self.context_notes))

    def on_edit_queued(self, op: EditQueued) -> None:
        self._queue_changed(self.deps.queue.edit(op.id, op.text), SteerStatus.EDITED)

    def on_remove_queued(self, op: RemoveQueued) -> None:
        self._queue_changed(self.deps.queue.remove(op.id), SteerStatus.REMOVED)

    def on_decide(self, op: Decide) -> None:
        if not self.deps.approvals.resolve(op):
            self._emit(
                Notice(level=NoticeLevel.INFO, text="that permission request is no longer open")
            )
        elif op.stop and op.decision is Decision.DENY:
            # After the waiting call has woken with its answer (it was scheduled first):
            # an interrupt now would reach it first, and it would end cancelled.
            asyncio.get_running_loop().call_soon(self.on_interrupt, Interrupt())

    def on_cancel_tool(self, op: CancelTool) -> None:
        turn = self.slot.turn
        if not (turn is not None and turn.cancel_call(op.tool_use_id)) and not (
            self.subagents.cancel_call(op.tool_use_id)
        ):
            self._emit(Notice(level=NoticeLevel.WARNING,
                              text=f"no running tool call {op.tool_use_id!r}"))

    def on_stop_background(self, op: StopBackground) -> None:
        if not any(work.request_stop(op.id) for work in self.background):
            self._emit(Notice(level=NoticeLevel.WARNING, text=f"no background job {op.id!r}"))

    def on_run_shell(self, op: RunShell) -> None:
        # In the slot: what is sent meanwhile waits for it; Esc stops it.
        scope = self.root.child("bash_mode")
        self.slot.start(Work(kind=WorkKind.USER_COMMAND, scope=scope), self._answer(
            run_user_command(self.deps, scope, op.command), what="the command"))

    def on_list_rewind_points(self, op: ListRewindPoints) -> None:
        self._side(self._answer(self.rewinder.points()))

    def on_plan_rewind(self, op: PlanRewind) -> None:
        self._side(self._answer(self.rewinder.plan(op)))

    def on_rewind(self, op: Rewind) -> None:
        scope = self.root.child("rewind")  # unread: files are never restored halfway
        self.slot.start(Work(kind=WorkKind.REWIND, scope=scope),
                        self._answer(self.rewinder.rewind(op)))

    def _clear(self) -> None:
        self._record(ConversationClearedRecord())
        self.deps.usage.forget()
        self._emit(ConversationCleared())

    async def _clear_with_hooks(self, scope: CancelScope) -> None:
        """``/clear`` with hooks: ``SessionEnd`` (reason ``clear``) reads the old
        conversation, then it is cleared, then ``SessionStart`` (source ``clear``)
        gives the new one its context."""
        points = HookPoints(self.deps, scope, self._record)
        await points.session_end(SessionEndReason.CLEAR)
        self._clear()  # SessionEnd cannot keep the conversation
        if not scope.cancelled:
            await points.session_start("clear")

    def _queue_changed(self, item: Queued | None, status: SteerStatus) -> None:
        if item is None:  # it was applied (or returned) first: an edit never races it
            self._emit(Notice(level=NoticeLevel.INFO,
                              text="that message is no longer queued (already applied)"))
            return
        self._record(SteerRecord(id=item.id, steer_kind=item.kind, state=status, text=item.text))
        self._emit(SteerState(id=item.id, state=status, kind=item.kind, text=item.text))

    async def _check_model(self) -> None:
        """Learn the model's limits; an unknown model is said at once, with close matches."""
        cfg = self.deps.config
        await self.deps.limits.learn(self.deps.provider, cfg.model)
        error = self.deps.limits.error(cfg.model)
        if error is not None and error.kind is ErrorKind.NOT_FOUND:
            message = await validate_model(self.deps.provider, cfg.model)
            if message:
                self._emit(Notice(level=NoticeLevel.ERROR, text=(
                    f"{message}. Pick another with --model or /model.")))

    def _start_compaction(self, focus: str, then: Callable[[], None] | None = None) -> None:
        """``/compact`` between turns, in the slot; Esc cancels it."""
        scope = self.root.child("compaction")
        self.slot.start(Work(kind=WorkKind.COMPACTION, scope=scope),
                        self._compact_idle(scope, focus), then=then)

    async def _compact_idle(self, scope: CancelScope, focus: str) -> None:
        cfg = self.deps.config
        params = thinking_params(self.deps)
        try:
            await Compactor(self.deps, cfg.system, self.deps.limits.window(cfg.model)).compact(
                turn_id="compaction", scope=scope, trigger=CompactionTrigger.MANUAL,
                focus=focus, thinking=params.thinking, max_tokens=params.max_tokens,
            )
        except Cancelled:
            pass  # said by the compactor: the conversation is unchanged
        except CompactionFailed as exc:
            self._emit(Notice(level=NoticeLevel.WARNING,
                              text=f"compaction failed: {exc}. The conversation is unchanged."))

