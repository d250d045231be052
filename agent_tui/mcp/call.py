"""One ``tools/call`` in flight, and the protocol that settles it exactly once.

**Request ids.** We choose each ``tools/call`` request's id ourselves (a string,
``agent-tui-N``, unique for the session), so that our own ``notifications/cancelled``
names the right request, and we turn off the SDK's automatic cancel notice for it
(``cancel_on_abandon``): abandoning a request must not remove its waiter before we
have given the server a chance to answer.

**Cancel protocol** (see :mod:`agent_tui.mcp.tool` for what the model is told):

1. ``RemoteCall.request_cancel(reason)``: the server task sends
   ``notifications/cancelled {requestId, reason}`` and keeps waiting for the answer.
2. Any answer that still arrives is the fact: a result (the call finished first), or
   an error (the server confirms it stopped: the SDK's HTTP transport answers a
   cancelled request with ``-32800 Request cancelled``).
3. ``RemoteCall.abandon()``: stop waiting; a late answer is dropped by the SDK.

**MCP tasks** (protocol 2025-11-25, a call with ``as_task``): the ``tools/call`` carries
``task: {ttl}`` and is answered at once with a ``CreateTaskResult``; we then poll
``tasks/get`` at the server's ``pollInterval`` (woken early by
``notifications/tasks/status``), and at a terminal status (or ``input_required``, where
the server's questions come on the ``tasks/result`` stream) take ``tasks/result``: the
answer the plain call would have had. A cancel before the task exists is the plain
notice above; once it exists, ``tasks/cancel``: a ``cancelled`` answer is the server's
confirmation, an ``Invalid params`` answer means it had already ended (its result is
then the fact), and silence is silence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.client.extension import NotificationBinding
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from pydantic import ValidationError

from agent_tui.mcp_catalog.errors import short
from agent_tui.settings.mcp_servers import TASK_TTL_DEFAULT_MS

_NOTIFY_WRITE_S = 1.0
#: The protocol version that has tasks (2026-07-28 moved them out to an extension).
TASKS_VERSION = "2025-11-25"
#: How long a task is kept on the server after its creation by default (asked; it may
#: choose); a server's ``"taskTtl"`` setting changes it.
TASK_TTL_MS = TASK_TTL_DEFAULT_MS
#: Polling when the server names no interval, and the bounds a named one is held to
#: (a hostile 0 must not spin us, a huge one must not stall a finished call).
POLL_DEFAULT_S = 1.0
POLL_MIN_S = 0.05
POLL_MAX_S = 10.0
#: One tasks/get or tasks/cancel round trip may take this long.
TASK_REQUEST_S = 30.0
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_INVALID_PARAMS = -32602


class AnswerKind(StrEnum):
    RESULT = "result"  # a CallToolResult (is_error or not)
    ERROR = "error"  # a JSON-RPC error answer
    CLOSED = "closed"  # the connection ended before an answer
    MALFORMED = "malformed"  # an answer we could not read as a CallToolResult
    NOT_SENT = "not_sent"  # cancelled before the request was written
    ABANDONED = "abandoned"  # we stopped waiting
    TASK_CANCELLED = "task_cancelled"  # the server confirmed our tasks/cancel
    TASK_LOST = "task_lost"  # a task was created, then we could not follow it


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
        meta: types.RequestParamsMeta,
        wire_id: str,
        on_progress: Callable[[str], None] | None = None,
        *,
        as_task: bool = False,
        task_ttl_ms: int = TASK_TTL_MS,
    ) -> None:
        self.tool = tool
        self.arguments = arguments
        self.meta = meta
        self.wire_id = wire_id
        self.on_progress = on_progress
        self.request_id: str | None = None  # set once the request's write has started
        self.cancel_reason: str | None = None
        self.cancel_notified = False
        self.as_task = as_task
        self.task_ttl_ms = task_ttl_ms
        self.task_id: str | None = None  # once the server created the task
        self.task: types.Task | None = None  # its latest known state
        self._task_cancel_sent = False
        self._wake = asyncio.Event()  # a status notification arrived, or a cancel was refused
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

    def observe(self, task: types.Task) -> None:
        """A newer state of our task (a ``tasks/get`` answer or a status notification)."""
        known = self.task
        if known is not None and known.status in _TERMINAL:
            return  # terminal is final (the spec forbids leaving it)
        if known is None or (task.status, task.status_message) != (known.status, known.status_message):
            if self.on_progress is not None:
                said = f": {_printable(task.status_message)}" if task.status_message else ""
                self.on_progress(f"[task {task.status}{said}]\n")
        self.task = task
        self._wake.set()


class TaskBoard:
    """A session's calls that run as tasks, by task id: ``notifications/tasks/status``
    reaches its call (an unknown id is ignored)."""

    def __init__(self) -> None:
        self.calls: dict[str, RemoteCall] = {}

    def binding(self) -> NotificationBinding[types.TaskStatusNotificationParams]:
        return NotificationBinding(method="notifications/tasks/status",
                                   params_type=types.TaskStatusNotificationParams, handler=self._on_status)

    async def _on_status(self, params: types.TaskStatusNotificationParams) -> None:
        call = self.calls.get(params.task_id)
        if call is not None:
            call.observe(params)


def tasks_offered(session: ClientSession) -> bool:
    """The server takes ``tools/call`` as a task: it said so, on the version that has tasks."""
    caps = session.server_capabilities
    if session.protocol_version != TASKS_VERSION or caps is None or caps.tasks is None:
        return False
    requests = caps.tasks.requests
    return requests is not None and requests.tools is not None and requests.tools.call is not None


class CallDispatcher(JSONRPCDispatcher):
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


async def serve_call(session: ClientSession, call: RemoteCall, dispatcher: CallDispatcher | None = None,
                     board: TaskBoard | None = None) -> None:
    """Run ``call`` on ``session`` until it is answered, cancelled or abandoned."""
    _CURRENT_CALL.set(call)
    try:
        async with anyio.create_task_group() as tg:

            async def request() -> None:
                try:
                    if call.as_task and dispatcher is not None:
                        call.settle(await _run_task(session, dispatcher, call, board or TaskBoard(), tg))
                    else:
                        result = await session.call_tool(
                            call.tool, call.arguments, meta=call.meta,
                            progress_callback=_progress_sink(call.on_progress),
                        )
                        call.settle(Answer(AnswerKind.RESULT, result=result))
                except MCPError as exc:
                    closed = exc.code == types.CONNECTION_CLOSED
                    kind = AnswerKind.CLOSED if closed else AnswerKind.ERROR
                    if call.task_id is not None and kind is AnswerKind.ERROR:
                        kind = AnswerKind.TASK_LOST  # tasks/get failed: the task's fate is unknown
                    call.settle(Answer(kind, code=exc.code, message=exc.message))
                except (ValidationError, RuntimeError, ValueError, TypeError) as exc:
                    lost = call.task_id is not None
                    call.settle(Answer(AnswerKind.TASK_LOST if lost else AnswerKind.MALFORMED,
                                       message=short(exc)))
                finally:
                    if board is not None and call.task_id is not None:
                        board.calls.pop(call.task_id, None)
                    tg.cancel_scope.cancel()

            tg.start_soon(request)
            await call._cancel_wanted.wait()
            if not call.sent:
                call.settle(Answer(AnswerKind.NOT_SENT))
                tg.cancel_scope.cancel()
                return
            if call.task_id is not None and not call._abandon_wanted.is_set():
                tg.start_soon(_cancel_task, session, call, tg)
            elif not call._abandon_wanted.is_set():
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


async def _run_task(session: ClientSession, dispatcher: CallDispatcher, call: RemoteCall,
                    board: TaskBoard, tg: anyio.abc.TaskGroup) -> Answer:
    """``tools/call`` as a task: create it, follow it to its end, take its result."""
    params: dict[str, Any] = {"name": call.tool, "arguments": call.arguments,
                              "task": {"ttl": call.task_ttl_ms}, "_meta": dict(call.meta)}
    opts: dict[str, Any] = {"headers": {MCP_PROTOCOL_VERSION_HEADER: session.protocol_version or TASKS_VERSION}}
    sink = _progress_sink(call.on_progress)
    if sink is not None:
        opts["on_progress"] = sink
    raw = await dispatcher.send_raw_request("tools/call", params, opts)
    if isinstance(raw, dict) and "task" not in raw:  # it ran the call plainly (allowed)
        return Answer(AnswerKind.RESULT, result=types.CallToolResult.model_validate(raw, by_name=False))
    created = types.CreateTaskResult.model_validate(raw, by_name=False)
    call.task_id = created.task.task_id
    board.calls[call.task_id] = call
    call.observe(created.task)
    if call._cancel_wanted.is_set() and not call._abandon_wanted.is_set():
        tg.start_soon(_cancel_task, session, call, tg)  # the cancel came while it was being created
    while True:
        task = call.task
        assert task is not None
        if task.status == "cancelled" and call.cancel_reason is not None:
            return Answer(AnswerKind.TASK_CANCELLED, message=task.status_message or "")
        if task.status in _TERMINAL or task.status == "input_required":
            break
        call._wake.clear()
        with anyio.move_on_after(poll_seconds(task.poll_interval)):
            await call._wake.wait()
        if call.task is task:  # no notification came: ask
            got = await session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=call.task_id)),
                types.GetTaskResult, request_read_timeout_seconds=TASK_REQUEST_S,
            )
            if got.task_id != call.task_id:
                raise ValueError(f"tasks/get for {call.task_id} answered about {got.task_id}")
            call.observe(got)
    # tasks/result: what the plain call would have answered (it blocks while the task
    # works, and carries the server's questions while it needs input).
    result = await session.send_request(
        types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=call.task_id)),
        types.CallToolResult,
    )
    return Answer(AnswerKind.RESULT, result=result)


async def _cancel_task(session: ClientSession, call: RemoteCall, tg: anyio.abc.TaskGroup) -> None:
    """``tasks/cancel``: a ``cancelled`` answer settles the call; a refusal (already
    ended) wakes the poller to take the result; silence leaves it to the caller's budget."""
    if call._task_cancel_sent or call.task_id is None:
        return
    call._task_cancel_sent = True
    try:
        got = await session.send_request(
            types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=call.task_id)),
            types.CancelTaskResult, request_read_timeout_seconds=TASK_REQUEST_S,
        )
    except MCPError as exc:
        if exc.code == _INVALID_PARAMS:
            call._wake.set()  # it had ended: the poller takes its result
        return
    except (ValidationError, ValueError, TypeError):
        return
    call.cancel_notified = True
    if got.status == "cancelled":
        call.settle(Answer(AnswerKind.TASK_CANCELLED, message=got.status_message or ""))
        tg.cancel_scope.cancel()  # settled: stop following it
    else:
        call.observe(got)


def _printable(text: str, limit: int = 200) -> str:
    """A server's status message as one bounded line of printable text."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def poll_seconds(interval_ms: int | None) -> float:
    """The server's ``pollInterval`` in seconds, held to sane bounds."""
    if interval_ms is None:
        return POLL_DEFAULT_S
    return min(POLL_MAX_S, max(POLL_MIN_S, interval_ms / 1000))


ProgressSink = ProgressFnT


def _progress_sink(emit: Callable[[str], None] | None) -> ProgressSink | None:
    if emit is None:
        return None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        emit(f"[progress {amount}] {message}\n" if message else f"[progress {amount}]\n")

    return on_progress


__all__ = ["Answer", "AnswerKind", "CallDispatcher", "RemoteCall", "TaskBoard", "poll_seconds", "serve_call",
           "tasks_offered"]
