"""The hooks around a permission decision: ``PermissionRequest``, ``PermissionDenied``
and ``Notification``, as Claude Code runs them.

- ``PermissionRequest``: a call would be asked (a prompt in the TUI; in print mode,
  where no one can answer, the call would be denied). A hook may answer for the user:
  ``hookSpecificOutput.decision.behavior`` ``allow`` or ``deny`` (with ``message``),
  exit 2 denies. No answer, or a hook that fails: the user is asked as before. A deny
  rule is never asked about, so no hook can lift one.
- ``PermissionDenied``: a rule or the permission mode denied a call (not the user,
  not a hook); the hooks are told, with the reason. They cannot change it.
- ``Notification``: the user is waited for (``notification_type``
  ``permission_prompt``); it runs beside the prompt and never delays it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_tui.cancel import Cancelled, CancelReason
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.services.hooks_port import HookAnswer
from agent_tui.protocol.states import HookDecision, HookEvent
from agent_tui.protocol.tool_names import claude_name

E = HookEvent
_RUNNING: set[asyncio.Task[Any]] = set()  # notifications under way (kept from collection)


async def permission_request(
    points: HookPoints, tool_use_id: str, name: str, tool_input: dict[str, Any]
) -> HookAnswer:
    """What ``PermissionRequest`` hooks answer for a call that would be asked: ALLOW,
    BLOCK (with a reason) or NONE; raises Cancelled when Esc ended them."""
    answer = await points.dispatch(
        E.PERMISSION_REQUEST, name,
        {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_use_id,
         "permission_suggestions": []},
        tool_use_id=tool_use_id, tool_input=tool_input,
    )
    if answer is None:
        return HookAnswer()
    if answer.cancelled or points.scope.cancelled:  # cancel point: while a hook answers for the user
        raise Cancelled(points.scope.reason or CancelReason.USER_INTERRUPT)
    if answer.decision is HookDecision.ASK:
        answer.decision = HookDecision.NONE  # "ask" is what would happen anyway
    return answer


async def permission_denied(
    points: HookPoints, tool_use_id: str, name: str, tool_input: dict[str, Any], reason: str
) -> None:
    """``PermissionDenied``: told after a rule or the mode denied a call."""
    await points.dispatch(
        E.PERMISSION_DENIED, name,
        {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_use_id,
         "reason": reason},
        tool_use_id=tool_use_id, tool_input=tool_input,
    )


def notify_permission_prompt(points: HookPoints, name: str) -> None:
    """``Notification`` for a permission prompt, run beside it (never waited for)."""
    kind = "permission_prompt"
    if not points.wanted(E.NOTIFICATION, kind):
        return
    message = f"agent-tui needs your permission to use {claude_name(name)}"
    task = asyncio.create_task(points.dispatch(
        E.NOTIFICATION, kind,
        {"message": message, "title": "Permission needed", "notification_type": kind},
    ))
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
