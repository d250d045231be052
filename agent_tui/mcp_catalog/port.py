"""What a front end may ask of the session's MCP servers: their statuses, the
resources and prompts they offer, reading one and getting one, who answers their
questions to the user, and the actions of ``/mcp`` (log in, reconnect, disable, enable). The session's manager
(:class:`agent_tui.mcp.manager.McpManager`) is one; a front end finds it among
the session's background work and never imports the tools.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:  # the SDK's models: imported once a server is configured
    import mcp_types as types

    from agent_tui.mcp_catalog.browser import OpenUrl
    from agent_tui.mcp_catalog.elicitation import Elicitor
    from agent_tui.mcp_catalog.status import ServerStatus

T = TypeVar("T")


@runtime_checkable
class McpServers(Protocol):
    """The session's MCP servers, as a front end reaches them. The coroutines run on
    the servers' loop: a front end on another thread hands them to :meth:`from_thread`."""

    def servers(self) -> list[str]:
        """The names of the servers configured now."""

    def status(self) -> list[ServerStatus]: ...

    def uses_oauth(self, name: str) -> bool:
        """Whether server ``name`` logs in with OAuth (``/mcp`` offers a login)."""

    def resources(self) -> list[tuple[str, types.Resource]]: ...

    async def wait_started(self, timeout: float) -> None:
        """Return once no server is starting (at most ``timeout`` seconds)."""

    def prompts(self) -> list[tuple[str, types.Prompt]]: ...

    async def read_resource(self, server: str, uri: str) -> types.ReadResourceResult: ...

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> types.GetPromptResult: ...

    async def login(self, name: str, open_url: OpenUrl) -> None: ...

    async def restart_server(self, name: str) -> None: ...

    async def set_enabled(self, name: str, enabled: bool) -> None: ...

    def from_thread(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]: ...

    def on_status(self, fn: Callable[[ServerStatus], None]) -> None: ...

    def on_catalog(self, fn: Callable[[str], None]) -> None: ...

    def set_elicitor(self, fn: Elicitor) -> None:
        """Who answers the servers' questions to the user (elicitation)."""


def servers_of(background: Iterable[object] | None) -> McpServers | None:
    """The session's MCP servers among its background work, or None."""
    for work in background or []:
        if isinstance(work, McpServers):
            return work
    return None


__all__ = ["McpServers", "servers_of"]
