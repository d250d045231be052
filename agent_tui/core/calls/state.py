"""Turn and tool-call state machines and their legal transitions.

Every state change goes through :func:`advance_turn` / :func:`advance_tool`, which
reject a transition the design does not allow. The states themselves are the enums of
:mod:`agent_tui.protocol` (named as in docs/architecture.md).
"""

from __future__ import annotations

from agent_tui.protocol.states import ToolState, TurnState

__all__ = ["IllegalTransition", "TERMINAL_TOOL_STATES", "advance_tool", "advance_turn", "tool_started"]


class IllegalTransition(RuntimeError):
    pass


_TURN: dict[TurnState, frozenset[TurnState]] = {
    TurnState.RUNNING: frozenset(
        {TurnState.CANCELLING, TurnState.COMPLETED, TurnState.FAILED}
    ),
    TurnState.CANCELLING: frozenset({TurnState.CANCELLED}),
    TurnState.CANCELLED: frozenset(),
    TurnState.COMPLETED: frozenset(),
    TurnState.FAILED: frozenset(),
}

_S = ToolState
_TOOL: dict[ToolState, frozenset[ToolState]] = {
    # An incomplete call never runs: it can only be dropped.
    _S.STREAMING: frozenset({_S.QUEUED, _S.CANCELLED_BEFORE_START, _S.FAILED}),
    _S.QUEUED: frozenset(
        {_S.AWAITING_APPROVAL, _S.RUNNING, _S.DENIED, _S.CANCELLED_BEFORE_START, _S.FAILED}
    ),
    _S.AWAITING_APPROVAL: frozenset({_S.RUNNING, _S.DENIED, _S.CANCELLED_BEFORE_START}),
    _S.RUNNING: frozenset(
        {_S.SUCCEEDED, _S.FAILED, _S.CANCELLED_WHILE_RUNNING, _S.UNKNOWN}
    ),
    _S.DENIED: frozenset(),
    _S.SUCCEEDED: frozenset(),
    _S.FAILED: frozenset(),
    _S.CANCELLED_BEFORE_START: frozenset(),
    _S.CANCELLED_WHILE_RUNNING: frozenset(),
    _S.UNKNOWN: frozenset(),
}

TERMINAL_TOOL_STATES = frozenset(s for s, nxt in _TOOL.items() if not nxt)


def advance_turn(current: TurnState, new: TurnState) -> TurnState:
    if new not in _TURN[current]:
        raise IllegalTransition(f"turn cannot go from {current} to {new}")
    return new


def advance_tool(current: ToolState, new: ToolState) -> ToolState:
    if new not in _TOOL[current]:
        raise IllegalTransition(f"tool call cannot go from {current} to {new}")
    return new


def tool_started(state: ToolState) -> bool:
    """Whether a call in this state may have had effects."""
    return state in {
        _S.RUNNING,
        _S.SUCCEEDED,
        _S.FAILED,
        _S.CANCELLED_WHILE_RUNNING,
        _S.UNKNOWN,
    }
