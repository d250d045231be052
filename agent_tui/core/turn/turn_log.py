"""What one turn tells: journal records and events, and the tool calls' live states.

The turn loop, its reply reader and its tool runner share one :class:`TurnLog`, so a
state change is always journalled and told the same way. A journal write that fails
is told to the user (the status line keeps saying so) and reported to the caller,
which decides whether the step may go on.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.journal.journal import JournalWriteError
from agent_tui.core.journal.records import ToolStateRecord
from agent_tui.core.calls.state import advance_tool, advance_turn
from agent_tui.protocol import Event, ToolState, ToolStateChanged, TurnState, TurnStateChanged
from agent_tui.core.calls.tool import AnyTool


class ToolCall(DeferredModel):
    """One tool call of the turn and its live state."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    name: str
    index: int
    state: ToolState = ToolState.STREAMING
    input_json: str = ""
    input: dict[str, Any] | None = None
    args: Any = None
    tool: AnyTool | None = None
    invalid: str | None = None  # why the call cannot run (unknown tool, bad input)


class TurnLog:
    def __init__(self, deps: SessionDeps, turn_id: str) -> None:
        self.deps = deps
        self.turn_id = turn_id
        self.state = TurnState.RUNNING
        self.calls: dict[str, ToolCall] = {}

    def emit(self, event: Event) -> None:
        self.deps.emit(event)

    def record(self, record: Any, *, durable: bool = False) -> bool:
        try:
            self.deps.journal.append(record, durable=durable)
            return True
        except JournalWriteError as exc:
            self.emit(exc.notice())
            return False

    def set_turn_state(self, new: TurnState, detail: str = "") -> None:
        self.state = advance_turn(self.state, new)
        self.emit(TurnStateChanged(turn_id=self.turn_id, state=new, detail=detail))

    def set_tool_state(self, call: ToolCall, new: ToolState, **extra: Any) -> None:
        if new is not ToolState.STREAMING:  # streaming is where every call is born
            call.state = advance_tool(call.state, new)
            self.record(ToolStateRecord(turn_id=self.turn_id, tool_use_id=call.id, state=new))
        summary = ""
        if call.tool is not None and call.args is not None:
            summary = call.tool.summary(call.args)
        self.emit(
            ToolStateChanged(
                turn_id=self.turn_id,
                tool_use_id=call.id,
                name=call.name,
                state=new,
                summary=summary,
                input=call.input,
                **extra,
            )
        )

    def read_only(self, call: ToolCall) -> bool:
        return (
            call.tool is not None
            and call.args is not None
            and call.invalid is None
            and call.tool.is_read_only(call.args)
        )
