"""The session's MCP servers: configuration in, tools and statuses out, shutdown at quit.

Servers start **in the background at session start** (``manager.start()``, on the
core's loop): nothing waits for them, and a server's tools join the attached
``ToolSet`` when it is ready. A call to a server still starting waits for it (bounded
by the start timeout, and cancellable). A server whose connection is lost after it
was ready is restarted at its next call (at most ``MAX_RESTARTS`` times); one that
never started is not retried. Only :meth:`McpManager.shutdown` ends servers; a
cancelled tool call never does.

All methods run on one event loop (the core's); make one manager per loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from agent_tui.core.tool import ToolSet
from agent_tui.tools.mcp import procs
from agent_tui.tools.mcp.client import McpConnection, ServerState, ServerStatus
from agent_tui.tools.mcp.config import ConfigProblem, ServerConfig, Transport, load_config
from agent_tui.tools.mcp.tool import McpTool

DEFAULT_START_TIMEOUT_S = 30.0
DEFAULT_CONFIRM_S = 1.0
#: At shutdown: how long servers get to end by themselves (stdin closed) before we
#: send SIGTERM, and how long after SIGTERM before SIGKILL.
SHUTDOWN_GRACE_S = 1.0
KILL_GRACE_S = 1.0


class McpManager:
    """Owns every MCP server connection of one session."""

    def __init__(
        self,
        servers: list[ServerConfig],
        *,
        workspace: str | os.PathLike[str],
        problems: list[ConfigProblem] | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        call_timeout_s: float | None = None,
        confirm_s: float = DEFAULT_CONFIRM_S,
        log_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.workspace = Path(workspace)
        self.problems: list[ConfigProblem] = list(problems or [])
        self.confirm_s = confirm_s
        self.call_timeout_s = call_timeout_s
        self._listeners: list[Callable[[ServerStatus], None]] = []
        self._toolsets: list[ToolSet] = []
        self._tools: dict[str, McpTool] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._shut = False
        logs = Path(log_dir) if log_dir is not None else _default_log_dir()
        self.connections: dict[str, McpConnection] = {
            cfg.name: McpConnection(
                cfg, workspace=self.workspace, start_timeout_s=start_timeout_s,
                log_dir=logs, on_change=self._changed,
            )
            for cfg in servers
        }

    # -- for the wiring -------------------------------------------------------

    def start(self) -> None:
        """Start every server in the background; call on the core's running loop."""
        self._check_loop()
        for conn in self.connections.values():
            if conn.state is ServerState.NOT_STARTED:
                conn.start()

    async def wait_started(self, timeout: float) -> None:
        """Wait (at most ``timeout``) until no server is starting."""
        self._check_loop()
        tasks = [c._started for c in self.connections.values() if c.state is ServerState.STARTING]
        pending = [asyncio.shield(t) for t in tasks if t is not None and not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    def attach(self, toolset: ToolSet) -> None:
        """Add each ready server's tools to ``toolset``, now and as servers become ready."""
        self._toolsets.append(toolset)
        for tool in self._tools.values():
            if toolset.get(tool.name) is None:
                toolset.add(tool)

    def tools(self) -> list[McpTool]:
        """The tools of every server that has been ready, in a stable order."""
        return list(self._tools.values())

    def status(self) -> list[ServerStatus]:
        return [conn.status() for conn in self.connections.values()]

    def on_status(self, fn: Callable[[ServerStatus], None]) -> None:
        """Call ``fn(status)`` on the loop whenever a server's state changes."""
        self._listeners.append(fn)

    def request_stop(self, job_id: str) -> bool:
        """Part of the session's background work: MCP servers are not jobs a user
        stops one by one (they end when the session does)."""
        return False

    async def shutdown(self) -> list[int]:
        """End every server: close sessions, then TERM -> grace -> KILL what is left.

        Returns PIDs that survived SIGKILL (residue). Idempotent.
        """
        self._shut = True
        conns = list(self.connections.values())
        for conn in conns:
            conn.stop()
        tasks = [c.task for c in conns if c.task is not None and not c.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
        tags = [c.tag for c in conns if c.config.transport is Transport.STDIO]
        residue: list[int] = []
        if tags:
            residue = await asyncio.to_thread(procs.end_tagged, tags, KILL_GRACE_S)
        tasks = [t for t in tasks if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)
        for conn in conns:
            if conn.task is not None and not conn.task.done():
                conn.force_stop()
        tasks = [t for t in tasks if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        return residue

    # -- internals ------------------------------------------------------------

    def _check_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("McpManager is bound to another event loop; make one per loop")

    def _changed(self, conn: McpConnection) -> None:
        if conn.state is ServerState.READY:
            for spec in conn.tools:
                tool = McpTool(conn, spec, confirm_s=self.confirm_s, call_timeout_s=self.call_timeout_s)
                if tool.name in self._tools:
                    # a restart: the existing tool object already talks to this connection
                    continue
                self._tools[tool.name] = tool
                for toolset in self._toolsets:
                    if toolset.get(tool.name) is None:
                        toolset.add(tool)
        status = conn.status()
        for fn in list(self._listeners):
            try:
                fn(status)
            except Exception:
                pass  # a listener must not break a server's lifecycle


def _default_log_dir() -> Path:
    from agent_tui.paths import state_home

    return state_home() / "mcp-logs"


def load_mcp(
    workspace: str | os.PathLike[str],
    *,
    user_config_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    include_project: bool = True,
    **options: float | str | os.PathLike[str] | None,
) -> McpManager:
    """Read the config files and build a manager; no process is started yet.

    ``options`` go to :class:`McpManager` (``start_timeout_s``, ``call_timeout_s``,
    ``confirm_s``, ``log_dir``). ``MCP_TIMEOUT`` / ``MCP_TOOL_TIMEOUT`` (milliseconds,
    as in Claude Code) set the start and call timeouts when not given.
    """
    env = os.environ if environ is None else environ
    config = load_config(workspace, user_config_dir=user_config_dir, environ=env,
                         include_project=include_project)
    for var, key in (("MCP_TIMEOUT", "start_timeout_s"), ("MCP_TOOL_TIMEOUT", "call_timeout_s")):
        if key not in options and env.get(var, "").isdigit() and int(env[var]) > 0:
            options[key] = int(env[var]) / 1000
    return McpManager(config.servers, workspace=workspace, problems=config.problems,
                      **options)  # type: ignore[arg-type]


async def load_mcp_tools(
    workspace: str | os.PathLike[str],
    *,
    user_config_dir: str | os.PathLike[str] | None = None,
    wait_s: float = 0.0,
    **options: float | str | os.PathLike[str] | None,
) -> McpManager:
    """:func:`load_mcp`, then start the servers, then wait up to ``wait_s`` for them."""
    manager = load_mcp(workspace, user_config_dir=user_config_dir, **options)
    manager.start()
    if wait_s > 0:
        await manager.wait_started(wait_s)
    return manager
