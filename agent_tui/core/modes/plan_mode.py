"""What the model is told when the permission mode changes, plan mode above all.

Plan mode is enforced by the permission policy (``permissions/plan.py``), not asked
of the model; the note only tells it what is true now, so it plans instead of trying
writes that will be refused. The note rides in the next user message (the model
view), after any tool results, from the journal's ``PermissionModeRecord``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.journal.records import PermissionModeRecord
from agent_tui.core.calls.tool import Confinement
from agent_tui.protocol import Event, PermissionModeChanged
from agent_tui.protocol.states import Decision, PermissionMode


class Permit(DeferredModel):
    """A call the permission check let through: where it runs, what the user said."""

    confinement: Confinement = Confinement.NONE
    approval: Decision | None = None


def switch_mode(
    deps: SessionDeps, record: Callable[[Any], object], emit: Callable[[Event], None],
    mode: PermissionMode,
) -> None:
    """Decide calls by ``mode`` from now on: the policy switches, the journal keeps
    it (the model is told in its next message), the front ends are told."""
    previous = deps.policy.mode
    deps.policy.set_mode(mode)
    if mode is not previous:
        record(PermissionModeRecord(mode=mode, previous=previous))
    emit(PermissionModeChanged(mode=mode, previous=previous))


def told_mode(records: list[Any]) -> PermissionMode | None:
    """The mode the model was last told of (None: never told, the session's first)."""
    for rec in reversed(records):
        if isinstance(rec, PermissionModeRecord):
            return rec.mode
    return None


def mode_before_plan(records: list[Any]) -> PermissionMode:
    """The mode the session was in before plan mode (``ask`` when it started in it)."""
    for rec in reversed(records):
        if isinstance(rec, PermissionModeRecord) and rec.mode is PermissionMode.PLAN:
            return rec.previous if rec.previous is not PermissionMode.PLAN else PermissionMode.ASK
    return PermissionMode.ASK


def leave_plan_mode(
    deps: SessionDeps, record: Callable[[Any], object], emit: Callable[[Event], None],
    approval: Decision | None,
) -> PermissionMode | None:
    """The user approved the plan: "allow for the session" goes on in accept-edits,
    anything else in the mode the session was in before plan mode. None when the
    session is not in plan mode (nothing changes)."""
    if deps.policy.mode is not PermissionMode.PLAN:
        return None
    if approval is Decision.ALLOW_SESSION:
        mode = PermissionMode.ACCEPT_EDITS
    else:
        mode = mode_before_plan(deps.journal.records)
    switch_mode(deps, record, emit, mode)
    return mode

_WHAT = {
    PermissionMode.ASK: "calls that write or run are asked of the user first",
    PermissionMode.ACCEPT_EDITS: "file edits inside the workspace run; commands are asked first",
    PermissionMode.PLAN: "read-only",
    PermissionMode.AUTO: "every call runs without asking",
    PermissionMode.DONT_ASK: ("nothing is asked: a call that writes or runs is refused unless "
                              "a permission rule allows it"),
}


def mode_note(mode: PermissionMode, previous: PermissionMode) -> str:
    """The note for a switch from ``previous`` to ``mode``."""
    if mode is PermissionMode.PLAN:
        return (
            "[Plan mode is on: the user wants a plan before any change. Only read-only "
            "tools run; commands run in a read-only sandbox (no writes, no network); file "
            "writes and edits are refused. Explore, then call exit_plan_mode with the plan "
            "(Markdown) for the user to approve. Do not make changes until then.]")
    if previous is PermissionMode.PLAN:
        return (f"[Plan mode is off: the permission mode is now {mode.value} "
                f"({_WHAT[mode]}). You may carry out the plan.]")
    return f"[The permission mode is now {mode.value}: {_WHAT[mode]}.]"
