"""``/clear``: the conversation starts afresh (the journal keeps what was before it).

Without hooks it is instant. With them it runs in the session's slot
(:class:`ClearTask`): ``SessionEnd`` (reason ``clear``) reads the old conversation,
then it is cleared, then ``SessionStart`` (source ``clear``) gives the new one its
context; Esc ends the hooks.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from agent_tui.cancel import CancelScope
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.journal.records import ConversationClearedRecord, HookRecord
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind
from agent_tui.protocol import ConversationCleared, Notice, NoticeLevel, SessionEndReason


def clear(ctx: TaskContext) -> None:
    """Clear the conversation now: journalled, its usage forgotten, the front ends told."""
    ctx.record(ConversationClearedRecord())
    ctx.deps.usage.forget()
    ctx.emit(ConversationCleared())


class ClearTask(SessionTask):
    """``/clear`` with its ``SessionEnd`` and ``SessionStart`` hooks."""

    kind: ClassVar[WorkKind] = WorkKind.CLEAR
    records: ClassVar[tuple[type[BaseModel], ...]] = (HookRecord, ConversationClearedRecord)

    def __init__(self) -> None:
        self.cleared = False

    @property
    def what(self) -> str:
        return "/clear"

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        points = HookPoints(ctx.deps, scope, ctx.record)
        await points.session_end(SessionEndReason.CLEAR)
        clear(ctx)  # SessionEnd cannot keep the conversation
        self.cleared = True
        if not scope.cancelled:
            await points.session_start("clear")

    async def aborted(self, ctx: TaskContext, scope: CancelScope) -> None:
        if not self.cleared:
            ctx.emit(Notice(level=NoticeLevel.WARNING,
                            text="/clear stopped: the conversation was not cleared"))
