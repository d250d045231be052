"""Pending permission questions: a tool call waits here for the user's decision.

The wait is a cancel point: interrupting the turn ends it (the call is then
cancelled before start), and a decision that arrives late is ignored.
"""

from __future__ import annotations

import asyncio

from agent_tui.cancel import CancelScope
from agent_tui.protocol import Decide


class Approvals:
    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[Decide]] = {}

    async def wait(self, tool_use_id: str, scope: CancelScope) -> Decide:
        fut: asyncio.Future[Decide] = asyncio.get_running_loop().create_future()
        self._pending[tool_use_id] = fut
        try:
            async with scope.linked():  # cancel point: a permission wait
                return await fut
        finally:
            self._pending.pop(tool_use_id, None)

    def resolve(self, decision: Decide) -> bool:
        """Deliver a decision; False when nobody is waiting for it (late or unknown)."""
        fut = self._pending.get(decision.tool_use_id)
        if fut is None or fut.done():
            return False
        fut.set_result(decision)
        return True
