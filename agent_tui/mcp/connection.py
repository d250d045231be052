"""One connection to one MCP server, owned by one long-lived task.

anyio-based clients must be entered and exited in the same task, so each server's
transport and ``ClientSession`` live inside one task (``_serve``), and the rest of the
app talks to it through a queue (calls in) and futures (answers out). A tool call
that the core cancels never tears the session down: it asks the server task to
cancel *that request* (:mod:`.call`) and later, if the server stays silent, to stop
waiting for it.

Tools the client can never call are left out of ``tools`` and kept in ``left_out``
with the reason: a tool whose ``execution.taskSupport`` is ``required`` on a server that
does not take tool calls as MCP tasks (``tasks_calls``: it declares
``tasks.requests.tools.call`` on protocol 2025-11-25) answers every plain call with -32601.

A server that sends ``notifications/tools/list_changed`` is listed again (in the
server task); ``on_tools`` then hands the new list to the manager, which applies it
at a turn boundary. Its resources and prompts (:mod:`.catalog`) are listed when it is
ready and again on their own list_changed notifications; ``on_catalog`` is told.
Reading a resource or getting a prompt is a request run in the server task
(:meth:`McpConnection.ask`), like a call.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage

from agent_tui.cancel import CancelScope
from agent_tui.mcp import catalog, elicit, procs
from agent_tui.mcp.call import (
    TASK_TTL_MS, Answer, AnswerKind, CallDispatcher, RemoteCall, TaskBoard, serve_call, tasks_offered,
)
from agent_tui.settings.mcp_servers import ServerConfig, Transport
from agent_tui.mcp_catalog.elicitation import Elicitor, decline
from agent_tui.mcp_catalog.errors import short
from agent_tui.mcp.errors import ServerUnavailable, describe_startup
from agent_tui.mcp_catalog.status import ServerState, ServerStatus
from agent_tui.mcp.transports import StderrLog, connect

#: A server whose connection is lost after it was ready is restarted at the next
#: call, at most this many times per session. One that never started is not retried.
MAX_RESTARTS = 2
_LIST_PAGES = 50
#: When a start ends: how long what is left of it gets between SIGTERM and SIGKILL.
END_GRACE_S = 0.5
NEEDS_TASKS = ("needs MCP tasks (taskSupport: required), which the server does not offer "
               "(no tasks.requests.tools.call capability on protocol 2025-11-25)")


_STOP = object()


class _Ask:
    """A request other than a tool call (read a resource, get a prompt), for the server task."""

    def __init__(self, fn: Callable[[ClientSession], Awaitable[Any]]) -> None:
        self.fn = fn
        self.answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def run(self, session: ClientSession) -> None:
        try:
            result = await self.fn(session)
        except Exception as exc:  # noqa: BLE001 - the asker words it
            if not self.answer.done():
                self.answer.set_exception(exc)
            return
        if not self.answer.done():
            self.answer.set_result(result)


class McpConnection:
    """A server's lifecycle (start, ready, failed, stopped) and its calls."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        workspace: Path,
        start_timeout_s: float,
        log_dir: Path | None,
        auth_dir: Path | None = None,
        on_change: Callable[[McpConnection], None] = lambda _c: None,
        on_tools: Callable[[McpConnection], None] = lambda _c: None,
        on_catalog: Callable[[McpConnection], None] = lambda _c: None,
        elicitor: Callable[[], Elicitor] = lambda: decline,
    ) -> None:
        self.config = config
        self.name = config.name
        self.workspace = workspace
        self.start_timeout_s = start_timeout_s
        self.log = StderrLog(config, log_dir)
        self.auth_dir = auth_dir
        self._login_needed = False
        self.state = ServerState.NOT_STARTED
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.left_out: dict[str, str] = {}
        self.task_calls = False  # the server takes tools/call as MCP tasks
        self.resources: list[types.Resource] = []
        self.prompts: list[types.Prompt] = []
        self.pid: int | None = None
        self.restarts = 0
        self.server_info: tuple[str, str] | None = None  # initialize's serverInfo
        self.tag = uuid.uuid4().hex
        self._on_change = on_change
        self._on_tools = on_tools
        self._on_catalog = on_catalog
        self._elicitor = elicitor
        self._ids = itertools.count(1)
        self._task: asyncio.Task[None] | None = None
        self._inbox: asyncio.Queue[Any] | None = None
        self._started: asyncio.Future[str | None] | None = None
        self._life: anyio.CancelScope | None = None
        self._was_ready = False
        self._stopping = False

    # -- lifecycle ------------------------------------------------------------

    def status(self) -> ServerStatus:
        return ServerStatus(
            name=self.name,
            transport=self.config.transport,
            source=str(self.config.source),
            target=self.config.describe(),
            state=self.state,
            error=self.error,
            tools=[t.name for t in self.tools],
            resources=len(self.resources),
            prompts=len(self.prompts),
            left_out=dict(self.left_out),
            pid=self.pid,
            restarts=self.restarts,
            log=str(self.log.path) if self.log.path else None,
            server_info=self.server_info, command=self.config.command,
            args=list(self.config.args), url=self.config.url,
        )

    @property
    def ready(self) -> bool:
        return self.state is ServerState.READY

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    @property
    def started(self) -> asyncio.Future[str | None] | None:
        """Settles when the latest start ended (None: ready; else the error)."""
        return self._started

    def disable(self) -> None:
        """Never started (the user turned it off); call before :meth:`start`."""
        self._stopping = True
        self._set_state(ServerState.DISABLED, "disabled: /mcp enables it")

    def start(self) -> None:
        """Start the server in the background (on the running loop); idempotent."""
        if self._stopping or (self._task is not None and not self._task.done()):
            return
        loop = asyncio.get_running_loop()
        self._inbox = asyncio.Queue()
        self._started = loop.create_future()
        self.pid = None
        self._set_state(ServerState.STARTING, None)
        self._task = loop.create_task(
            self._serve(self._inbox, self._started), name=f"mcp:{self.name}"
        )

    async def wait_ready(self, scope: CancelScope) -> None:
        """Return once the server is ready; raise ServerUnavailable or Cancelled."""
        if self.state is ServerState.READY:
            return
        if self._stopping:
            raise ServerUnavailable("the app is shutting down")
        if self.state in (ServerState.NEEDS_LOGIN, ServerState.DISABLED):
            raise ServerUnavailable(self.error or f"server is {self.state}")
        if self.state is ServerState.NOT_STARTED:
            self.start()
        elif self.state is ServerState.FAILED:
            if not self._was_ready or self.restarts >= MAX_RESTARTS:
                raise ServerUnavailable(self.error or "failed")
            if self._task is None or self._task.done():
                self.restarts += 1
                self.start()
        started = self._started
        assert started is not None
        error = await scope.guard(asyncio.shield(started))
        if not self.ready:  # the state changed while we waited
            raise ServerUnavailable(error or self.error or f"server is {self.state}")

    def stop(self) -> None:
        """Ask the server task to end (it closes the session and ends the process)."""
        self._stopping = True
        if self._inbox is not None:
            self._inbox.put_nowait(_STOP)
        if self.state is ServerState.STARTING and self._life is not None:
            self._life.cancel()

    def force_stop(self) -> None:
        if self._life is not None:
            self._life.cancel()

    def submit(
        self, tool: str, arguments: dict[str, Any], meta: types.RequestParamsMeta,
        on_progress: Callable[[str], None] | None = None, *, as_task: bool = False,
    ) -> RemoteCall:
        call = RemoteCall(tool, arguments, meta, f"agent-tui-{next(self._ids)}", on_progress,
                          as_task=as_task and self.task_calls, task_ttl_ms=self.config.task_ttl_ms or TASK_TTL_MS)
        if self.state is not ServerState.READY or self._inbox is None:
            call.settle(Answer(AnswerKind.CLOSED, message=f"server is {self.state}"))
        else:
            self._inbox.put_nowait(call)
        return call

    async def ask(self, fn: Callable[[ClientSession], Awaitable[Any]], timeout: float) -> Any:
        """Run ``fn(session)`` in the server task; raise ServerUnavailable, TimeoutError
        or what the server answered."""
        if self.state is not ServerState.READY or self._inbox is None:
            raise ServerUnavailable(f"server is {self.state}")
        item = _Ask(fn)
        self._inbox.put_nowait(item)
        return await asyncio.wait_for(item.answer, timeout)

    @property
    def login_needed(self) -> bool:
        """The server refused a request until the user logs in (again)."""
        return self._login_needed

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr since its latest start."""
        return self.log.tail()

    def _set_state(self, state: ServerState, error: str | None) -> None:
        self.state = state
        self.error = error
        try:
            self._on_change(self)
        except Exception:
            pass  # a UI callback must not break the connection

    def _fail(self, error: str) -> None:
        if self._login_needed:
            if self.state is not ServerState.NEEDS_LOGIN:  # set already when a call asked for more
                self._set_state(ServerState.NEEDS_LOGIN, f"needs a login: /mcp, or agent-tui mcp login {self.name}")
            if self._started is not None and not self._started.done():
                self._started.set_result(self.error)
            return
        tail = self.stderr_tail()
        if tail and tail not in error:
            error = f"{error}; stderr: {tail}"
        self._set_state(ServerState.FAILED, error)
        if self._started is not None and not self._started.done():
            self._started.set_result(error)

    def _take_tools(self, listed: list[types.Tool]) -> None:
        usable, left_out = [], {}
        for spec in listed:
            if not self.task_calls and spec.execution is not None and spec.execution.task_support == "required":
                left_out[spec.name] = NEEDS_TASKS
            else:
                usable.append(spec)
        self.tools, self.left_out = usable, left_out

    # -- the server task --------------------------------------------------------

    async def _serve(self, inbox: asyncio.Queue[Any], started: asyncio.Future[str | None]) -> None:
        loop = asyncio.get_running_loop()
        errlog = self.log.open()
        error: str | None = None
        lost = False
        timer: asyncio.TimerHandle | None = None
        board = TaskBoard()

        async def on_message(message: IncomingMessage) -> None:
            # By method, not class: each protocol version has its own notification models.
            offer = catalog.CHANGED.get(getattr(message, "method", None) or "")
            if offer is not None:
                inbox.put_nowait(offer)

        try:
            with anyio.CancelScope() as life:
                self._life = life
                timer = loop.call_later(self.start_timeout_s, self._start_timed_out, started)
                async with AsyncExitStack() as stack:
                    session, dispatcher = await connect(
                        stack, self.config, workspace=self.workspace, tag=self.tag,
                        errlog=errlog, on_message=on_message, auth=self._auth(),
                        on_elicit=elicit.callback(self.name, self._elicitor), bindings=[board.binding()],
                    )
                    info = (await session.initialize()).server_info
                    self.task_calls = tasks_offered(session)
                    self.server_info = (info.name, info.version)
                    self._take_tools(await _list_tools(session))
                    await self._list_catalog(session, catalog.Offer.RESOURCES, catalog.Offer.PROMPTS)
                    timer.cancel()
                    if self.config.transport is Transport.STDIO:
                        found = procs.find_tagged(self.tag, children_only=True)
                        self.pid = found[0].pid if found else None
                    self._was_ready = True
                    self._set_state(ServerState.READY, None)
                    if not started.done():
                        started.set_result(None)
                    lost = await self._run_calls(session, dispatcher, inbox, board)
        except Exception as exc:  # noqa: BLE001 - every failure becomes the server's error
            error = describe_startup(exc, self.config)
        finally:
            if timer is not None:
                timer.cancel()
            self._life = None
            try:
                await self._end_processes()
            finally:
                self._settle(inbox, started, errlog, error=error, lost=lost)

    async def _end_processes(self) -> None:
        """This start is over: end what is left of it (children that outlived the
        server, the server if the SDK could not end it) and remove its cgroup, before
        the next start can begin. Off the loop: it scans and waits."""
        if self.config.transport is Transport.STDIO:
            await asyncio.to_thread(procs.end_tagged, [self.tag], END_GRACE_S)

    def _settle(
        self, inbox: asyncio.Queue[Any], started: asyncio.Future[str | None],
        errlog: TextIO | None, *, error: str | None, lost: bool,
    ) -> None:
        """The server task's end: calls still queued are answered, the state is set."""
        while not inbox.empty():
            item = inbox.get_nowait()
            if isinstance(item, RemoteCall):
                item.settle(Answer(AnswerKind.CLOSED, message="the server stopped"))
            elif isinstance(item, _Ask) and not item.answer.done():
                item.answer.set_exception(ServerUnavailable("the server stopped"))
        if errlog is not None:
            errlog.close()
        if self._stopping:
            self._set_state(ServerState.STOPPED, None)
            if not started.done():
                started.set_result("the app is shutting down")
        elif self.state is ServerState.FAILED:
            pass  # already failed (start timeout); keep that error
        elif lost:
            self._fail("the server closed the connection (it may have exited)")
        else:
            self._fail(error or "the server stopped")

    def _auth(self) -> Any:
        """The OAuth provider of an HTTP server (None for stdio, or without a folder)."""
        from agent_tui.mcp import oauth

        self._login_needed = False
        if self.auth_dir is None or not oauth.uses_oauth(self.config):
            return None

        def needed(scope: str | None) -> None:
            self._login_needed = True
            if self.state is ServerState.READY:  # a call was refused for want of scope (step-up)
                more = f" (the server asks for {scope})" if scope else ""
                self._set_state(ServerState.NEEDS_LOGIN,
                                f"needs a new login{more}: /mcp, or agent-tui mcp login {self.name}")

        return oauth.background_provider(self.config, self.auth_dir, needed)

    def _start_timed_out(self, started: asyncio.Future[str | None]) -> None:
        if self.state is ServerState.STARTING and not started.done():
            self._fail(f"did not start within {self.start_timeout_s:g} s")
            if self._life is not None:
                self._life.cancel()

    async def _run_calls(
        self, session: ClientSession, dispatcher: CallDispatcher, inbox: asyncio.Queue[Any],
        board: TaskBoard,
    ) -> bool:
        """Serve calls until asked to stop (False) or the connection is lost (True)."""
        async with anyio.create_task_group() as calls:
            with anyio.CancelScope() as intake:

                async def watch() -> None:
                    await dispatcher.closed.wait()
                    intake.cancel()

                calls.start_soon(watch)
                while True:
                    item = await inbox.get()
                    if item is _STOP:
                        break
                    if item is catalog.Offer.TOOLS:
                        calls.start_soon(self._refresh_tools, session)
                    elif isinstance(item, catalog.Offer):
                        calls.start_soon(self._refresh_catalog, session, item)
                    elif isinstance(item, _Ask):
                        calls.start_soon(item.run, session)
                    else:
                        calls.start_soon(serve_call, session, item, dispatcher, board)
            if dispatcher.closed.is_set():
                # Lost: in-flight calls are answered CONNECTION_CLOSED by the SDK; give
                # them a moment to take that answer, then end.
                calls.cancel_scope.deadline = anyio.current_time() + 1.0
                return True
            calls.cancel_scope.cancel()  # stopping: abandon whatever is in flight
        return False

    async def _refresh_tools(self, session: ClientSession) -> None:
        try:
            listed = await _list_tools(session)
        except Exception as exc:  # noqa: BLE001 - keep the old list, and say why
            self.error = f"could not list the changed tools: {short(exc)}"
            return
        self._take_tools(listed)
        try:
            self._on_tools(self)
        except Exception:
            pass  # the manager's callback must not break the connection


    async def _list_catalog(self, session: ClientSession, *offers: catalog.Offer) -> None:
        """List resources and/or prompts; a server that fails to list them keeps none
        (or its last list) and says why in its error, but stays usable for tools."""
        for offer in offers:
            try:
                if offer is catalog.Offer.RESOURCES:
                    self.resources = await catalog.list_resources(session)
                else:
                    self.prompts = await catalog.list_prompts(session)
            except Exception as exc:  # noqa: BLE001 - tools still work
                self.error = f"could not list its {offer}: {short(exc)}"

    async def _refresh_catalog(self, session: ClientSession, offer: catalog.Offer) -> None:
        await self._list_catalog(session, offer)
        try:
            self._on_catalog(self)
        except Exception:
            pass  # the manager's callback must not break the connection


async def _list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGES):
        if cursor is None:
            page = await session.list_tools()
        else:
            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


__all__ = [
    "MAX_RESTARTS",
    "NEEDS_TASKS",
    "McpConnection",
    "ServerState",
    "ServerStatus",
]
