"""A turn as the session's slot runs it: the user's message, the model's replies and
their tool calls, until the agent stops or is stopped.

The :class:`~agent_tui.core.turn.turn.Turn` is built where it starts, with its cancel
scope (a child of the session's); this task runs it and keeps how it ended for what
follows it (queued steers, follow-ups, a compaction asked meanwhile). A cancel is the
turn's own business (two phases, ``turn.py``): ``run`` never raises ``Cancelled``.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from agent_tui.cancel import CancelScope
from agent_tui.core.journal.records import (
    AssistantMessageRecord,
    CompactionRecord,
    HookRecord,
    MemoryNoteRecord,
    ModelRequestRecord,
    RetryRecord,
    PermissionRecord,
    SteerRecord,
    ToolIntentRecord,
    ToolResultRecord,
    ToolStateRecord,
    TurnEndedRecord,
    UsageRecord,
    UserMessageRecord,
)
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind
from agent_tui.core.turn.turn import Turn
from agent_tui.protocol import Notice, NoticeLevel, TurnEnded, TurnStatus


class TurnTask(SessionTask):
    """Runs one turn; ``status`` is how it ended (FAILED until it has)."""

    kind: ClassVar[WorkKind] = WorkKind.TURN
    records: ClassVar[tuple[type[BaseModel], ...]] = (
        UserMessageRecord, ModelRequestRecord, RetryRecord, AssistantMessageRecord,
        UsageRecord, ToolIntentRecord, ToolStateRecord, ToolResultRecord, PermissionRecord,
        HookRecord, SteerRecord, MemoryNoteRecord, CompactionRecord, TurnEndedRecord,
    )

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.status = TurnStatus.FAILED

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        turn = self.turn
        try:
            ended: TurnEnded | None = await turn.run()
        except Exception as exc:  # a bug in the loop itself: say so, never hang
            ended = None
            ctx.emit(Notice(level=NoticeLevel.ERROR, text=f"internal error: {exc!r}"))
            ctx.emit(TurnEnded(
                turn_id=turn.id, status=TurnStatus.FAILED, detail=f"internal error: {exc!r}"
            ))
        self.status = ended.status if ended is not None else TurnStatus.FAILED
