"""The app's in-process MCP servers (``"type": "sdk"`` in ``--mcp-config``).

Each is an MCP server like any other to the session (its tools are
``mcp__SERVER__TOOL``, under the same permissions, hooks and cancel protocol); its
JSON-RPC messages travel as ``mcp_message`` control requests to the app
(``mcp/app_servers.py``), which answers with ``mcp_response``.
"""

from __future__ import annotations

from typing import Any

from agent_tui.mcp.app_servers import Link, register
from agent_tui.sdk_protocol.wire import Wire
from agent_tui.settings.mcp_servers import Transport


def bridge_servers(servers: list[Any], wire: Wire) -> None:
    """Connect each ``sdk`` server to the app through ``mcp_message``."""
    for server in servers:
        if server.transport is Transport.SDK:
            register(server.name, _link(server.name, wire))


def _link(name: str, wire: Wire) -> Link:
    async def send(message: dict[str, Any]) -> dict[str, Any] | None:
        answer = await wire.request({"subtype": "mcp_message", "server_name": name,
                                     "message": message})
        response = answer.get("mcp_response")
        return response if isinstance(response, dict) else None

    return send
