"""``/compact`` between turns, as the session's slot runs it: nothing starts until it
is done, and Esc cancels it, leaving the conversation exactly as it was.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from agent_tui.cancel import CancelScope
from agent_tui.core.compaction.compaction import CompactionFailed, Compactor
from agent_tui.core.journal.records import (
    CompactionRecord,
    HookRecord,
    ModelRequestRecord,
    RetryRecord,
    UsageRecord,
)
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind
from agent_tui.core.usage.thinking import ThinkingParams
from agent_tui.protocol import CompactionTrigger, Notice, NoticeLevel


class CompactionTask(SessionTask):
    """Compacts the conversation with ``focus`` (what the summary keeps)."""

    kind: ClassVar[WorkKind] = WorkKind.COMPACTION
    records: ClassVar[tuple[type[BaseModel], ...]] = (
        HookRecord, ModelRequestRecord, RetryRecord, UsageRecord, CompactionRecord,
    )

    def __init__(self, focus: str, params: ThinkingParams) -> None:
        self.focus = focus
        self.params = params  # the turn's thinking and max_tokens, as the request has them

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        deps = ctx.deps
        cfg = deps.config
        try:
            await Compactor(deps, cfg.system, deps.limits.window(cfg.model)).compact(
                turn_id="compaction", scope=scope, trigger=CompactionTrigger.MANUAL,
                focus=self.focus, thinking=self.params.thinking,
                max_tokens=self.params.max_tokens,
            )
        except CompactionFailed as exc:
            ctx.emit(Notice(level=NoticeLevel.WARNING,
                            text=f"compaction failed: {exc}. The conversation is unchanged."))

    # ``aborted``: nothing to add; the compactor said it, the conversation is unchanged.
