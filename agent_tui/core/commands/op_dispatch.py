"""Which handler each op the session takes goes to: one ``match`` over all of them.

Every :data:`~agent_tui.protocol.Op` (and a custom command's
:class:`~agent_tui.core.commands.command_run.CommandRun`) has its case here, and each case calls
one method of :class:`OpHandlers` (the session implements them). The match ends in
``assert_never``, so an op that no case handles fails the type check; at run time an
object that is not an op at all is answered with an error notice, never dropped.
"""

from __future__ import annotations

from typing import Protocol, assert_never, get_args

from agent_tui.core.commands.command_run import CommandRun
from agent_tui.protocol import (
    CancelTool,
    ClearConversation,
    Compact,
    Decide,
    EditQueued,
    Event,
    FollowUp,
    Interrupt,
    ListModels,
    ListRewindPoints,
    Notice,
    NoticeLevel,
    Op,
    PlanRewind,
    RemoveQueued,
    RenameSession,
    Rewind,
    RunShell,
    SendNow,
    SetModel,
    SetPermissionMode,
    SetThinking,
    ShowContext,
    Shutdown,
    StopBackground,
    UserMessage,
)

#: What the session's queue carries: the protocol's ops and custom commands' runs.
SessionOp = Op | CommandRun

#: Every kind of op, for telling a stray object from an op.
OP_TYPES: tuple[type, ...] = (*get_args(get_args(Op)[0]), CommandRun)


class OpHandlers(Protocol):
    """One method per kind of op (``core/session/session.py``, which hands each on)."""

    def on_message(self, op: UserMessage | SendNow | FollowUp) -> None: ...
    def on_interrupt(self, op: Interrupt) -> None: ...
    def on_decide(self, op: Decide) -> None: ...
    def on_cancel_tool(self, op: CancelTool) -> None: ...
    def on_stop_background(self, op: StopBackground) -> None: ...
    def on_run_shell(self, op: RunShell) -> None: ...
    def on_list_rewind_points(self, op: ListRewindPoints) -> None: ...
    def on_plan_rewind(self, op: PlanRewind) -> None: ...
    def on_rewind(self, op: Rewind) -> None: ...
    def on_shutdown(self, op: Shutdown) -> None: ...
    def on_compact(self, op: Compact) -> None: ...
    def on_set_model(self, op: SetModel) -> None: ...
    def on_list_models(self, op: ListModels) -> None: ...
    def on_set_thinking(self, op: SetThinking) -> None: ...
    def on_set_permission_mode(self, op: SetPermissionMode) -> None: ...
    def on_clear_conversation(self, op: ClearConversation) -> None: ...
    def on_rename_session(self, op: RenameSession) -> None: ...
    def on_show_context(self, op: ShowContext) -> None: ...
    def on_edit_queued(self, op: EditQueued) -> None: ...
    def on_remove_queued(self, op: RemoveQueued) -> None: ...
    def on_command(self, op: CommandRun) -> None: ...


def unknown_op(op: object) -> Event:
    """What the user is told about an object sent as an op that is none."""
    return Notice(level=NoticeLevel.ERROR,
                  text=f"unknown op {type(op).__name__!r}: the session did not handle it")


def dispatch(h: OpHandlers, op: SessionOp) -> None:
    """Hand ``op`` to its one handler."""
    match op:
        case UserMessage() | SendNow() | FollowUp():
            h.on_message(op)
        case Interrupt():
            h.on_interrupt(op)
        case Decide():
            h.on_decide(op)
        case CancelTool():
            h.on_cancel_tool(op)
        case StopBackground():
            h.on_stop_background(op)
        case RunShell():
            h.on_run_shell(op)
        case ListRewindPoints():
            h.on_list_rewind_points(op)
        case PlanRewind():
            h.on_plan_rewind(op)
        case Rewind():
            h.on_rewind(op)
        case Shutdown():
            h.on_shutdown(op)
        case Compact():
            h.on_compact(op)
        case SetModel():
            h.on_set_model(op)
        case ListModels():
            h.on_list_models(op)
        case SetThinking():
            h.on_set_thinking(op)
        case SetPermissionMode():
            h.on_set_permission_mode(op)
        case ClearConversation():
            h.on_clear_conversation(op)
        case RenameSession():
            h.on_rename_session(op)
        case ShowContext():
            h.on_show_context(op)
        case EditQueued():
            h.on_edit_queued(op)
        case RemoveQueued():
            h.on_remove_queued(op)
        case CommandRun():
            h.on_command(op)
        case _:
            assert_never(op)
