"""How MCP failures are told: the error a call meets, and startup failures in a line."""

from __future__ import annotations

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agent_tui.mcp.auth.guard import CredentialRefused
from agent_tui.mcp_catalog.errors import short
from agent_tui.settings.mcp_servers import ServerConfig, Transport


class ServerUnavailable(Exception):
    """The server is not running and will not be started for this call."""


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_startup(exc: BaseException, config: ServerConfig) -> str:
    """Why a server could not start, for its status and the user."""
    exc = _leaf(exc)
    if isinstance(exc, FileNotFoundError):
        return f"cannot start {config.command!r}: command not found"
    if isinstance(exc, PermissionError):
        return f"cannot start {config.command!r}: permission denied"
    if isinstance(exc, MCPError):
        if exc.code == types.CONNECTION_CLOSED:
            return "the server closed the connection during startup"
        return f"startup failed: error {exc.code}: {exc.message}"
    if isinstance(exc, CredentialRefused):  # our own refusal says it whole
        return f"cannot use {config.url}: {' '.join(str(exc).split())}"
    if config.transport in (Transport.HTTP, Transport.SSE):
        return f"cannot use {config.url}: {short(exc)}"
    return f"startup failed: {short(exc)}"


__all__ = ["ServerUnavailable", "describe_startup"]
