"""One connection to one MCP server, owned by one long-lived task.

anyio-based clients must be entered and exited in the same task, so each server's
transport and ``ClientSession`` live inside one task (``_serve``), and the rest of the
app talks to it through a queue (calls in) and futures (answers out). A tool call
that the core cancels never tears the session down: it asks the server task to
cancel *that request* and later, if the server stays silent, to stop waiting for it.

**Request ids.** We choose each ``tools/call`` request's id ourselves (a string,
``agent-tui-N``, unique for the session), so that our own ``notifications/cancelled``
names the right request, and we turn off the SDK's automatic cancel notice for it
(``cancel_on_abandon``): abandoning a request must not remove its waiter before we
have given the server a chance to answer.

**Cancel protocol** (see :mod:`agent_tui.tools.mcp.tool` for what the model is told):

1. ``RemoteCall.request_cancel(reason)``: the server task sends
   ``notifications/cancelled {requestId, reason}`` and keeps waiting for the answer.
2. Any answer that still arrives is the fact: a result (the call finished first), or
   an error (the server confirms it stopped: the SDK's HTTP transport answers a
   cancelled request with ``-32800 Request cancelled``).
3. ``RemoteCall.abandon()``: stop waiting; a late answer is dropped by the SDK.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from pydantic import BaseModel, Field, ValidationError

from agent_tui.cancel import CancelScope
from agent_tui.tools.mcp import procs
from agent_tui.tools.mcp.config import ServerConfig, Transport

CLIENT_INFO = types.Implementation(name="agent-tui", version="0.1")
#: A server whose connection is lost after it was ready is restarted at the next
#: call, at most this many times per session. One that never started is not retried.
MAX_RESTARTS = 2
_LIST_PAGES = 50
_NOTIFY_WRITE_S = 1.0
_STDERR_TAIL_LINES = 4
_LOG_MARK = "--- agent-tui: starting "


class ServerState(StrEnum):
    NOT_STARTED = "not_started"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"


class ServerStatus(BaseModel):
    """What the UI shows for one server."""

    name: str
    transport: Transport
    source: str  # the config file it came from
    target: str  # the command line or URL
    state: ServerState
    error: str | None = None
    tools: list[str] = Field(default_factory=list)
    pid: int | None = None
    restarts: int = 0
    log: str | None = None  # where the server's stderr goes (stdio)


class ServerUnavailable(Exception):
    """The server is not running and will not be started for this call."""


class AnswerKind(StrEnum):
    RESULT = "result"  # a CallToolResult (is_error or not)
    ERROR = "error"  # a JSON-RPC error answer
    CLOSED = "closed"  # the connection ended before an answer
    MALFORMED = "malformed"  # an answer we could not read as a CallToolResult
    NOT_SENT = "not_sent"  # cancelled before the request was written
    ABANDONED = "abandoned"  # we stopped waiting


@dataclass
class Answer:
    kind: AnswerKind
    result: types.CallToolResult | None = None
    code: int | None = None
    message: str = ""


_CURRENT_CALL: ContextVar[RemoteCall | None] = ContextVar("agent_tui_mcp_call", default=None)


class RemoteCall:
    """One ``tools/call`` in flight; settled exactly once with an :class:`Answer`."""

    def __init__(
        self,
        tool: str,
        arguments: dict[str, Any],
        meta: dict[str, Any],
        wire_id: str,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        self.tool = tool
        self.arguments = arguments
        self.meta = meta
        self.wire_id = wire_id
        self.on_progress = on_progress
        self.request_id: str | None = None  # set once the request's write has started
        self.cancel_reason: str | None = None
        self.cancel_notified = False
        self.answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._cancel_wanted = asyncio.Event()
        self._abandon_wanted = asyncio.Event()

    @property
    def sent(self) -> bool:
        return self.request_id is not None

    def request_cancel(self, reason: str) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
        self._cancel_wanted.set()

    def abandon(self) -> None:
        self._abandon_wanted.set()
        self._cancel_wanted.set()

    def settle(self, answer: Answer) -> None:
        if not self.answer.done():
            self.answer.set_result(answer)


class _CallDispatcher(JSONRPCDispatcher):
    """The SDK's dispatcher, plus: our own ids for tool calls, and a 'closed' event."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.closed = asyncio.Event()

    async def send_raw_request(self, method: str, params: Any, opts: Any = None, **kw: Any) -> Any:
        call = _CURRENT_CALL.get()
        if call is not None and method == "tools/call" and call.request_id is None:
            opts = dict(opts or {})
            opts["request_id"] = call.wire_id
            opts["cancel_on_abandon"] = False  # we send the notice ourselves, and keep waiting
            call.request_id = call.wire_id
        return await super().send_raw_request(method, params, opts, **kw)

    async def run(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().run(*args, **kwargs)
        finally:
            self.closed.set()


_STOP = object()


class McpConnection:
    """A server's lifecycle (start, ready, failed, stopped) and its calls."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        workspace: Path,
        start_timeout_s: float,
        log_dir: Path | None,
        on_change: Callable[[McpConnection], None] = lambda _c: None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.workspace = workspace
        self.start_timeout_s = start_timeout_s
        self.log_path = (log_dir / f"{config.name}.log") if log_dir is not None else None
        self.state = ServerState.NOT_STARTED
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.pid: int | None = None
        self.restarts = 0
        self.tag = uuid.uuid4().hex
        self._on_change = on_change
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
            pid=self.pid,
            restarts=self.restarts,
            log=str(self.log_path) if self.log_path and self._is_stdio else None,
        )

    @property
    def _is_stdio(self) -> bool:
        return self.config.transport is Transport.STDIO

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

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
        if self.state is not ServerState.READY:
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
        self, tool: str, arguments: dict[str, Any], meta: dict[str, Any],
        on_progress: Callable[[str], None] | None = None,
    ) -> RemoteCall:
        call = RemoteCall(tool, arguments, meta, f"agent-tui-{next(self._ids)}", on_progress)
        if self.state is not ServerState.READY or self._inbox is None:
            call.settle(Answer(AnswerKind.CLOSED, message=f"server is {self.state}"))
        else:
            self._inbox.put_nowait(call)
        return call

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr since its latest start."""
        if self.log_path is None or self.config.transport is not Transport.STDIO:
            return ""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                fh.seek(max(0, size - 8192))
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        text = text.rsplit(_LOG_MARK, 1)[-1]
        lines = [ln.rstrip() for ln in text.splitlines()[1:] if ln.strip()]
        return " | ".join(lines[-_STDERR_TAIL_LINES:])

    def _set_state(self, state: ServerState, error: str | None) -> None:
        self.state = state
        self.error = error
        try:
            self._on_change(self)
        except Exception:
            pass  # a UI callback must not break the connection

    def _fail(self, error: str) -> None:
        tail = self.stderr_tail()
        if tail and tail not in error:
            error = f"{error}; stderr: {tail}"
        self._set_state(ServerState.FAILED, error)
        if self._started is not None and not self._started.done():
            self._started.set_result(error)

    # -- the server task --------------------------------------------------------

    async def _serve(self, inbox: asyncio.Queue[Any], started: asyncio.Future[str | None]) -> None:
        loop = asyncio.get_running_loop()
        errlog = self._open_log()
        error: str | None = None
        lost = False
        timer: asyncio.TimerHandle | None = None
        try:
            with anyio.CancelScope() as life:
                self._life = life
                timer = loop.call_later(self.start_timeout_s, self._start_timed_out, started)
                async with AsyncExitStack() as stack:
                    session, dispatcher = await self._connect(stack, errlog)
                    await session.initialize()
                    tools = await _list_tools(session)
                    timer.cancel()
                    if self.config.transport is Transport.STDIO:
                        found = procs.find_tagged(self.tag, children_only=True)
                        self.pid = found[0].pid if found else None
                    self.tools = tools
                    self._was_ready = True
                    self._set_state(ServerState.READY, None)
                    if not started.done():
                        started.set_result(None)
                    lost = await self._run_calls(session, dispatcher, inbox)
        except Exception as exc:  # noqa: BLE001 - every failure becomes the server's error
            error = _describe(exc, self.config)
        finally:
            if timer is not None:
                timer.cancel()
            self._life = None
            while not inbox.empty():
                item = inbox.get_nowait()
                if isinstance(item, RemoteCall):
                    item.settle(Answer(AnswerKind.CLOSED, message="the server stopped"))
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

    def _start_timed_out(self, started: asyncio.Future[str | None]) -> None:
        if self.state is ServerState.STARTING and not started.done():
            self._fail(f"did not start within {self.start_timeout_s:g} s")
            if self._life is not None:
                self._life.cancel()

    async def _connect(
        self, stack: AsyncExitStack, errlog: TextIO | None
    ) -> tuple[ClientSession, _CallDispatcher]:
        cfg = self.config
        if cfg.transport is Transport.STDIO:
            assert cfg.command is not None
            params = StdioServerParameters(
                command=cfg.command,
                args=cfg.args,
                env={**cfg.env, **procs.tag_env(self.tag)},
                cwd=cfg.cwd or str(self.workspace),
            )
            procs.remember(self.tag)
            if errlog is not None:
                read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            else:
                read, write = await stack.enter_async_context(stdio_client(params))
        else:
            assert cfg.url is not None
            http = await stack.enter_async_context(
                create_mcp_http_client(headers=cfg.headers or None)
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(cfg.url, http_client=http)
            )
        dispatcher = _CallDispatcher(read, write)
        session = ClientSession(dispatcher=dispatcher, client_info=CLIENT_INFO)
        await stack.enter_async_context(session)
        return session, dispatcher

    async def _run_calls(
        self, session: ClientSession, dispatcher: _CallDispatcher, inbox: asyncio.Queue[Any]
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
                    calls.start_soon(self._run_call, session, item)
            if dispatcher.closed.is_set():
                # Lost: in-flight calls are answered CONNECTION_CLOSED by the SDK; give
                # them a moment to take that answer, then end.
                calls.cancel_scope.deadline = anyio.current_time() + 1.0
                return True
            calls.cancel_scope.cancel()  # stopping: abandon whatever is in flight
        return False

    async def _run_call(self, session: ClientSession, call: RemoteCall) -> None:
        _CURRENT_CALL.set(call)
        try:
            async with anyio.create_task_group() as tg:

                async def request() -> None:
                    try:
                        result = await session.call_tool(
                            call.tool, call.arguments, meta=call.meta,  # type: ignore[arg-type]
                            progress_callback=_progress_sink(call.on_progress),
                        )
                        call.settle(Answer(AnswerKind.RESULT, result=result))
                    except MCPError as exc:
                        closed = exc.code == types.CONNECTION_CLOSED
                        kind = AnswerKind.CLOSED if closed else AnswerKind.ERROR
                        call.settle(Answer(kind, code=exc.code, message=exc.message))
                    except (ValidationError, RuntimeError, ValueError, TypeError) as exc:
                        call.settle(Answer(AnswerKind.MALFORMED, message=_short(exc)))
                    finally:
                        tg.cancel_scope.cancel()

                tg.start_soon(request)
                await call._cancel_wanted.wait()
                if not call.sent:
                    call.settle(Answer(AnswerKind.NOT_SENT))
                    tg.cancel_scope.cancel()
                    return
                if not call._abandon_wanted.is_set():
                    with anyio.move_on_after(_NOTIFY_WRITE_S):
                        await session.send_notification(types.CancelledNotification(
                            params=types.CancelledNotificationParams(
                                request_id=call.request_id, reason=call.cancel_reason or "cancelled"
                            )
                        ))
                        call.cancel_notified = True
                await call._abandon_wanted.wait()
                tg.cancel_scope.cancel()
        finally:
            call.settle(Answer(AnswerKind.ABANDONED))

    def _open_log(self) -> TextIO | None:
        if self.log_path is None or self.config.transport is not Transport.STDIO:
            return None
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fh = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed by _serve
            fh.write(f"\n{_LOG_MARK}{self.config.describe()}\n")
            fh.flush()
            return fh
        except OSError:
            return None


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


ProgressSink = Callable[[float, float | None, str | None], Awaitable[None]]


def _progress_sink(emit: Callable[[str], None] | None) -> ProgressSink | None:
    if emit is None:
        return None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        emit(f"[progress {amount}] {message}\n" if message else f"[progress {amount}]\n")

    return on_progress


def _short(exc: BaseException, limit: int = 300) -> str:
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'result'}: {err['msg']}"
            for err in exc.errors()[:3]
        )
        text = f"invalid {exc.title}: {problems}"
    else:
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException, config: ServerConfig) -> str:
    exc = _leaf(exc)
    if isinstance(exc, FileNotFoundError):
        return f"cannot start {config.command!r}: command not found"
    if isinstance(exc, PermissionError):
        return f"cannot start {config.command!r}: permission denied"
    if isinstance(exc, MCPError):
        if exc.code == types.CONNECTION_CLOSED:
            return "the server closed the connection during startup"
        return f"startup failed: error {exc.code}: {exc.message}"
    if config.transport is Transport.HTTP:
        return f"cannot use {config.url}: {_short(exc)}"
    return f"startup failed: {_short(exc)}"


__all__ = [
    "MAX_RESTARTS",
    "Answer",
    "AnswerKind",
    "McpConnection",
    "RemoteCall",
    "ServerState",
    "ServerStatus",
    "ServerUnavailable",
]
