"""A server's ``elicitation/create``, answered by the front end's elicitor.

The session's callback (:func:`callback`) turns the SDK's request into an
:class:`~agent_tui.mcp_catalog.elicitation.Elicitation`, awaits the elicitor the
front end set on the manager, and turns its answer back. A form answer is checked
against the server's own schema before it leaves (fail closed: an answer that does
not fit is sent as ``cancel``, never as a half-filled ``accept``). A form the client
cannot show (a schema MCP does not allow) is declined. When the server cancels its
request (``notifications/cancelled``), the SDK cancels the callback and the front end's
dialog goes with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import mcp_types as types
from mcp.client.session import ClientRequestContext, ElicitationFnT

from agent_tui.mcp_catalog.elicitation import (
    MAX_TEXT,
    ElicitAction,
    ElicitAnswer,
    Elicitation,
    ElicitMode,
    Elicitor,
    UnsupportedForm,
    check,
    form_fields,
)

log = logging.getLogger(__name__)


def callback(server: str, elicitor: Callable[[], Elicitor]) -> ElicitationFnT:
    """The session's elicitation callback for ``server``; ``elicitor()`` is the front
    end's, looked up at each request (a front end may set it after the server started)."""

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        request = _request(server, params)
        if request is None:
            return types.ElicitResult(action="decline")
        answer = await elicitor()(request)
        return _result(request, answer)

    return on_elicit


def _request(server: str, params: types.ElicitRequestParams) -> Elicitation | None:
    message = params.message[:MAX_TEXT]
    if isinstance(params, types.ElicitRequestURLParams):
        if not params.url.startswith(("https://", "http://")):
            log.warning("MCP server %s asked to open %r: declined (not a web address)", server, params.url)
            return None
        return Elicitation(server=server, mode=ElicitMode.URL, message=message, url=params.url,
                           elicitation_id=params.elicitation_id)
    try:
        fields = form_fields(params.requested_schema)
    except UnsupportedForm as exc:
        log.warning("MCP server %s sent a form agent-tui cannot show: %s", server, exc)
        return None
    return Elicitation(server=server, mode=ElicitMode.FORM, message=message, fields=fields)


def _result(request: Elicitation, answer: ElicitAnswer) -> types.ElicitResult:
    if answer.action is not ElicitAction.ACCEPT:
        return types.ElicitResult(action=answer.action.value)
    if request.mode is ElicitMode.URL:
        return types.ElicitResult(action="accept")
    content = {k: v for k, v in (answer.content or {}).items() if v is not None}
    problems = check(request.fields, content)
    if problems:
        log.warning("answer to MCP server %s does not fit its form (%s): sent as cancel", request.server, problems)
        return types.ElicitResult(action="cancel")
    return types.ElicitResult(action="accept", content=content)


__all__ = ["callback"]
