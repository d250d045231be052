"""An McpManager running on a loop of its own thread, as the core's loop runs it
beside the TUI: for UI tests that need real servers behind the session."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_tui.core.calls.tool import ToolSet
from agent_tui.mcp import McpManager, ServerConfig


class ManagerThread:
    def __init__(self, manager: McpManager) -> None:
        self.manager = manager
        self.tools = ToolSet()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def run(self, coro: Any, timeout: float = 90.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        self._thread.start()

        async def begin() -> None:
            self.manager.attach(self.tools)
            self.manager.start()
            await self.manager.wait_started(60.0)

        self.run(begin())

    def stop(self) -> None:
        try:
            self.run(self.manager.shutdown())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)


@contextmanager
def running_manager(tmp_path: Path, *configs: ServerConfig, **options: Any) -> Iterator[ManagerThread]:
    options.setdefault("start_timeout_s", 60.0)
    options.setdefault("auth_dir", tmp_path / "mcp-auth")
    thread = ManagerThread(McpManager(list(configs), workspace=tmp_path, log_dir=tmp_path / "logs", **options))
    thread.start()
    try:
        yield thread
    finally:
        thread.stop()
