"""``Elicitation`` and ``ElicitationResult``: an MCP server's question, shown to the hooks
before the user is asked, and the answer, before it goes back to the server.

:func:`hooked_elicitor` wraps the front end's elicitor (the TUI's dialog, an ACP
client, print mode's decline), as Claude Code runs these events, matched on the
server's name:

- ``Elicitation`` gets ``mcp_server_name``, ``message``, ``mode`` (``form`` or
  ``url``), ``url``, ``elicitation_id`` and ``requested_schema``. A block (exit 2,
  ``decision: "block"``, or ``hookSpecificOutput.action`` ``decline``) declines: the
  user is not asked. ``action`` ``accept`` (with ``content``) or ``cancel`` answers in
  the user's place. Otherwise (no opinion, a failed hook) the user is asked as before.
- ``ElicitationResult`` gets ``mcp_server_name``, ``elicitation_id``, ``mode``,
  ``action`` and ``content``: what will be sent. A block sends ``decline``; an
  ``action`` replaces the answer (its ``content``, or the user's).

A project's hook may decline, never accept for you (``commands._held``). What a hook
accepts is checked against the server's form like a typed answer (``mcp/elicit.py``:
an answer that does not fit is sent as ``cancel``). The hooks run where the question
is asked (the MCP servers' loop); when the server withdraws its question they are
ended. Their runs are said in notices, not journalled: a question is not a turn's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from agent_tui.cancel import CancelScope
from agent_tui.core.services.hooks_port import HookAnswer, HookBase
from agent_tui.mcp_catalog.elicitation import ElicitAction, ElicitAnswer, Elicitation, Elicitor
from agent_tui.protocol import Event, Notice, NoticeLevel
from agent_tui.protocol.states import HookDecision, HookEvent
from agent_tui.hooks.commands import CommandHooks

E = HookEvent


def hook_base(deps: Any) -> HookBase:
    """The common fields, from a session's deps (the transcript as last brought up to date)."""
    transcript = deps.transcript
    return HookBase(session_id=deps.config.session_id, cwd=str(deps.config.workspace),
                    transcript_path=str(transcript.path) if transcript is not None else "")


def hooked_elicitor(
    hooks: CommandHooks, base: Callable[[], HookBase], emit: Callable[[Event], None]
) -> Callable[[Elicitor], Elicitor]:
    """What wraps the front end's elicitor with the session's elicitation hooks."""

    def wrap(ask_user: Elicitor) -> Elicitor:
        async def elicit(request: Elicitation) -> ElicitAnswer:
            if not (hooks.matching(E.ELICITATION, request.server)
                    or hooks.matching(E.ELICITATION_RESULT, request.server)):
                return await ask_user(request)
            scope = CancelScope("elicitation hooks")
            first = await _ended_with(scope, hooks.fire(
                E.ELICITATION, base(), scope, {"mcp_server_name": request.server,
                                               **_asked(request)}, subject=request.server))
            _tell(emit, E.ELICITATION, first)
            if first.decision is HookDecision.BLOCK:
                answer = ElicitAnswer(action=ElicitAction.DECLINE)
            elif first.reply is not None:
                answer = _answer(first.reply, None)
            else:
                answer = await ask_user(request)
            after = await _ended_with(scope, hooks.fire(
                E.ELICITATION_RESULT, base(), scope, {"mcp_server_name": request.server,
                                                      **_answered(request, answer)},
                subject=request.server))
            _tell(emit, E.ELICITATION_RESULT, after)
            if after.decision is HookDecision.BLOCK:
                return ElicitAnswer(action=ElicitAction.DECLINE)
            if after.reply is not None:
                return _answer(after.reply, answer.content)
            return answer

        return elicit

    return wrap


async def _ended_with(scope: CancelScope, running: Awaitable[HookAnswer]) -> HookAnswer:
    """The hooks' answer; when the question is withdrawn (the task is cancelled), the
    hooks' processes are ended before this gives way."""
    task = asyncio.ensure_future(running)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        scope.cancel()
        await asyncio.wait({task})
        raise


def _asked(request: Elicitation) -> dict[str, Any]:
    fields: dict[str, Any] = {"message": request.message, "mode": request.mode.value}
    if request.url is not None:
        fields["url"] = request.url
    if request.elicitation_id is not None:
        fields["elicitation_id"] = request.elicitation_id
    if request.fields:
        fields["requested_schema"] = {
            "type": "object",
            "properties": {f.name: {"type": _json_type(f.kind.value), **(
                {"enum": f.choices} if f.choices else {})} for f in request.fields},
            "required": [f.name for f in request.fields if f.required],
        }
    return fields


def _json_type(kind: str) -> str:
    return {"choice": "string", "choices": "array"}.get(kind, kind)


def _answered(request: Elicitation, answer: ElicitAnswer) -> dict[str, Any]:
    fields: dict[str, Any] = {"mode": request.mode.value, "action": answer.action.value}
    if request.elicitation_id is not None:
        fields["elicitation_id"] = request.elicitation_id
    if answer.content is not None:
        fields["content"] = answer.content
    return fields


def _answer(reply: dict[str, Any], content: Any) -> ElicitAnswer:
    given = reply.get("content", content)
    return ElicitAnswer(action=ElicitAction(reply["action"]),
                        content=given if isinstance(given, dict) else None)


def _tell(emit: Callable[[Event], None], event: HookEvent, answer: HookAnswer) -> None:
    for run in answer.runs:
        if run.message:
            emit(Notice(level=NoticeLevel.WARNING, text=f"{event} hook `{run.command}`: {run.message}"))
    if answer.decision is HookDecision.BLOCK:
        emit(Notice(level=NoticeLevel.INFO, text=(
            f"an {event} hook declined the MCP server's question"
            + (f": {answer.reason}" if answer.reason else ""))))
