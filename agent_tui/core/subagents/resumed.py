"""What a session opened on a journal settles before its first op: turns the agent
was killed in are closed (a fork's still-running one is the source's), steers still
queued then are offered back, and the model is told a permission mode it has not
been told (a session resumed in another mode, or started in plan mode)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from agent_tui.core.subagents.forked import running_elsewhere, unknown_results
from agent_tui.core.modes.plan_mode import told_mode
from agent_tui.core.journal.records import (
    PermissionModeRecord,
    SteerRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.core.calls.tool import ToolSet
from agent_tui.protocol import PermissionMode, SteerStatus, TurnStatus


class Settled(BaseModel):
    turns: int  # turns the journal holds: the next is number turns + 1
    offered_back: list[SteerRecord]  # steers still queued when the agent stopped


def settle_journal(records: list[Any], tools: ToolSet,
                   record: Callable[[Any], None]) -> Settled:
    """Count the journal's turns, close a turn that never ended so the model view says
    so, and return the steers still queued then (recorded as returned)."""
    started: list[str] = []
    ended: set[str] = set()
    steers: dict[str, SteerRecord] = {}
    for rec in records:
        if isinstance(rec, UserMessageRecord) and rec.turn_id not in started:
            started.append(rec.turn_id)
        elif isinstance(rec, TurnEndedRecord):
            ended.add(rec.turn_id)
        elif isinstance(rec, SteerRecord):
            steers[rec.id] = rec
    offered_back = [r for r in steers.values() if r.state is SteerStatus.QUEUED]
    for steer in offered_back:
        record(SteerRecord(id=steer.id, steer_kind=steer.steer_kind,
                           state=SteerStatus.RETURNED, text=steer.text))
    detail = running_elsewhere(records)  # a fork: the source's agent runs it on
    open_turns = {t for t in started if t not in ended}
    for result in unknown_results(records, open_turns, tools, detail) if detail else []:
        record(result)
    for turn_id in started:
        if turn_id not in ended:
            record(TurnEndedRecord(turn_id=turn_id, status=TurnStatus.CANCELLED,
                                   detail=detail or "the agent stopped while this turn ran"))
    return Settled(turns=len(started), offered_back=offered_back)


def mode_to_tell(records: list[Any], mode: PermissionMode) -> PermissionModeRecord | None:
    """The mode record the model still needs: when ``mode`` differs from the one it was
    last told, and from the start when it is plan mode."""
    told = told_mode(records)
    if (told is None and mode is PermissionMode.PLAN) or (told is not None and told is not mode):
        return PermissionModeRecord(mode=mode, previous=told or mode)
    return None
