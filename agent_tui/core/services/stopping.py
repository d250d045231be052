"""Tool calls still being stopped after their turn ended: the next turn waits for their results.

An interrupted turn ends the moment the stop is decided; a call that does not end at once
(a command that ignores TERM waits out its grace) goes on stopping on its own task and then
records how it really ended. The next turn waits for those results before it records its
prompt, so the journal keeps the true order and its first request reports what happened; a
second Esc hurries them (SIGKILL now), as it would have inside the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from agent_tui.cancel import CancelScope


def stopping_detail(grace: float | None, budget: float, since: float) -> str:
    """What a call still stopping shows in place, told to stop ``since`` seconds ago:
    ``grace`` (TERM to KILL) for one with processes, else the cleanup ``budget``."""
    if grace is None:
        return f"stopping: waiting up to {max(budget - since, 0):.1f} s for it to confirm"
    return f"stopping: it ignores TERM, killed in {max(grace - since, 0):.1f} s"


class Stopping:
    """The stops that outlived their turn: each a task and the scope that stops it."""

    def __init__(self) -> None:
        self._stops: dict[asyncio.Task[None], CancelScope] = {}

    def add(self, work: Awaitable[None], scope: CancelScope) -> None:
        """Let ``work`` finish after its turn; ``scope`` (cancelled) is what a hurry reaches."""
        task = asyncio.ensure_future(work)
        self._stops[task] = scope
        task.add_done_callback(lambda done: self._stops.pop(done, None))

    def __bool__(self) -> bool:
        return any(not task.done() for task in self._stops)

    def hurry(self) -> bool:
        """No more grace for what is still stopping (a second Esc, a quit). True if any."""
        scopes = [scope for task, scope in list(self._stops.items()) if not task.done()]
        for scope in scopes:
            scope.hurry()
        return bool(scopes)

    async def settled(self) -> None:
        """Until every stop has recorded how its calls ended (each is bounded by the
        cleanup budget: a call that does not confirm becomes ``unknown``)."""
        while self._stops:
            await asyncio.wait(set(self._stops))
