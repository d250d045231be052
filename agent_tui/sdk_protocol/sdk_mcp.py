"""The app's in-process MCP servers (``"type": "sdk"`` in ``--mcp-config``).

Not yet bridged: such a server is refused with a clear error.
"""

from __future__ import annotations

from typing import Any

from agent_tui.sdk_protocol.wire import Wire


def bridge_servers(servers: list[Any], wire: Wire) -> None:
    """Connect each ``sdk`` server to the app through ``mcp_message``."""
