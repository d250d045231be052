"""MCP tools: servers from ``.mcp.json`` / the user's ``mcp.json``, as ``mcp__SERVER__TOOL``.

- ``agent_tui.settings.mcp_servers``: reading and checking the config files;
- ``agent_tui.mcp_catalog``: a server's state and status (no SDK), what the front ends make
  of its prompts and resources, and the port they reach the manager through;
- :mod:`.connection`: one connection per server, in one long-lived task;
- :mod:`.transports`: opening stdio and streamable HTTP sessions, stderr logs;
- :mod:`.call`: one ``tools/call`` and its cancel protocol, with our own request ids
  so a cancel names the right request;
- :mod:`.errors`: how failures are worded;
- :mod:`.content`: a result's content (text, images, resources) for the model;
- :mod:`.tool`: the Tool adapter and what the model is told when a call is cancelled;
- :mod:`.manager`: the session's servers, their statuses and tool lists, and shutdown;
- :mod:`.procs`: finding and ending stdio server processes.

See docs/mcp.md.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_tui.settings.mcp_servers import ConfigProblem, ServerConfig, load_config, user_config_dir
    from agent_tui.mcp_catalog.status import ServerState, ServerStatus
    from agent_tui.mcp.manager import McpManager, ToolsChange, load_mcp, load_mcp_tools
    from agent_tui.mcp.tool import OPERATION_META_KEY, McpTool, tool_name

#: Where each name lives: imported on first use, so that importing one light module of
#: this package (or a state from :mod:`agent_tui.mcp_catalog.status`) does not load the MCP SDK.
_HOME = {
    "ConfigProblem": "agent_tui.settings.mcp_servers", "ServerConfig": "agent_tui.settings.mcp_servers",
    "load_config": "agent_tui.settings.mcp_servers", "user_config_dir": "agent_tui.settings.mcp_servers",
    "ServerState": "agent_tui.mcp_catalog.status", "ServerStatus": "agent_tui.mcp_catalog.status",
    "McpManager": "agent_tui.mcp.manager", "ToolsChange": "agent_tui.mcp.manager",
    "load_mcp": "agent_tui.mcp.manager", "load_mcp_tools": "agent_tui.mcp.manager",
    "OPERATION_META_KEY": "agent_tui.mcp.tool", "McpTool": "agent_tui.mcp.tool",
    "tool_name": "agent_tui.mcp.tool",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(_HOME[name]), name)
    raise AttributeError(f"module 'agent_tui.mcp' has no attribute {name!r}")


__all__ = [
    "OPERATION_META_KEY",
    "ConfigProblem",
    "McpManager",
    "McpTool",
    "ServerConfig",
    "ServerState",
    "ServerStatus",
    "ToolsChange",
    "load_config",
    "load_mcp",
    "load_mcp_tools",
    "tool_name",
    "user_config_dir",
]
