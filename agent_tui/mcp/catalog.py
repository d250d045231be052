"""What a server offers besides tools: its resources and its prompts, listed.

They are listed when the server is ready (each only when the server's capabilities
say it has them) and again when it says they changed
(``notifications/resources/list_changed``, ``notifications/prompts/list_changed``).
What the front ends make of them (prompts as ``/mcp__server__prompt`` commands,
resources as ``@server:uri`` mentions, their text for the model) is in
:mod:`agent_tui.mcp_catalog.offers`.
"""

from __future__ import annotations

from enum import StrEnum
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is imported by what talks to a server
    import mcp_types as types
    from mcp.client.session import ClientSession

_LIST_PAGES = 50


class Offer(StrEnum):
    """What a list_changed notification names."""

    TOOLS = "tools"
    RESOURCES = "resources"
    PROMPTS = "prompts"


CHANGED: dict[str, Offer] = {
    "notifications/tools/list_changed": Offer.TOOLS,
    "notifications/resources/list_changed": Offer.RESOURCES,
    "notifications/prompts/list_changed": Offer.PROMPTS,
}


async def list_resources(session: ClientSession) -> list[types.Resource]:
    caps = _caps(session)
    if caps is not None and caps.resources is None:
        return []
    return await _every_page(session.list_resources, lambda page: page.resources)


async def list_prompts(session: ClientSession) -> list[types.Prompt]:
    caps = _caps(session)
    if caps is not None and caps.prompts is None:
        return []
    return await _every_page(session.list_prompts, lambda page: page.prompts)


async def _every_page(list_page: Callable[..., Awaitable[Any]],
                      items: Callable[[Any], list[Any]]) -> list[Any]:
    """A paginated list, page after page (at most ``_LIST_PAGES`` of them)."""
    import mcp_types as types

    found: list[Any] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await list_page(params=params)
        found.extend(items(page))
        cursor = page.next_cursor
        if not cursor:
            break
    return found


def _caps(session: ClientSession) -> types.ServerCapabilities | None:
    result = session.initialize_result
    return result.capabilities if result is not None else None


__all__ = ["CHANGED", "Offer", "list_prompts", "list_resources"]
