"""Permission over ACP: a ``permission_requested`` event becomes a
``session/request_permission`` request, and its answer a ``decide`` op.

Each request is sent by a task of its own (the pump never waits for the user). When
the turn is cancelled the request task is cancelled: a late answer is dropped, the
core never gets an allow, and the call ends ``cancelled_before_start``. A call that
leaves ``awaiting_approval`` some other way (a hook decided, the turn ended) drops
its request the same way.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from acp.schema import PermissionOption

from agent_tui.acp import lasting
from agent_tui.acp.updates import UpdateMapper
from agent_tui.core.session.session import Session
from agent_tui.protocol import Decide, Decision, Event, PermissionRequested

log = logging.getLogger("agent_tui.acp")


class AsksPermission(Protocol):
    """What asking needs from the SDK's agent-side connection."""

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[PermissionOption], **kwargs: Any
    ) -> Any: ...


class Asker:
    """The permission requests of one ACP session that wait for the user."""

    def __init__(self, session_id: str, conn: AsksPermission, *,
                 cancelled: Callable[[], bool], cancel: Callable[[], None],
                 tell: Callable[[Event], None]) -> None:
        self.id = session_id
        self.conn = conn
        self._cancelled = cancelled  # whether the running prompt was cancelled
        self._cancel = cancel  # cancel the running prompt (the client's "cancelled" outcome)
        self._tell = tell  # an event for the pump (a lasting rule's notice)
        self._asks: dict[str, asyncio.Task[None]] = {}

    def ask(self, session: Session, mapper: UpdateMapper, event: PermissionRequested) -> None:
        """Send the request; its answer is submitted to ``session`` when it comes."""
        task = asyncio.get_running_loop().create_task(self._ask(session, mapper, event))
        self._asks[event.tool_use_id] = task
        task.add_done_callback(functools.partial(self._forget, event.tool_use_id))

    def drop(self, tool_use_id: str) -> None:
        """The call no longer awaits approval: its request, if any, is withdrawn."""
        ask = self._asks.pop(tool_use_id, None)
        if ask is not None:
            ask.cancel()

    def drop_all(self) -> None:
        for task in list(self._asks.values()):
            task.cancel()

    def _forget(self, tool_use_id: str, task: asyncio.Task[None]) -> None:
        if self._asks.get(tool_use_id) is task:
            del self._asks[tool_use_id]

    async def _ask(self, session: Session, mapper: UpdateMapper,
                   event: PermissionRequested) -> None:
        tool_call = mapper.permission_call(event.tool_use_id, event.name, event.summary,
                                           event.input)
        try:
            response = await self.conn.request_permission(
                session_id=self.id, tool_call=tool_call, options=lasting.options(event)
            )
        except asyncio.CancelledError:
            return  # the turn was cancelled: the core ends the call cancelled_before_start
        except Exception as exc:
            log.warning("session %s: permission request failed: %r", self.id, exc)
            session.submit(Decide(tool_use_id=event.tool_use_id, decision=Decision.DENY,
                                  note=f"the client could not be asked ({exc})"))
            return
        if self._cancelled():
            return  # answered after session/cancel: never an allow
        outcome = response.outcome
        if outcome.outcome == "cancelled":
            # ACP's "cancelled" outcome means the prompt turn was cancelled.
            self._cancel()
            return
        decide, said = lasting.answer(event, outcome.option_id, Path(session.workspace))
        session.submit(decide)  # a lasting rule applies at once; the notice says if it was saved
        if said is not None:
            self._tell(said)
