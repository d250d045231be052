"""What the front ends and the wiring read of an MCP server: its state and its status.

Light on purpose (no MCP SDK): a session with no MCP server, and the TUI's first
frame, import this and not the SDK.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
from enum import StrEnum

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.settings.mcp_servers import Transport


class ServerState(StrEnum):
    NOT_STARTED = "not_started"
    STARTING = "starting"
    READY = "ready"
    NEEDS_LOGIN = "needs_login"  # an HTTP server wants an OAuth login (/mcp, ``mcp login``)
    FAILED = "failed"
    STOPPED = "stopped"
    DISABLED = "disabled"  # turned off by the user (/mcp): not started


class ServerStatus(DeferredModel):
    """What the UI shows for one server."""

    name: str
    transport: Transport
    source: str  # the config file it came from (or the ACP client)
    target: str  # the command line or URL
    state: ServerState
    error: str | None = None
    tools: list[str] = Field(default_factory=list)
    resources: int = 0
    prompts: int = 0
    left_out: dict[str, str] = Field(default_factory=dict)  # tool -> why it is not offered
    pid: int | None = None
    restarts: int = 0
    log: str | None = None  # where the server's stderr goes (stdio)
    tool_timeout_s: float | None = None  # how long one of its tool calls may take
    task_tools: dict[str, str] = Field(default_factory=dict)  # tool -> when it runs as an MCP task
    task_ttl_s: float | None = None  # how long the server is asked to keep a task
    # what the server's initialize answer said it is (serverInfo): name, version
    server_info: tuple[str, str] | None = None
    # how it is reached: stdio's command and args (never its env), or the URL
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    url: str | None = None

