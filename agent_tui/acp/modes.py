"""Session modes over ACP: agent-tui's permission modes, as an editor shows them.

``session/new`` and ``session/load`` answer with the modes and the current one;
``session/set_mode`` switches (a ``SetPermissionMode`` op), and every switch, the
editor's, the model's (``exit_plan_mode`` approved) or a resumed session's, is told
back as a ``current_mode_update``. Plan mode is read-only and enforced by the agent.
"""

from __future__ import annotations

from acp import RequestError
from acp.helpers import update_current_mode
from acp.schema import CurrentModeUpdate, SessionMode, SessionModeState

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
