"""A real Session hosted as the TUI hosts it: on a thread of its own with its own loop.

The bench drives it from the main thread (submit, ``interrupt_now``, as the UI does) and
every Event is stamped with ``time.monotonic()`` the moment the core emits it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_tui.protocol import Event, Shutdown
from agent_tui.core.journal.journal import Journal
from agent_tui.core.usage.limits import ModelLimits
from agent_tui.core.calls.permission import AllowAll, PermissionPolicy
from agent_tui.core.session.session import Session
from agent_tui.core.calls.tool import Tool, ToolSet
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.providers.base import Provider


class Stamped:
    """Events with the monotonic time each was emitted; waits on conditions over them."""

    def __init__(self) -> None:
        self.events: list[tuple[float, Event]] = []
        self._cond = threading.Condition()

    def __call__(self, event: Event) -> None:
        now = time.monotonic()
        with self._cond:
            self.events.append((now, event))
            self._cond.notify_all()

    def of(self, kind: str) -> list[tuple[float, Any]]:
        with self._cond:
            return [(t, e) for t, e in self.events if e.type == kind]

    def wait(self, pred: Callable[[], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    def wait_type(self, kind: str, count: int = 1, timeout: float = 10.0) -> bool:
        return self.wait(lambda: sum(1 for _, e in self.events if e.type == kind) >= count,
                         timeout)


class HostedSession:
    def __init__(
        self,
        provider: Provider,
        tools: list[Tool],
        workspace: Path,
        *,
        policy: PermissionPolicy | None = None,
        background: list[Any] | None = None,
        journal: Journal | None = None,
        limits: ModelLimits | None = None,
        events: Stamped | None = None,
        **config: Any,
    ) -> None:
        self.events = events or Stamped()
        self.journal = journal or Journal()
        deps = SessionDeps(
            config=AgentConfig(workspace=workspace, model="claude-bench", **config),
            provider=provider,
            tools=ToolSet(tools),
            policy=policy or AllowAll(),
            journal=self.journal,
            emit=self.events,
            **({"limits": limits} if limits is not None else {}),
        )
        self.session = Session(deps, background=background)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="bench-core", daemon=True)
        self._thread.start()
        self._ready.wait(5)

    def _main(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self._ready.set()
            await self.session.run()

        asyncio.run(main())

    def submit(self, op: Any) -> None:
        self.session.submit(op)

    def interrupt(self) -> float:
        """Esc, as the TUI sends it; returns the monotonic time it was sent."""
        t0 = time.monotonic()
        self.session.interrupt_now()
        return t0

    def wait_idle(self, timeout: float = 15.0) -> bool:
        assert self.loop is not None
        fut = asyncio.run_coroutine_threadsafe(self.session.wait_idle(), self.loop)
        try:
            fut.result(timeout)
            return True
        except Exception:
            fut.cancel()
            return False

    def close(self, timeout: float = 15.0) -> None:
        self.session.submit(Shutdown())
        self._thread.join(timeout)
