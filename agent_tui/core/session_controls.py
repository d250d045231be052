"""The session's ops about its settings, queue and compaction (a part of ``Session``).

Model and thinking switches, model listing, ``/clear`` (with its ``SessionEnd`` and
``SessionStart`` hooks, held like a rewind), ``/rename``, queue edits, and
``/compact`` between turns (held like a rewind: nothing starts until it is done,
and Esc cancels it, leaving the conversation exactly as it was).
"""

from __future__ import annotations

from typing import Any

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.core.compaction import CompactionFailed, Compactor
from agent_tui.core.context_report import context_report
from agent_tui.core.hook_points import HookPoints
from agent_tui.core.records import ConversationClearedRecord, SessionNamedRecord, SteerRecord
from agent_tui.core.model_control import validate_model
from agent_tui.core.plan_mode import switch_mode
from agent_tui.core.queue import Queued
from agent_tui.core.request import thinking_params
from agent_tui.protocol import (
    ClearConversation,
    Compact,
    CompactionTrigger,
    ConversationCleared,
    EditQueued,
    ListModels,
    Notice,
    NoticeLevel,
    RemoveQueued,
    RenameSession,
    SetModel,
    SetPermissionMode,
    ShowContext,
    SessionEndReason,
    SetThinking,
    SteerState,
    SteerStatus,
)
from agent_tui.providers.base import ErrorKind


class SessionControls:
    """Mixed into ``Session``, whose state (``deps``, ``models``, ``root``, ``_turn``,
    ``_compact_pending``, ``_hold_scope``) and helpers (``_emit``, ``_record``,
    ``_side``, ``_answer``, ``_rewinding``) it uses."""

    deps: Any
    models: Any
    root: CancelScope
    _turn: Any
    _compact_pending: str | None
    _hold_scope: CancelScope | None
    memory_files: list[Any]
    context_notes: list[str]

    def _handle_settings(self, op: Any) -> bool:
        """Ops about the conversation's settings and queue. True when handled."""
        if isinstance(op, SetModel):
            self._side(self.models.set_model(op.model))
        elif isinstance(op, SetThinking):
            self.models.set_thinking(op.thinking)
        elif isinstance(op, RenameSession):
            name = " ".join(op.name.split())  # one line: it is listed with the sessions
            if not name:
                self._emit(Notice(level=NoticeLevel.WARNING, text="/rename needs a name"))
            else:
                self._record(SessionNamedRecord(name=name))
                self._emit(Notice(level=NoticeLevel.INFO, text=f"this session is named {name!r}"))
        elif isinstance(op, ListModels):
            self._side(self._answer(self.models.list_models(), what="listing models"))
        elif isinstance(op, Compact):
            if self._turn is not None:
                self._compact_pending = op.instructions
                self._emit(Notice(level=NoticeLevel.INFO,
                                  text="compaction will run when this turn ends"))
            else:
                self._rewinding(self._compact_idle(op.instructions))
        elif isinstance(op, ClearConversation):
            if self._turn is not None:
                self._emit(Notice(level=NoticeLevel.WARNING,
                                  text="a turn is running: stop it (Esc) before /clear"))
            elif self.deps.hooks is None:
                self._clear()
            else:  # held like a rewind while the hooks run; Esc ends them
                self._rewinding(self._answer(self._clear_with_hooks(), what="/clear"))
        elif isinstance(op, SetPermissionMode):
            switch_mode(self.deps, self._record, self._emit, op.mode)
        elif isinstance(op, ShowContext):
            self._emit(context_report(self.deps, self.memory_files, self.context_notes))
        elif isinstance(op, EditQueued):
            self._queue_changed(self.deps.queue.edit(op.id, op.text), SteerStatus.EDITED)
        elif isinstance(op, RemoveQueued):
            self._queue_changed(self.deps.queue.remove(op.id), SteerStatus.REMOVED)
        else:
            return False
        return True

    def _clear(self) -> None:
        self._record(ConversationClearedRecord())
        self.deps.usage.forget()
        self._emit(ConversationCleared())

    async def _clear_with_hooks(self) -> None:
        """``/clear`` with hooks: ``SessionEnd`` (reason ``clear``) reads the old
        conversation, then it is cleared, then ``SessionStart`` (source ``clear``)
        gives the new one its context."""
        scope = self._hold_scope = self.root.child("clear")
        try:
            points = HookPoints(self.deps, scope, self._record)
            await points.session_end(SessionEndReason.CLEAR)
            self._clear()  # SessionEnd cannot keep the conversation
            if not scope.cancelled:
                await points.session_start("clear")
        finally:
            scope.detach()
            self._hold_scope = None

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

    async def _compact_idle(self, focus: str) -> None:
        """``/compact`` between turns: held like a rewind; Esc cancels it."""
        cfg = self.deps.config
        scope = self._hold_scope = self.root.child("compaction")
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
        finally:
            scope.detach()
            self._hold_scope = None

