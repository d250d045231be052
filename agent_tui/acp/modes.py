"""Session modes over ACP: agent-tui's permission modes, as an editor shows them.

``session/new`` and ``session/load`` answer with the modes and the current one;
``session/set_mode`` switches (a ``SetPermissionMode`` op), and every switch, the
editor's, the model's (``exit_plan_mode`` approved) or a resumed session's, is told
back as a ``current_mode_update``. Plan mode is read-only and enforced by the agent.

``session/load`` restores the mode the session was in (its journal's latest mode
record), unless that would ask less than the mode the agent was started with: plan
mode comes back, auto mode never does by itself (:func:`restored_mode`).
"""

from __future__ import annotations

from acp import RequestError
from acp.helpers import update_current_mode
from acp.schema import CurrentModeUpdate, SessionMode, SessionModeState

from typing import Any

from agent_tui.core.modes.plan_mode import told_mode
from agent_tui.protocol import PermissionMode

MODES: tuple[SessionMode, ...] = (
    SessionMode(id=PermissionMode.ASK.value, name="Ask",
                description="Asks before anything that writes or runs"),
    SessionMode(id=PermissionMode.ACCEPT_EDITS.value, name="Accept edits",
                description="File edits inside the workspace run; commands are asked"),
    SessionMode(id=PermissionMode.PLAN.value, name="Plan",
                description="Read-only, enforced: the agent plans, you approve the plan"),
    SessionMode(id=PermissionMode.AUTO.value, name="Auto",
                description="Nothing is asked (deny rules still apply)"),
    SessionMode(id=PermissionMode.DONT_ASK.value, name="Don't ask",
                description="Nothing is asked: what no rule allows is refused"),
)


#: How much a mode lets run without asking (a load never restores a wider one).
_WIDTH = {PermissionMode.PLAN: 0, PermissionMode.DONT_ASK: 0, PermissionMode.ASK: 1,
          PermissionMode.ACCEPT_EDITS: 2, PermissionMode.AUTO: 3}


def restored_mode(records: list[Any], current: PermissionMode) -> PermissionMode | None:
    """The mode a loaded session goes back to (None: stay in ``current``)."""
    saved = told_mode(records)
    if saved is None or saved is current or _WIDTH[saved] > _WIDTH[current]:
        return None
    return saved


def mode_state(current: PermissionMode) -> SessionModeState:
    return SessionModeState(current_mode_id=current.value, available_modes=list(MODES))


def mode_update(mode: PermissionMode) -> CurrentModeUpdate:
    return update_current_mode(mode.value)


def parse_mode(session_id: str, mode_id: str) -> PermissionMode:
    """The mode an editor asked for (ours or Claude Code's word); an unknown one is
    the client's mistake, said with the choices."""
    try:
        return PermissionMode.parse(mode_id)
    except ValueError as exc:
        raise RequestError.invalid_params({"sessionId": session_id, "modeId": mode_id,
                                           "details": str(exc)}) from None
