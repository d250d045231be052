"""``Notification`` with ``notification_type`` ``idle_prompt``: the agent has answered and
the user has not written for a while (Claude Code's "waiting for your input", after 60 s).

The session arms :class:`IdleReminder` when its work has ended and nothing is queued,
and disarms it on whatever the user sends next (any op). Once the time has passed
with nothing sent, the ``Notification`` hooks run once, beside the idle screen (never
waited for), under the session's scope: shutdown ends them. Only where a person is
waited for (the TUI: ``AgentConfig.idle_notify_s``); print mode and the protocols
never arm it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.protocol.states import HookEvent

KIND = "idle_prompt"
MESSAGE = "agent-tui is waiting for your input"


class IdleReminder:
    def __init__(self, points: Callable[[], HookPoints], after_s: float | None) -> None:
        self.points = points  # made when the reminder fires (the session's scope then)
        self.after_s = after_s  # None: never
        self._task: asyncio.Task[Any] | None = None

    def arm(self) -> None:
        """The user is waited for from now on (a later arm starts the wait again)."""
        self.disarm()
        if self.after_s is None or not self.points().wanted(HookEvent.NOTIFICATION, KIND):
            return
        self._task = asyncio.get_running_loop().create_task(self._remind(self.after_s))

    def disarm(self) -> None:
        """The user sent something: no reminder for this wait."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _remind(self, after_s: float) -> None:
        await asyncio.sleep(after_s)  # cancel point: the user wrote, or the session ends
        self._task = None
        points = self.points()
        await points.dispatch(
            HookEvent.NOTIFICATION, KIND,
            {"message": MESSAGE, "title": "Waiting for you", "notification_type": KIND},
        )
