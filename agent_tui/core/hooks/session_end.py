"""The session's own hook points: ``SessionStart`` when it opens, ``SessionEnd`` when
it ends (a part of ``Session``).

``SessionEnd`` runs once the session has stopped what ran (the turn, background
work) and before its journal closes, so its hooks read the whole conversation:
``reason`` is ``prompt_input_exit`` when the user quits the TUI, ``other`` at the end
of a print-mode run or of an ACP session (``Shutdown.reason``), and ``clear`` on
``/clear`` (``core/session/clear.py``, which then runs ``SessionStart`` with source
``clear``). It cannot block: each hook is bounded by its own timeout, and an
interrupt (Esc, Ctrl+C) while it runs ends it, so quitting is never held for good.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.hooks.hook_points import HookPoints
from agent_tui.core.hooks.work_points import instructions_loaded
from agent_tui.core.memory.memory import MemoryFile
from agent_tui.core.journal.records import UserMessageRecord
from agent_tui.protocol import SessionEndReason


def starting(
    deps: SessionDeps, root: CancelScope, record: Callable[[Any], object],
    memory_files: Sequence[MemoryFile] = (),
) -> Callable[[], Awaitable[None]]:
    """``SessionStart`` as the session opens (``startup``, or ``resume`` for a
    conversation that has one), after ``Setup`` when ``--init`` or ``--maintenance``
    asked for it, then ``InstructionsLoaded`` for each instruction file the session
    read, for the session to wait for before its first request."""
    resumed = any(isinstance(r, UserMessageRecord) for r in deps.journal.records)
    points = HookPoints(deps, root, record)
    trigger = deps.config.setup_trigger

    async def start() -> None:
        if trigger is not None:  # --init / --maintenance: Setup first, once
            await points.setup(trigger)
        await points.session_start("resume" if resumed else "startup")
        await instructions_loaded(points, list(memory_files))

    return start


class SessionEnding:
    """``SessionEnd`` at the session's end, under a scope of its own (the session's
    is cancelled by then) that :meth:`interrupt` cancels."""

    def __init__(self) -> None:
        self._scope: CancelScope | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(
        self, deps: SessionDeps, record: Callable[[Any], object], reason: SessionEndReason
    ) -> None:
        if deps.hooks is None:
            return
        self._loop = asyncio.get_running_loop()
        scope = self._scope = CancelScope("session_end")
        try:
            await HookPoints(deps, scope, record).session_end(reason)
        finally:
            self._scope = None

    def interrupt(self) -> None:
        """Esc or Ctrl+C while the hooks run (from any thread): end them now."""
        scope, loop = self._scope, self._loop
        if scope is not None and loop is not None:  # on the session's loop, like its work
            try:
                loop.call_soon_threadsafe(scope.cancel, CancelReason.USER_INTERRUPT)
            except RuntimeError:
                pass  # the loop has ended: so have the hooks
