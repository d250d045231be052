"""The app's control requests that ask the session about itself, answered as Claude Code does.

- ``get_context_usage``: what fills the window (the ``/context`` report), as Claude
  Code answers it (``context_usage.py``).
- ``mcp_status``, ``mcp_toggle``, ``mcp_reconnect``: the session's MCP servers (the
  app's in-process ones included), each with its ``config`` and, once connected, the
  ``serverInfo`` its ``initialize`` answer gave; an unknown name is ``Server not
  found: NAME``. A config shows how the server is reached, never its ``env`` or
  ``headers`` (Claude Code shows headers, tokens included).
- ``rewind_files``: the files back to the checkpoint of a user message, named by its
  ``uuid`` (the one the app gave, or the one ``--replay-user-messages`` echoed);
  ``dry_run`` only says what would change. The conversation stays as it is.
- ``stop_task``: a background job (``task_started`` gave its id) is stopped; its end
  follows as ``task_updated`` and ``task_notification``. An id that names no running
  job is answered with success and changes nothing, as Claude Code answers it.
  ``task_started`` and ``task_notification`` name the tool call that started the job
  (``tool_use_id``), as Claude Code's do.

Answers that need the session (the report, a rewind) wait for its Event.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, assert_never
from urllib.parse import urlsplit, urlunsplit

from agent_tui.core.session.session import Session
from agent_tui.mcp_catalog.port import McpServers, servers_of
from agent_tui.mcp_catalog.status import ServerState, ServerStatus
from agent_tui.protocol import (
    BackgroundJobChanged,
    ContextReport,
    Event,
    FileChangeInfo,
    Notice,
    NoticeLevel,
    PlanRewind,
    RestoreWhat,
    Rewind,
    RewindPlanned,
    Rewound,
    ShowContext,
    StopBackground,
    Usage,
)
from agent_tui.protocol.states import BackgroundKind, BackgroundState, RequestPurpose
from agent_tui.sdk_protocol.context_usage import context_usage
from agent_tui.sdk_protocol.wire import Wire
from agent_tui.settings.mcp_servers import Transport

#: The requests :class:`Controls` answers.
SUBTYPES = frozenset({"get_context_usage", "mcp_status", "mcp_toggle", "mcp_reconnect",
                      "rewind_files", "stop_task"})

#: How long ``mcp_toggle`` (on) and ``mcp_reconnect`` wait for the server to connect.
MCP_CONNECT_TIMEOUT_S = 60.0
_MCP_STATUS = {
    ServerState.READY: "connected", ServerState.STARTING: "pending",
    ServerState.NOT_STARTED: "pending", ServerState.NEEDS_LOGIN: "needs-auth",
    ServerState.FAILED: "failed", ServerState.STOPPED: "failed",
    ServerState.DISABLED: "disabled",
}
_REWINDS = (RewindPlanned, Rewound)
_TASK_TYPE = {BackgroundKind.SHELL: "local_bash", BackgroundKind.AGENT: "local_agent"}
_NOTIFIED = {BackgroundState.EXITED: "completed", BackgroundState.COMPLETED: "completed",
             BackgroundState.FAILED: "failed", BackgroundState.KILLED: "stopped",
             BackgroundState.CANCELLED: "stopped"}
_UPDATED = {BackgroundState.EXITED: "completed", BackgroundState.COMPLETED: "completed",
            BackgroundState.FAILED: "failed", BackgroundState.KILLED: "killed",
            BackgroundState.CANCELLED: "killed"}


@dataclass
class _Ask:
    request_id: str
    answered_by: type[Any]  # the Event that answers it


class Controls:
    def __init__(self, wire: Wire, session: Session) -> None:
        self.wire = wire
        self.session = session
        self.turns: dict[str, str] = {}  # a user message's uuid -> its turn (checkpoint)
        self.tasks: dict[str, BackgroundJobChanged] = {}  # background jobs seen running
        self.last_usage: Usage | None = None  # the main conversation's last request
        self._asks: list[_Ask] = []
        self._working: set[asyncio.Task[None]] = set()

    # -- requests -----------------------------------------------------------------------

    def handle(self, request_id: str, subtype: str, body: dict[str, Any]) -> None:
        match subtype:
            case "get_context_usage":
                self._asks.append(_Ask(request_id, ContextReport))
                self.session.submit(ShowContext())
            case "mcp_status":
                self.wire.answer(request_id, {"mcpServers": [
                    _server(s) for s in self._servers_status()]})
            case "mcp_toggle":
                enabled = body.get("enabled")
                if not isinstance(enabled, bool):
                    self.wire.refuse(request_id, "mcp_toggle: enabled must be true or false")
                    return
                self._mcp(request_id, body, lambda m, name: m.set_enabled(name, enabled),
                          connects=enabled)
            case "mcp_reconnect":
                self._mcp(request_id, body, lambda m, name: m.restart_server(name))
            case "rewind_files":
                self._rewind(request_id, body)
            case "stop_task":
                self._stop(request_id, str(body.get("task_id")))
            case _:
                self.wire.refuse(request_id, f"not a request of these: {', '.join(SUBTYPES)}")

    def _servers(self) -> McpServers | None:
        return servers_of(self.session.background)

    def _servers_status(self) -> list[ServerStatus]:
        servers = self._servers()
        return servers.status() if servers is not None else []

    def _mcp(self, request_id: str, body: dict[str, Any],
             act: Callable[[McpServers, str], Coroutine[Any, Any, None]],
             connects: bool = True) -> None:
        """Turn a server off or on, or start it again; one that should connect is
        answered once it has (or with why it did not)."""
        name = str(body.get("serverName"))
        servers = self._servers()
        if servers is None or name not in servers.servers():
            self.wire.refuse(request_id, f"Server not found: {name}")
            return

        async def run() -> None:
            try:
                await act(servers, name)
                if connects:
                    await servers.wait_started(MCP_CONNECT_TIMEOUT_S)
            except Exception as exc:  # said to the app: the request failed
                self.wire.refuse(request_id, f"{body.get('subtype')} {name}: {exc}")
                return
            status = next((s for s in servers.status() if s.name == name), None)
            if connects and status is not None and status.state in (
                    ServerState.FAILED, ServerState.NEEDS_LOGIN):
                self.wire.refuse(request_id, f"Failed to connect to {name}: "
                                 f"{status.error or status.state}")
            else:
                self.wire.answer(request_id)

        task = asyncio.get_running_loop().create_task(run())
        self._working.add(task)
        task.add_done_callback(self._working.discard)

    def _rewind(self, request_id: str, body: dict[str, Any]) -> None:
        turn = self.turns.get(str(body.get("user_message_id")))
        if turn is None:
            self.wire.refuse(request_id, "No file checkpoint found for this message.")
            return
        if self.session.busy:
            self.wire.refuse(request_id, "a turn is running: interrupt it before rewinding")
            return
        if any(a.answered_by in _REWINDS for a in self._asks):  # its notice would be ambiguous
            self.wire.refuse(request_id, "a rewind is already running")
            return
        if body.get("dry_run"):
            self._asks.append(_Ask(request_id, RewindPlanned))
            self.session.submit(PlanRewind(checkpoint_id=turn))
        else:
            self._asks.append(_Ask(request_id, Rewound))
            self.session.submit(Rewind(checkpoint_id=turn, restore=RestoreWhat.CODE))

    def _stop(self, request_id: str, task_id: str) -> None:
        job = self.tasks.get(task_id)
        if job is not None and job.state is BackgroundState.RUNNING:
            self.session.submit(StopBackground(id=task_id))
        self.wire.answer(request_id)  # an unknown or ended one too, as Claude Code does

    # -- the session's Events -------------------------------------------------------------

    def see(self, event: Event) -> list[dict[str, Any]]:
        """Answer what waits for ``event``; the messages it makes for the app."""
        if isinstance(event, Usage) and event.parent_tool_use_id is None:
            if event.purpose is RequestPurpose.TURN:
                self.last_usage = event
        elif isinstance(event, ContextReport):
            self._answer(ContextReport, lambda: context_usage(event, self.session,
                                                              self.last_usage))
        elif isinstance(event, RewindPlanned):
            self._answer(RewindPlanned, lambda: self._changes(event.changes))
        elif isinstance(event, Rewound):
            self._answer(Rewound, lambda: self._rewound(event))
        elif isinstance(event, Notice) and event.level is not NoticeLevel.INFO:
            self._refuse_rewinds(event.text)
        elif isinstance(event, BackgroundJobChanged):
            return self._task(event)
        return []

    def _answer(self, kind: type[Any], response: Callable[[], dict[str, Any]]) -> None:
        ask = next((a for a in self._asks if a.answered_by is kind), None)
        if ask is not None:
            self._asks.remove(ask)
            self.wire.answer(ask.request_id, response())

    def _refuse_rewinds(self, why: str) -> None:
        """A rewind that could not be done is said in a notice (the only answer)."""
        for ask in [a for a in self._asks if a.answered_by in _REWINDS]:
            self._asks.remove(ask)
            self.wire.refuse(ask.request_id, why)

    def _changes(self, changes: list[FileChangeInfo]) -> dict[str, Any]:
        """Files by their absolute paths, as Claude Code names them."""
        return {"canRewind": True,
                "filesChanged": [str(self.session.workspace / c.path) for c in changes],
                "insertions": sum(c.lines_added or 0 for c in changes),
                "deletions": sum(c.lines_removed or 0 for c in changes)}

    def _rewound(self, done: Rewound) -> dict[str, Any]:
        answer = self._changes(done.restored)
        problems = [*done.errors, *(f"{c.path}: changed since, not restored"
                                    for c in done.skipped_conflicts)]
        if problems:
            answer["error"] = "; ".join(problems)
            answer["canRewind"] = not done.errors
        return answer

    def _task(self, job: BackgroundJobChanged) -> list[dict[str, Any]]:
        """A background job's life as Claude Code's task messages."""
        known = job.id in self.tasks
        self.tasks[job.id] = job
        common = {"type": "system", "task_id": job.id, "session_id": self.session.session_id,
                  "uuid": str(uuid.uuid4())}
        if job.state is BackgroundState.RUNNING:
            if known:
                return []
            return [{**common, "subtype": "task_started", "tool_use_id": job.tool_use_id,
                     "description": job.description, "is_backgrounded": True,
                     "task_type": _TASK_TYPE[job.kind]}]
        return [
            {**common, "subtype": "task_updated", "patch": {"status": _UPDATED[job.state]}},
            {**common, "subtype": "task_notification", "status": _NOTIFIED[job.state],
             "output_file": "", "summary": job.detail or job.description,
             "tool_use_id": job.tool_use_id, "uuid": str(uuid.uuid4())},
        ]


def _config(status: ServerStatus) -> dict[str, Any]:
    """How a server is reached, in its config's words: no env, no headers (secrets)."""
    match status.transport:
        case Transport.STDIO:
            return {"type": "stdio", "command": status.command or "", "args": status.args}
        case Transport.HTTP | Transport.SSE:
            return {"type": str(status.transport), "url": _shown_url(status.url or "")}
        case Transport.SDK:
            return {"type": "sdk", "name": status.name}
        case _:
            assert_never(status.transport)


def _shown_url(url: str) -> str:
    """A server's URL without what may be a secret: a user and password, a query."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _server(status: ServerStatus) -> dict[str, Any]:
    shown: dict[str, Any] = {"name": status.name, "status": _MCP_STATUS[status.state],
                             "transport": str(status.transport), "source": status.source}
    if status.transport is Transport.SDK:  # the app's own, as Claude Code names them
        shown.update(source="sdk", scope="dynamic")
    if status.server_info is not None:
        shown["serverInfo"] = {"name": status.server_info[0], "version": status.server_info[1]}
    shown["config"] = _config(status)
    if status.error:
        shown["error"] = status.error
    if status.state is ServerState.READY:
        shown["tools"] = [{"name": name, "annotations": {}} for name in status.tools]
    return shown


