"""A forked session's first moments: what its source's agent was still running.

A fork copies its source's journal while another agent process holds it (see
``store.py``); the turn that agent was running is open in the copy. The fork closes
it with words that say where it runs, and gives each call of it that had started a
result ``unknown`` (read-only calls changed nothing; any other may have), so the
model checks before redoing it. How they really ended is in the source session.
"""

from __future__ import annotations

from typing import Any

from agent_tui.core.journal.records import (
    ForkReason,
    SessionForkedRecord,
    ToolIntentRecord,
    ToolResultRecord,
)
from agent_tui.core.calls.tool import ToolSet
from agent_tui.protocol import SideEffects, ToolState


def running_elsewhere(records: list[Any]) -> str | None:
    """How a turn left open by the source's agent is described (None: not a fork of a
    session open elsewhere)."""
    fork = next((r for r in reversed(records) if isinstance(r, SessionForkedRecord)), None)
    if fork is None or fork.reason is not ForkReason.OPEN_ELSEWHERE:
        return None
    pid = f" (pid {fork.holder_pid})" if fork.holder_pid is not None else ""
    return (f"this turn was still running in session {fork.source}'s agent{pid} when this "
            "session was forked from it; how it ended is in that session")


def unknown_results(records: list[Any], open_turns: set[str], tools: ToolSet,
                    detail: str) -> list[ToolResultRecord]:
    """A result ``unknown`` for each call of ``open_turns`` that started and has none."""
    done = {r.tool_use_id for r in records if isinstance(r, ToolResultRecord)}
    results = []
    for intent in records:
        if (isinstance(intent, ToolIntentRecord) and intent.turn_id in open_turns
                and intent.tool_use_id not in done):
            tool = tools.get(intent.name)
            results.append(ToolResultRecord(
                turn_id=intent.turn_id, tool_use_id=intent.tool_use_id, name=intent.name,
                state=ToolState.UNKNOWN, is_error=True,
                content=f"{detail}; operation id {intent.operation_id}",
                side_effects=SideEffects.NONE
                if intent.read_only or (tool is not None and tool.read_only)
                else SideEffects.UNVERIFIED,
            ))
    return results
