"""The MCP servers an ACP client sends with ``session/new`` / ``session/load``, as the
MCP manager's server configs.

They run exactly like the servers of the MCP config files (``mcp``): started in
the background with the session, offered from the first request (the first turn
waits for them, bounded), each call cancelled with ``notifications/cancelled`` on
``session/cancel``, ended when the session ends. Unlike a project's ``.mcp.json``
they need no trust: the user configured them in the client.

Served: stdio (the schema says every agent MUST), streamable HTTP and SSE (we
advertise ``mcpCapabilities.http`` and ``.sse``). Refused, with an ACP error naming
the server and why, before any session is made: ACP-tunnelled servers, a stdio command that does
not exist, a URL that is not http(s), two servers of one name. Names become part of
tool names (``mcp__SERVER__TOOL``), so characters the model API does not allow turn
into ``_``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from acp import RequestError

from agent_tui.settings.mcp_servers import ServerConfig, Transport

SOURCE = Path("ACP client")
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def safe_name(name: str) -> str:
    """A server name usable in tool names: [A-Za-z0-9_-], no ``__``."""
    cleaned = re.sub(r"_{2,}", "_", _BAD.sub("_", name)).strip("_")
    return cleaned or "server"


def _refuse(name: str, why: str) -> RequestError:
    return RequestError(-32602, f"MCP server {name!r}: {why}",
                        {"mcpServers": [{"name": name, "details": why}]})


def server_configs(servers: list[Any] | None) -> list[ServerConfig]:
    """The client's servers as configs; raises RequestError for one we cannot serve."""
    configs: dict[str, ServerConfig] = {}
    for server in servers or []:
        config = _config(server)
        if config.name in configs:
            raise _refuse(server.name, f"another server is also named {config.name!r} here")
        configs[config.name] = config
    return list(configs.values())


def _config(server: Any) -> ServerConfig:
    kind = getattr(server, "type", None) or "stdio"  # the stdio variant has no type field
    name = safe_name(server.name)
    if kind in ("http", "sse"):
        if not server.url.startswith(("http://", "https://")):
            raise _refuse(server.name, f"url must start with http:// or https://, got {server.url!r}")
        return ServerConfig(name=name, transport=Transport.SSE if kind == "sse" else Transport.HTTP,
                            source=SOURCE, url=server.url, headers={h.name: h.value for h in server.headers})
    if kind != "stdio":
        raise _refuse(server.name, f"the {kind!r} transport is not supported (stdio, http and sse are)")
    command = server.command
    found = command if os.path.isabs(command) else shutil.which(command)
    if not command or not found or not os.access(found, os.X_OK) or os.path.isdir(found):
        raise _refuse(server.name, f"cannot run {command!r}: no such executable")
    return ServerConfig(name=name, transport=Transport.STDIO, source=SOURCE, command=command,
                        args=list(server.args), env={e.name: e.value for e in server.env})


__all__ = ["SOURCE", "safe_name", "server_configs"]
