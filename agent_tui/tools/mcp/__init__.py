"""MCP tools: servers from ``.mcp.json`` / the user's ``mcp.json``, as ``mcp__SERVER__TOOL``.

- ``agent_tui.settings.mcp_servers``: reading and checking the config files;
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

from agent_tui.tools.mcp.connection import ServerState, ServerStatus
from agent_tui.settings.mcp_servers import ConfigProblem, ServerConfig, load_config, user_config_dir
from agent_tui.tools.mcp.manager import McpManager, ToolsChange, load_mcp, load_mcp_tools
from agent_tui.tools.mcp.tool import OPERATION_META_KEY, McpTool, tool_name

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
