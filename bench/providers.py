"""In-process model providers for the bench: they script the model's side exactly
(no network, no SDK), so the figures measure the agent, not the fake server."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from agent_tui.providers import base


def _only_tool_results(request: base.ModelRequest) -> bool:
    """The last message carries tool results and no new words from the user (after an
    interrupt the next user message carries the old results *and* the new request)."""
    content = request.messages[-1]["content"]
    if isinstance(content, str):
        return False
    return all(b.get("type") == "tool_result" for b in content)


class CommandProvider(base.Provider):
    """Asks for one bash command per user message, then says "done"."""

    name = "bench-command"
    default_model = "bench"

    def __init__(self, command: str, **tool_input: Any) -> None:
        self.command = command
        self.tool_input = tool_input
        self._ids = 0

    def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        return self._stream(request)

    async def _stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        await asyncio.sleep(0)
        if _only_tool_results(request):
            yield base.TextStarted(index=0)
            yield base.TextDelta(index=0, text="done")
            yield base.BlockStopped(index=0)
            yield base.MessageEnded(stop_reason="end_turn")
            return
        self._ids += 1
        yield base.ToolUseStarted(index=0, id=f"toolu_bench{self._ids:06d}", name="bash")
        payload = json.dumps({"command": self.command, **self.tool_input})
        yield base.ToolInputDelta(index=0, partial_json=payload)
        yield base.BlockStopped(index=0)
        yield base.MessageEnded(stop_reason="tool_use")


class FloodProvider(base.Provider):
    """Streams text at ``rate`` deltas a second for ``seconds`` (paced in 10 ms batches)."""

    name = "bench-flood"
    default_model = "bench"

    def __init__(self, rate: int = 10_000, seconds: float = 5.0, piece: str = "lorem ") -> None:
        self.rate = rate
        self.seconds = seconds
        self.piece = piece
        self.achieved_rate = 0.0  # deltas a second the last stream really sent

    def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[base.StreamEvent]:
        yield base.TextStarted(index=0)
        start = time.monotonic()
        tick = 0.01
        sent = 0
        try:
            while True:
                elapsed = time.monotonic() - start
                if elapsed >= self.seconds:
                    break
                due = int(elapsed * self.rate) + int(tick * self.rate)
                while sent < due:
                    sent += 1
                    text = self.piece if sent % 20 else self.piece + "\n"
                    yield base.TextDelta(index=0, text=text)
                await asyncio.sleep(tick)
        finally:
            self.achieved_rate = sent / max(time.monotonic() - start, 1e-9)
        yield base.BlockStopped(index=0)
        yield base.MessageEnded(stop_reason="end_turn")
