"""Checkpoints at every user message, and rewinds to them.

The checkpoint layer (``agent_tui.checkpoints``) snapshots the workspace; this
module decides when (each turn's start, before its first side-effecting tool),
records checkpoints and rewinds in the journal, answers the rewind ops, and lists
what a rewind cannot undo from what the journal shows the agent did since.
Checkpoint work runs on a thread: git and disk I/O never block the core's loop.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from pydantic import BaseModel

from agent_tui.cancel import CancelScope

from agent_tui.protocol import (
    FileChangeInfo,
    Notice,
    NoticeLevel,
    PlanRewind,
    RestoreWhat,
    Rewind,
    RewindPlanned,
    RewindPoint,
    RewindPoints,
    Rewound,
)
from agent_tui.core.history.history import effective_records
from agent_tui.core.journal.journal import JournalWriteError
from agent_tui.core.journal.records import (
    CheckpointRecord,
    RewindRecord,
    ToolIntentRecord,
    UserMessageRecord,
)
from agent_tui.core.services.deps import CheckpointsPort, SessionDeps
from agent_tui.core.services.tasks import SessionTask, TaskContext, WorkKind


class Rewinder:
    def __init__(self, deps: SessionDeps) -> None:
        self.deps = deps
        self.checkpoints = deps.checkpoints
        self._last_warnings: list[str] = []
        self._taking: set[asyncio.Task[None]] = set()

    def _notice(self, level: NoticeLevel, text: str) -> None:
        self.deps.emit(Notice(level=level, text=text))

    def _record(self, record: Any) -> None:
        try:
            self.deps.journal.append(record, durable=True)
        except JournalWriteError as exc:
            self.deps.emit(exc.notice())

    # -- taking -----------------------------------------------------------------------

    def start_checkpoint(self, turn_id: str, label: str) -> asyncio.Task[None] | None:
        """Begin the checkpoint of a turn's user message; the turn awaits it before its
        first side-effecting tool."""
        if self.checkpoints is None:
            return None
        task = asyncio.get_running_loop().create_task(self._take(turn_id, label))
        self._taking.add(task)
        task.add_done_callback(self._taking.discard)
        return task

    async def settle(self) -> None:
        """Wait for checkpoints still being taken (before a rewind, and at shutdown)."""
        if self._taking:
            await asyncio.wait(set(self._taking))

    async def _take(self, turn_id: str, label: str) -> None:
        checkpoints = self.checkpoints
        assert checkpoints is not None  # start_checkpoint starts this only with them
        try:
            info = await asyncio.to_thread(checkpoints.take, label, turn_id)
        except Exception as exc:
            self._notice(
                NoticeLevel.ERROR,
                f"checkpoint not taken before this message ({exc}); rewinding to it "
                "will not be possible",
            )
            return
        self._record(
            CheckpointRecord(
                checkpoint_id=info.id, turn_id=turn_id, label=info.label,
                scope=str(info.scope), warnings=list(info.warnings),
            )
        )
        # Tell the user at the checkpoint (not at rewind time), once per new warning.
        if info.warnings and info.warnings != self._last_warnings:
            for warning in info.warnings:
                self._notice(NoticeLevel.WARNING, f"checkpoint: {warning}")
        self._last_warnings = list(info.warnings)
        for notice in info.notices:
            self._notice(NoticeLevel.INFO, f"checkpoint: {notice}")

    # -- answering the ops ------------------------------------------------------------

    def _available(self) -> CheckpointsPort | None:
        """The checkpoints, or None (and the user is told) in a session without them."""
        if self.checkpoints is None:
            self._notice(NoticeLevel.WARNING, "this session keeps no checkpoints: rewind is off")
        return self.checkpoints

    async def points(self) -> RewindPoints:
        if self.checkpoints is None:
            return RewindPoints(points=[], available=False)
        await self.settle()
        infos = await asyncio.to_thread(self.checkpoints.list)
        texts = {
            r.turn_id: r.text
            for r in self.deps.journal.records
            if isinstance(r, UserMessageRecord)
        }
        points = [
            RewindPoint(
                checkpoint_id=info.id,
                label=texts.get(info.id, info.label),
                time=info.time.timestamp(),
                turn_id=info.id if info.id in texts else None,
                warnings=list(info.warnings),
            )
            for info in infos
        ]
        return RewindPoints(points=list(reversed(points)))

    def not_undoable(self, checkpoint_id: str) -> list[str]:
        """What the journal shows the agent did since the checkpoint that files cannot undo."""
        records = self.deps.journal.records
        start = next(
            (
                i
                for i, r in enumerate(records)
                if isinstance(r, UserMessageRecord) and r.turn_id == checkpoint_id
            ),
            None,
        )
        if start is None:
            start = next(
                (
                    i
                    for i, r in enumerate(records)
                    if isinstance(r, CheckpointRecord) and r.checkpoint_id == checkpoint_id
                ),
                len(records),
            )
        caveats: list[str] = []
        for record in records[start:]:
            if not isinstance(record, ToolIntentRecord):
                continue
            tool = self.deps.tools.get(record.name)
            caveat = (
                tool.rewind_caveat(record.input)
                if tool is not None
                else f"{record.name}: its effects are not undone"
            )
            if caveat and caveat not in caveats:
                caveats.append(caveat)
        return caveats

    async def plan(self, op: PlanRewind) -> RewindPlanned | None:
        checkpoints = self._available()
        if checkpoints is None:
            return None
        await self.settle()
        try:
            plan = await asyncio.to_thread(
                checkpoints.plan, op.checkpoint_id, self.not_undoable(op.checkpoint_id)
            )
        except KeyError:
            self._notice(NoticeLevel.ERROR, f"no checkpoint {op.checkpoint_id!r} to rewind to")
            return None
        return RewindPlanned(
            checkpoint_id=plan.checkpoint_id,
            label=plan.label,
            changes=[_change(c) for c in plan.changes],
            not_undoable=plan.not_undoable,
            warnings=plan.warnings,
        )

    async def rewind(self, op: Rewind) -> Rewound | None:
        checkpoints = self.checkpoints
        if op.restore is not RestoreWhat.CONVERSATION:
            checkpoints = self._available()
            if checkpoints is None:
                return None
        await self.settle()
        text = next(
            (
                r.text
                for r in effective_records(self.deps.journal.records)
                if isinstance(r, UserMessageRecord) and r.turn_id == op.checkpoint_id
            ),
            None,
        )
        if op.restore is not RestoreWhat.CODE and text is None:
            self._notice(
                NoticeLevel.ERROR,
                f"{op.checkpoint_id!r} is not a message of this conversation: only the "
                "files can be restored to it",
            )
            return None
        result = Rewound(checkpoint_id=op.checkpoint_id, restore=op.restore, text=text or "")
        if checkpoints is not None and op.restore is not RestoreWhat.CONVERSATION:
            try:
                report = await asyncio.to_thread(
                    checkpoints.restore,
                    op.checkpoint_id,
                    overwrite_conflicts=op.overwrite_conflicts,
                    extra_not_undoable=self.not_undoable(op.checkpoint_id),
                )
            except KeyError:
                self._notice(NoticeLevel.ERROR, f"no checkpoint {op.checkpoint_id!r} to rewind to")
                return None
            result.restored = [_change(c) for c in report.restored]
            result.skipped_conflicts = [_change(c) for c in report.skipped_conflicts]
            result.errors = report.errors
            result.not_undoable = report.not_undoable
            result.undo_checkpoint_id = report.undo_checkpoint_id
            for notice in report.notices:
                self._notice(NoticeLevel.INFO, f"checkpoint: {notice}")
        self._record(
            RewindRecord(
                checkpoint_id=op.checkpoint_id,
                restore=op.restore,
                undo_checkpoint_id=result.undo_checkpoint_id,
                restored=[c.path for c in result.restored],
                skipped_conflicts=[c.path for c in result.skipped_conflicts],
            )
        )
        return result


class RewindTask(SessionTask):
    """A rewind in the session's slot: nothing else starts meanwhile, and its scope is
    never read (files are never restored halfway)."""

    kind: ClassVar[WorkKind] = WorkKind.REWIND
    records: ClassVar[tuple[type[BaseModel], ...]] = (RewindRecord,)

    def __init__(self, rewinder: Rewinder, op: Rewind) -> None:
        self.rewinder = rewinder
        self.op = op

    async def run(self, ctx: TaskContext, scope: CancelScope) -> None:
        rewound = await self.rewinder.rewind(self.op)
        if rewound is not None:
            ctx.emit(rewound)


def _change(change: Any) -> FileChangeInfo:
    return FileChangeInfo(
        path=change.path,
        kind=str(change.kind),
        lines_added=change.lines_added,
        lines_removed=change.lines_removed,
        conflict=change.conflict,
    )
