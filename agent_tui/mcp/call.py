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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from pydantic import ValidationError

from agent_tui.mcp_catalog.errors import short

_NOTIFY_WRITE_S = 1.0


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
        meta: types.RequestParamsMeta,
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


async def serve_call(session: ClientSession, call: RemoteCall) -> None:
    """Run ``call`` on ``session`` until it is answered, cancelled or abandoned."""
    _CURRENT_CALL.set(call)
    try:
        async with anyio.create_task_group() as tg:

            async def request() -> None:
                try:
                    result = await session.call_tool(
                        call.tool, call.arguments, meta=call.meta,
                        progress_callback=_progress_sink(call.on_progress),
                    )
                    call.settle(Answer(AnswerKind.RESULT, result=result))
                except MCPError as exc:
                    closed = exc.code == types.CONNECTION_CLOSED
                    kind = AnswerKind.CLOSED if closed else AnswerKind.ERROR
                    call.settle(Answer(kind, code=exc.code, message=exc.message))
                except (ValidationError, RuntimeError, ValueError, TypeError) as exc:
                    call.settle(Answer(AnswerKind.MALFORMED, message=short(exc)))
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


ProgressSink = ProgressFnT


def _progress_sink(emit: Callable[[str], None] | None) -> ProgressSink | None:
    if emit is None:
        return None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        emit(f"[progress {amount}] {message}\n" if message else f"[progress {amount}]\n")

    return on_progress


__all__ = ["Answer", "AnswerKind", "CallDispatcher", "RemoteCall", "serve_call"]
