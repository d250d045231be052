"""The turn and tool-call state machines reject what docs/architecture.md does not allow."""

import pytest

from agent_tui.core.calls.state import (
    advance_tool,
    advance_turn,
    IllegalTransition,
    TERMINAL_TOOL_STATES,
)
from agent_tui.protocol import ToolState, TurnState


def test_turn_paths_of_the_design():
    s = advance_turn(TurnState.RUNNING, TurnState.CANCELLING)
    assert advance_turn(s, TurnState.CANCELLED) is TurnState.CANCELLED
    assert advance_turn(TurnState.RUNNING, TurnState.COMPLETED) is TurnState.COMPLETED
    assert advance_turn(TurnState.RUNNING, TurnState.FAILED) is TurnState.FAILED


@pytest.mark.parametrize(
    "current,new",
    [
        (TurnState.RUNNING, TurnState.CANCELLED),  # must pass through cancelling
        (TurnState.CANCELLING, TurnState.COMPLETED),
        (TurnState.COMPLETED, TurnState.RUNNING),
        (TurnState.CANCELLED, TurnState.CANCELLING),
    ],
)
def test_illegal_turn_transitions(current, new):
    with pytest.raises(IllegalTransition):
        advance_turn(current, new)


@pytest.mark.parametrize(
    "current,new",
    [
        (ToolState.STREAMING, ToolState.RUNNING),  # an incomplete call never runs
        (ToolState.QUEUED, ToolState.SUCCEEDED),  # must start first
        (ToolState.QUEUED, ToolState.CANCELLED_WHILE_RUNNING),
        (ToolState.RUNNING, ToolState.CANCELLED_BEFORE_START),
        (ToolState.DENIED, ToolState.RUNNING),
        (ToolState.AWAITING_APPROVAL, ToolState.SUCCEEDED),
        (ToolState.SUCCEEDED, ToolState.CANCELLED_WHILE_RUNNING),
    ],
)
def test_illegal_tool_transitions(current, new):
    with pytest.raises(IllegalTransition):
        advance_tool(current, new)


def test_every_terminal_state_is_final():
    for terminal in TERMINAL_TOOL_STATES:
        for other in ToolState:
            with pytest.raises(IllegalTransition):
                advance_tool(terminal, other)


def test_a_running_call_can_end_every_honest_way():
    for end in (
        ToolState.SUCCEEDED,
        ToolState.FAILED,
        ToolState.CANCELLED_WHILE_RUNNING,
        ToolState.UNKNOWN,
    ):
        assert advance_tool(ToolState.RUNNING, end) is end
