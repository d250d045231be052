"""What the session's MCP servers offer, over ACP: their prompts among the commands,
their resources as context, and their questions to the user.

- **Prompts** are listed in ``available_commands_update`` as ``mcp__server__prompt``
  (sent again whenever a server becomes ready or its prompts change); a prompt
  ``/mcp__server__prompt args`` sends the prompt's messages as the message.
- **Resources**: a prompt's text that mentions ``@server:uri`` has the resource read
  and sent after the message, as in the TUI (``mcp_catalog/message.py``). A refusal
  (no such prompt, missing arguments, a read that failed) is told as agent text and
  nothing is sent to the model.
- **Elicitation**: a client that offers ``elicitation`` (form and/or URL) is asked
  with ``elicitation/create`` (tied to the session); a client without it is asked a
  URL question or an empty form as a ``session/request_permission`` (accept or
  decline); a form with fields is then declined, and the user is told why. A question
  the server withdraws cancels the request to the client.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
    PermissionOption,
    ToolCallUpdate,
    UnstructuredCommandInput,
)

from agent_tui.mcp_catalog.elicitation import ElicitAction, ElicitAnswer, Elicitation, ElicitMode, Elicitor
from agent_tui.mcp_catalog.message import OfferRefused, expand, uses_offers
from agent_tui.mcp_catalog.offers import prompt_command, prompt_usage
from agent_tui.mcp_catalog.port import McpServers
from agent_tui.protocol import NoticeLevel, UserMessage

log = logging.getLogger("agent_tui.acp")
Say = Callable[[NoticeLevel, str], None]
_ASK_OPTIONS = [
    PermissionOption(option_id="accept", name="Accept", kind="allow_once"),
    PermissionOption(option_id="decline", name="Decline", kind="reject_once"),
]


def prompt_entries(manager: McpServers | None) -> list[AvailableCommand]:
    """Each ready server's prompts, as commands."""
    if manager is None:
        return []
    entries = []
    for server, prompt in manager.prompts():
        hint = prompt_usage(prompt)
        about = prompt.description or prompt.title or prompt.name
        entries.append(AvailableCommand(
            name=prompt_command(server, prompt.name), description=f"{about} (MCP {server})",
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None))
    return entries


def needs_servers(text: str) -> bool:
    """Whether a prompt's text names an MCP prompt or resource."""
    return uses_offers(text)


def offer_run(manager: McpServers | None, session: Any, message: UserMessage) -> Callable[[Say], Awaitable[None]]:
    """What a prompt naming an MCP prompt or resource does: got or read, then sent;
    refused: told, and nothing sent."""

    async def run(say: Say) -> None:
        if manager is None:
            say(NoticeLevel.INFO, "> agent-tui: not sent: this session has no MCP servers\n")
            return
        try:
            text, images = await expand(manager, message.text)
        except OfferRefused as exc:
            say(NoticeLevel.INFO, f"> agent-tui: not sent: {exc}\n")
            return
        session.submit(message.model_copy(update={"text": text, "images": [*message.images, *images]}))

    return run


def elicitor(conn: Any, session_id: str, capabilities: Any, say: Say) -> Elicitor:
    """Ask the ACP client: ``elicitation/create`` where it offers the mode, else a
    permission request where that can carry the question, else decline (told)."""
    offered = getattr(capabilities, "elicitation", None)

    async def ask(request: Elicitation) -> ElicitAnswer:
        mode = getattr(offered, request.mode.value, None) if offered is not None else None
        if mode is not None:
            return await _elicit(conn, session_id, request)
        if request.mode is ElicitMode.URL or not request.fields:
            return await _permission(conn, session_id, request)
        say(NoticeLevel.WARNING, f"MCP server {request.server} asked for input ({request.message[:200]!r}): "
            "declined, since this editor does not offer forms (ACP elicitation)")
        return ElicitAnswer(action=ElicitAction.DECLINE)

    return ask


async def _elicit(conn: Any, session_id: str, request: Elicitation) -> ElicitAnswer:
    mode: Any
    if request.mode is ElicitMode.URL:
        mode = ElicitationUrlSessionMode(session_id=session_id, url=request.url or "",
                                         elicitation_id=request.elicitation_id or "mcp")
    else:
        mode = ElicitationFormSessionMode(session_id=session_id,
                                          requested_schema=ElicitationSchema.model_validate(_schema(request)))
    answer = await conn.create_elicitation(message=f"MCP server {request.server}: {request.message}", mode=mode)
    action = ElicitAction(answer.action) if answer.action in ("accept", "decline", "cancel") else ElicitAction.CANCEL
    content = getattr(answer, "content", None) if action is ElicitAction.ACCEPT else None
    return ElicitAnswer(action=action, content=content if isinstance(content, dict) else None)


def _schema(request: Elicitation) -> dict[str, Any]:
    """The form as ACP's schema (MCP's restricted one, written back)."""
    properties: dict[str, Any] = {}
    for field in request.fields:
        spec: dict[str, Any] = {"title": field.label}
        if field.description:
            spec["description"] = field.description
        if field.choices and field.kind.value == "choices":
            spec |= {"type": "array", "items": {"type": "string", "enum": field.choices}}
        elif field.choices:
            spec |= {"type": "string", "enum": field.choices}
        else:
            spec["type"] = field.kind.value
        properties[field.name] = spec
    return {"type": "object", "properties": properties,
            "required": [f.name for f in request.fields if f.required]}


async def _permission(conn: Any, session_id: str, request: Elicitation) -> ElicitAnswer:
    title = f"MCP server {request.server}: {request.message}"
    if request.url:
        title += f" (opens {request.url})"
    call = ToolCallUpdate(tool_call_id=f"mcp-question-{request.server}", title=title, kind="other",
                          status="pending")
    answer = await conn.request_permission(session_id=session_id, tool_call=call, options=_ASK_OPTIONS)
    outcome = getattr(answer, "outcome", None)
    if getattr(outcome, "outcome", None) == "selected" and getattr(outcome, "option_id", "") == "accept":
        return ElicitAnswer(action=ElicitAction.ACCEPT)
    if getattr(outcome, "outcome", None) == "selected":
        return ElicitAnswer(action=ElicitAction.DECLINE)
    return ElicitAnswer(action=ElicitAction.CANCEL)


__all__ = ["elicitor", "needs_servers", "offer_run", "prompt_entries"]
