"""The lines of the protocol, both ways.

Out: one JSON object per line on stdout, written whole (a reader that went away ends
the run, as in print mode). Control requests agent-tui sends (``can_use_tool``,
``hook_callback``, ``mcp_message``) wait for the ``control_response`` with their
``request_id``; an ``error`` answer raises :class:`ControlError`. When stdin ends,
every request still waiting fails the same way: nobody is left to answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from typing import IO, Any


class ControlError(Exception):
    """The app answered a control request with an error, or can no longer answer."""


class Wire:
    def __init__(self, out: IO[str], on_closed: Callable[[], None] = lambda: None) -> None:
        self.out = out
        self.on_closed = on_closed
        self.closed = False
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._ended = False

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            self.out.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True
            self.on_closed()

    def answer(self, request_id: str, response: dict[str, Any] | None = None) -> None:
        self.send({"type": "control_response", "response": {
            "subtype": "success", "request_id": request_id, "response": response or {}}})

    def refuse(self, request_id: str, error: str) -> None:
        self.send({"type": "control_response", "response": {
            "subtype": "error", "request_id": request_id, "error": error}})

    async def request(self, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send a control request and wait for its answer's ``response``."""
        if self._ended:
            raise ControlError("the app's input has ended: no one can answer")
        request_id = f"agent_tui_{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.send({"type": "control_request", "request_id": request_id, "request": body})
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self.send({"type": "control_cancel_request", "request_id": request_id})
            raise ControlError(f"no answer to {body.get('subtype')} in {timeout:g} s") from None
        except asyncio.CancelledError:
            self.send({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, message: dict[str, Any]) -> None:
        """A ``control_response`` line from the app."""
        response = message.get("response")
        if not isinstance(response, dict):
            return
        future = self._pending.get(str(response.get("request_id")))
        if future is None or future.done():
            return  # late (cancelled) or unknown: nothing waits for it
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "error")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})

    def end(self) -> None:
        """stdin ended: what still waits for an answer will get none."""
        self._ended = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError("the app's input has ended: no answer"))
