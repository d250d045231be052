"""The session's MCP servers: configuration in, tools and statuses out, shutdown at quit.

Servers start **in the background at session start** (``manager.start()``, on the
core's loop): nothing waits for them, and a server's tools join the attached
``ToolSet`` when it is ready. A call to a server still starting waits for it (bounded
by the start timeout, and cancellable). A server whose connection is lost after it
was ready is restarted at its next call (at most ``MAX_RESTARTS`` times); one that
never started is not retried. Only :meth:`McpManager.shutdown` ends servers; a
cancelled tool call never does.

**Tool lists change only at a turn boundary.** The tools are part of every request's
prompt, and the provider's prompt cache is keyed on them: changing them mid-turn
would rebuild the cache between two requests of one turn (and show the model tools
that vanish). So a new list (``notifications/tools/list_changed``, a restart, a server
ready late) is applied at once while no turn runs, or before the first request of the
first turn (while that turn waits for servers to start), and otherwise when the turn
ends. The manager learns turn boundaries from the session's events
(:meth:`McpManager.observe`). Each change applied after requests were made is told to
``on_tools_changed`` listeners, saying the prompt cache will be rebuilt.

All methods run on one event loop (the core's); make one manager per loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.calls.tool import ToolSet
from agent_tui.mcp_catalog.elicitation import Elicitor, decline
from agent_tui.mcp_catalog.port import McpServers
from agent_tui.mcp import procs
from agent_tui.settings.mcp_servers import TASK_TTL_DEFAULT_MS, ConfigProblem, ServerConfig, Transport, load_config
from agent_tui.mcp_catalog.status import ServerState, ServerStatus

if TYPE_CHECKING:  # the MCP SDK is imported once a server is configured
    import mcp_types as types

    from agent_tui.mcp.connection import McpConnection
    from agent_tui.mcp.tool import McpTool

T = TypeVar("T")
DEFAULT_START_TIMEOUT_S = 30.0
#: How long one MCP tool call may take, unless the server's "timeout" or
#: MCP_TOOL_TIMEOUT says otherwise: long enough for a build or a crawl, short enough
#: that a server that never answers does not hold the turn until Esc.
DEFAULT_TOOL_TIMEOUT_S = 600.0
#: How long reading a resource or getting a prompt for the user may take.
ASK_TIMEOUT_S = 30.0
DEFAULT_CONFIRM_S = 1.0
#: At shutdown: how long servers get to end by themselves (stdin closed) before we
#: send SIGTERM, and how long after SIGTERM before SIGKILL.
SHUTDOWN_GRACE_S = 1.0
KILL_GRACE_S = 1.0


class ToolsChange(DeferredModel):
    """A server's tool list changed, and the change is now offered to the model."""

    server: str
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)  # same name, new schema or description

    def describe(self) -> str:
        parts = [f"+{n}" for n in self.added] + [f"-{n}" for n in self.removed]
        parts += [f"~{n}" for n in self.changed]
        return ", ".join(parts)


class McpManager(McpServers):
    """Owns every MCP server connection of one session (the front ends reach it as
    :class:`~agent_tui.mcp_catalog.port.McpServers`)."""

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
        auth_dir: str | os.PathLike[str] | None = None,
        disabled: Any = None,
    ) -> None:
        self.workspace = Path(workspace)
        self.problems: list[ConfigProblem] = list(problems or [])
        self.confirm_s = confirm_s
        self.call_timeout_s = call_timeout_s
        self._listeners: list[Callable[[ServerStatus], None]] = []
        self._change_listeners: list[Callable[[ToolsChange], None]] = []
        self._catalog_listeners: list[Callable[[str], None]] = []
        self._elicitor: Elicitor = decline  # until a front end can ask the user
        # The session's Elicitation hooks, around whichever elicitor is set (the wiring's).
        self.elicitor_hooks: Callable[[Elicitor], Elicitor] = lambda fn: fn
        self._toolsets: list[ToolSet] = []
        self._tools: dict[str, McpTool] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._shut = False
        # Turn boundaries, from the session's events (observe): while a turn runs and
        # its requests have begun, new tool lists wait for its end.
        self._in_turn = False
        self._waiting_for_start = False  # the first turn waits for servers: no request yet
        self._requested = False  # a request has offered the current tools
        self._pending: set[str] = set()
        self._start_timeout_s = start_timeout_s
        self._logs = Path(log_dir) if log_dir is not None else _default_log_dir()
        self.auth_dir = Path(auth_dir) if auth_dir is not None else self._logs.parent / "mcp-auth"
        self._gone: dict[str, McpConnection] = {}  # removed: their tools go at the turn's end
        self.disabled = disabled  # a DisabledServers (.disabled), or None: none kept
        off = disabled.names() if disabled is not None else set()
        self.connections: dict[str, McpConnection] = {cfg.name: self._connection(cfg) for cfg in servers}
        for name in off & set(self.connections):
            self.connections[name].disable()

    def _connection(self, cfg: ServerConfig) -> McpConnection:
        from agent_tui.mcp.connection import McpConnection

        return McpConnection(
            cfg, workspace=self.workspace, start_timeout_s=self._start_timeout_s,
            log_dir=self._logs, auth_dir=self.auth_dir, on_change=self._changed, on_tools=self._listed,
            on_catalog=self._catalogued, elicitor=lambda: self.elicitor_hooks(self._elicitor),
        )

    # -- for the wiring -------------------------------------------------------

    def start(self) -> None:
        """Start every server in the background; call on the core's running loop."""
        self._check_loop()
        for conn in self.connections.values():
            if conn.state is ServerState.NOT_STARTED:
                conn.start()

    async def wait_started(self, timeout: float) -> None:
        """Wait (at most ``timeout``) until no server is starting (those not started yet
        are started now: a message that names a resource may come before the session
        starts its servers)."""
        self.start()
        starting = [c.started for c in self.connections.values() if c.state is ServerState.STARTING]
        pending = [asyncio.shield(t) for t in starting if t is not None and not t.done()]
        if pending:
            self._waiting_for_start = True
            try:
                await asyncio.wait(pending, timeout=timeout)
            finally:
                self._waiting_for_start = False
        if self._in_turn:
            self._requested = True  # the turn's first request follows now

    def attach(self, toolset: ToolSet) -> None:
        """Add each ready server's tools to ``toolset``, now and as servers become ready."""
        self._toolsets.append(toolset)
        for tool in self._tools.values():
            if toolset.get(tool.name) is None:
                toolset.add(tool)

    def tools(self) -> list[McpTool]:
        """The tools offered now, in a stable order."""
        return list(self._tools.values())

    def status(self) -> list[ServerStatus]:
        return [conn.status().model_copy(update={
            "tool_timeout_s": self.tool_timeout(conn.config),
            "task_ttl_s": (conn.config.task_ttl_ms or TASK_TTL_DEFAULT_MS) / 1000,
            "task_tools": {t.remote_name: mode for t in self._tools.values() if t.conn is conn
                           and (mode := t.task_mode()) is not None}}) for conn in self.connections.values()]

    def tool_timeout(self, cfg: ServerConfig) -> float | None:
        """Seconds one of the server's tool calls may take: its "timeout", else the
        session's (None: no bound)."""
        return cfg.timeout_ms / 1000 if cfg.timeout_ms is not None else self.call_timeout_s

    def servers(self) -> list[str]:
        return list(self.connections)

    def uses_oauth(self, name: str) -> bool:
        from agent_tui.mcp.oauth import uses_oauth

        conn = self.connections.get(name)
        return conn is not None and uses_oauth(conn.config)

    # -- resources and prompts (the TUI's @server:uri mentions and /mcp__server__prompt)

    def resources(self) -> list[tuple[str, types.Resource]]:
        """Every ready server's resources, as (server, resource)."""
        return [(c.name, r) for c in self.connections.values()
                if c.state is ServerState.READY for r in c.resources]

    def prompts(self) -> list[tuple[str, types.Prompt]]:
        """Every ready server's prompts, as (server, prompt)."""
        return [(c.name, p) for c in self.connections.values()
                if c.state is ServerState.READY for p in c.prompts]

    async def read_resource(self, server: str, uri: str) -> types.ReadResourceResult:
        result: types.ReadResourceResult = await self._conn(server).ask(
            lambda s: s.read_resource(uri), ASK_TIMEOUT_S)
        return result

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        result: types.GetPromptResult = await self._conn(server).ask(
            lambda s: s.get_prompt(name, arguments), ASK_TIMEOUT_S)
        return result

    def from_thread(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` (one of the methods above) on the manager's loop, from another
        thread (the TUI's); the future raises RuntimeError before the servers started."""
        if self._loop is None or self._loop.is_closed():
            coro.close()
            failed: concurrent.futures.Future[T] = concurrent.futures.Future()
            failed.set_exception(RuntimeError("the MCP servers have not started yet"))
            return failed
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def set_elicitor(self, fn: Elicitor) -> None:
        """Who answers the servers' questions to the user from now on (awaited on the
        servers' loop); until one is set, every question is declined."""
        self._elicitor = fn

    def on_catalog(self, fn: Callable[[str], None]) -> None:
        """Call ``fn(server)`` when a server's resources or prompts were listed again."""
        self._catalog_listeners.append(fn)

    def _conn(self, server: str) -> McpConnection:
        from agent_tui.mcp.errors import ServerUnavailable

        conn = self.connections.get(server)
        if conn is None:
            raise ServerUnavailable(f"no MCP server named {server!r}")
        return conn

    def _catalogued(self, conn: McpConnection) -> None:
        for fn in list(self._catalog_listeners):
            try:
                fn(conn.name)
            except Exception:
                pass  # a listener must not break the connection

    def on_status(self, fn: Callable[[ServerStatus], None]) -> None:
        """Call ``fn(status)`` on the loop whenever a server's state changes."""
        self._listeners.append(fn)

    def on_tools_changed(self, fn: Callable[[ToolsChange], None]) -> None:
        """Call ``fn(change)`` when a changed tool list is applied after requests were
        made with the old one (the prompt cache is rebuilt on the next request)."""
        self._change_listeners.append(fn)

    def observe(self, event: Any) -> None:
        """The session's events, for turn boundaries (``turn_started`` / ``turn_ended``)."""
        kind = getattr(event, "type", "")
        if kind == "turn_started":
            self._in_turn = True
            if not self._waiting_for_start:
                self._requested = True
        elif kind == "turn_ended":
            self._in_turn = False
            for name in sorted(self._pending):
                conn = self.connections.get(name) or self._gone.get(name)
                if conn is not None:
                    self._apply(conn)
            self._pending.clear()
            self._gone = {n: c for n, c in self._gone.items() if c.task is not None and not c.task.done()}

    def request_stop(self, job_id: str) -> bool:
        """Part of the session's background work: MCP servers are not jobs a user
        stops one by one (they end when the session does)."""
        return False

    # -- changing the servers during a session (a config edit, /mcp) -------------

    def add_server(self, cfg: ServerConfig, *, start: bool | None = None) -> None:
        """A server joins: started now, on the manager's loop, unless ``start`` is
        False or (None) the user disabled it; then it is disabled."""
        self._check_loop()
        if start is None:
            start = self.disabled is None or cfg.name not in self.disabled.names()
        conn = self._connection(cfg)
        self.connections[cfg.name] = conn
        if start:
            conn.start()
        else:
            conn.disable()

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn a server off (ended, its tools withdrawn) or on again (started)."""
        conn = self._conn(name)
        if enabled == (conn.state is not ServerState.DISABLED):
            return
        if self.disabled is not None:
            self.disabled.set(name, not enabled)
        await self.remove_server(name)
        self.add_server(conn.config, start=enabled)

    async def login(self, name: str, open_url: Any) -> None:
        """Log in to an HTTP server now (:mod:`.login`), then connect it again."""
        from agent_tui.mcp.login import login

        conn = self._conn(name)
        await login(conn.config, self.auth_dir, open_url, workspace=self.workspace)
        if conn.state is not ServerState.DISABLED:
            await self.restart_server(name)

    async def remove_server(self, name: str) -> None:
        """End one server; its tools, resources and prompts are withdrawn (the tools
        at the turn's end, as any tool list change)."""
        self._check_loop()
        conn = self.connections.pop(name, None)
        if conn is None:
            return
        self._gone[name] = conn
        conn.tools, conn.resources, conn.prompts = [], [], []
        self._listed(conn)
        await self._end([conn])

    async def restart_server(self, name: str, cfg: ServerConfig | None = None) -> None:
        """End one server and start it again (with ``cfg`` when its config changed).
        Its tools stay offered: a call waits for the new start; the new listing is
        applied at the turn boundary as any other."""
        self._check_loop()
        old = self.connections.get(name)
        cfg = cfg or (old.config if old is not None else None)
        if cfg is None:
            return
        if old is not None:
            await self._end([old])
        self.add_server(cfg)
        for tool in self._tools.values():
            if tool.server == name:
                tool.conn = self.connections[name]
                tool.call_timeout_s = self.tool_timeout(tool.conn.config)

    async def shutdown(self) -> list[int]:
        """End every server: close sessions, then TERM -> grace -> KILL what is left.

        Returns PIDs that survived SIGKILL (residue). Idempotent.
        """
        self._shut = True
        return await self._end([*self.connections.values(), *self._gone.values()])

    async def _end(self, conns: list[McpConnection]) -> list[int]:
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
            self._listed(conn)
        status = conn.status()
        for fn in list(self._listeners):
            try:
                fn(status)
            except Exception:
                pass  # a listener must not break a server's lifecycle

    def _listed(self, conn: McpConnection) -> None:
        """``conn`` has a tool list (again): offer it now, or at the turn's end."""
        if self._in_turn and not self._waiting_for_start:
            self._pending.add(conn.name)
        else:
            self._apply(conn)

    def _apply(self, conn: McpConnection) -> None:
        from agent_tui.mcp.tool import McpTool, tool_name

        wanted = {tool_name(conn.name, spec.name): spec for spec in conn.tools}
        offered = {name: t for name, t in self._tools.items() if t.server == conn.name}
        change = ToolsChange(server=conn.name)
        for name, tool in offered.items():
            if name not in wanted:
                change.removed.append(name)
            elif tool.spec_source != wanted[name]:
                change.changed.append(name)
            elif tool.conn is not conn:  # the server was restarted: same tool, new connection
                tool.conn = conn
        change.added = [name for name in wanted if name not in offered]
        for name in change.removed + change.changed:
            del self._tools[name]
            for toolset in self._toolsets:
                toolset.remove(name)
        for name in change.added + change.changed:
            tool = McpTool(conn, wanted[name], confirm_s=self.confirm_s,
                           call_timeout_s=self.tool_timeout(conn.config))
            self._tools[name] = tool
            for toolset in self._toolsets:
                if toolset.get(name) is None:
                    toolset.add(tool)
        if (change.added or change.removed or change.changed) and self._requested:
            self._requested = self._in_turn  # the next request sends the new list
            for fn in list(self._change_listeners):
                try:
                    fn(change)
                except Exception:
                    pass  # a listener must not stop the change


def _default_log_dir() -> Path:
    from agent_tui.paths import state_home

    return state_home() / "mcp-logs"


def load_mcp(
    workspace: str | os.PathLike[str],
    *,
    user_config_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    include_project: bool = True,
    extra: Iterable[ServerConfig] = (),
    start_timeout_s: float | None = None,
    call_timeout_s: float | None = None,
    confirm_s: float = DEFAULT_CONFIRM_S,
    log_dir: str | os.PathLike[str] | None = None,
    auth_dir: str | os.PathLike[str] | None = None,
    disabled: Any = None,
    approved: Any = None,
) -> McpManager:
    """Read the config files and build a manager; no process is started yet.

    ``extra`` servers (e.g. those an ACP client sends) join the files' and win over a
    server of the same name. The timeouts, ``log_dir``, ``auth_dir`` and ``disabled`` go
    to :class:`McpManager`; ``approved``: the project's servers the user approved.
    ``MCP_TIMEOUT`` / ``MCP_TOOL_TIMEOUT`` (milliseconds, as in Claude Code) set the
    start and call timeouts when not given (default: 30 s and ``DEFAULT_TOOL_TIMEOUT_S``;
    a server's own "timeout" wins over the call timeout).
    """
    env = os.environ if environ is None else environ
    config = load_config(workspace, user_config_dir=user_config_dir, environ=env,
                         include_project=include_project, approved=approved)
    if start_timeout_s is None:
        start_timeout_s = _env_seconds(env, "MCP_TIMEOUT") or DEFAULT_START_TIMEOUT_S
    if call_timeout_s is None:
        call_timeout_s = _env_seconds(env, "MCP_TOOL_TIMEOUT") or DEFAULT_TOOL_TIMEOUT_S
    servers = {s.name: s for s in config.servers}
    servers.update({s.name: s for s in extra})
    return McpManager(list(servers.values()), workspace=workspace, problems=config.problems,
                      start_timeout_s=start_timeout_s, call_timeout_s=call_timeout_s,
                      confirm_s=confirm_s, log_dir=log_dir, auth_dir=auth_dir, disabled=disabled)


def _env_seconds(env: Mapping[str, str], var: str) -> float | None:
    """A timeout in milliseconds from the environment, in seconds (None: not set)."""
    value = env.get(var, "")
    return int(value) / 1000 if value.isdigit() and int(value) > 0 else None


async def load_mcp_tools(
    workspace: str | os.PathLike[str],
    *,
    user_config_dir: str | os.PathLike[str] | None = None,
    wait_s: float = 0.0,
    log_dir: str | os.PathLike[str] | None = None,
) -> McpManager:
    """:func:`load_mcp`, then start the servers, then wait up to ``wait_s`` for them."""
    manager = load_mcp(workspace, user_config_dir=user_config_dir, log_dir=log_dir)
    manager.start()
    if wait_s > 0:
        await manager.wait_started(wait_s)
    return manager
