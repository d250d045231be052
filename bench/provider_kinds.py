"""The same scripted session on each provider kind, side by side: the Messages API
(anthropic), Chat Completions (openai-chat) and the Responses API (openai), each through
its real SDK over HTTP to its fake.

A session of ``TURNS`` turns (a tool call and an answer each) with one turn
interrupted in a stalled stream. Per kind: the share of input read from the prompt
cache (the fakes cache as their APIs document), the session's cost at one price
for all (so the figures compare the wire formats, not the vendors), and the time from
Esc to the server seeing the connection closed.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

TURNS = 12
KINDS = ("anthropic", "openai-chat", "openai-responses")
#: One price for every kind, USD per MTok (input, output, cache write, cache read).
PRICE = {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}
STALL_S = 30.0


def _replies(kind: str, turn: int) -> list[Any]:
    note = {"note": f"check step {turn} " + "the file " * 30}
    text = "Step done. " + "The result looks right. " * 10
    if kind == "anthropic":
        from tests.fake_api import Reply

        return [Reply.tool_use("quick", note), Reply.text(text)]
    import json

    from tests.fake_openai import Call, Reply as OpenAIReply

    return [OpenAIReply(calls=[Call("quick", json.dumps(note))]), OpenAIReply(text=text)]


def _stall(kind: str) -> Any:
    if kind == "anthropic":
        from tests.fake_api import Reply

        return Reply.stall("Let me think about it " + "x" * 40, seconds=STALL_S)
    from tests.fake_openai import Reply as OpenAIReply

    return OpenAIReply(text="Let me think about it " + "x" * 40, chunk=8,
                       stall_after=(4, STALL_S))


def _server_and_provider(kind: str) -> tuple[Any, Any, str]:
    if kind == "anthropic":
        from agent_tui.providers.anthropic import AnthropicProvider
        from tests.fake_api import FakeAnthropicServer

        srv = FakeAnthropicServer().__enter__()
        return srv, AnthropicProvider(api_key="bench", base_url=srv.url), "claude-test"
    from agent_tui.providers.config import ProviderConfig
    from agent_tui.providers.factory import from_config
    from tests.fake_openai import FakeOpenAIServer

    srv = FakeOpenAIServer().__enter__()
    cfg = ProviderConfig.model_validate({"api": kind, "baseURL": srv.url, "free": True})
    return srv, from_config("bench", cfg), "gpt-test"


async def _session(kind: str, turns: int) -> dict[str, Any]:
    from agent_tui.core.journal.records import UsageRecord
    from agent_tui.core.usage.pricing import PriceTable
    from agent_tui.protocol import Interrupt, UserMessage
    from tests.harness import QuickTool, start_session

    srv, provider, model = _server_and_provider(kind)
    try:
        workspace = Path(tempfile.mkdtemp(prefix="atui-bench-kinds-"))
        run = start_session(provider, [QuickTool()], workspace)
        run.session.deps.config.model = model
        esc_ms: float | None = None
        for turn in range(turns):
            if turn == turns // 2:
                srv.enqueue(_stall(kind))
                seen = len(run.rec.of("text_delta"))
                run.submit(UserMessage(text=f"step {turn}: go on"))
                await run.rec.wait_for(lambda: len(run.rec.of("text_delta")) > seen)
                pressed = time.monotonic()
                run.submit(Interrupt())
                await asyncio.to_thread(_wait, lambda: bool(srv.disconnects), 10.0)
                esc_ms = (srv.disconnects[-1][1] - pressed) * 1000
            else:
                srv.enqueue(*_replies(kind, turn))
                run.submit(UserMessage(text=f"step {turn}: do the next numbered step"))
            await run.idle(timeout=60)
        usage = [r for r in run.journal.records if isinstance(r, UsageRecord)]
        await run.close()
    finally:
        srv.__exit__(None, None, None)
    prices = PriceTable({model: PRICE})
    read = sum(r.cache_read_input_tokens for r in usage)
    total = sum(r.input_tokens + r.cache_read_input_tokens + r.cache_creation_input_tokens
                for r in usage)
    cost = sum(prices.cost(model, input_tokens=r.input_tokens, output_tokens=r.output_tokens,
                           cache_read_input_tokens=r.cache_read_input_tokens,
                           cache_creation_input_tokens=r.cache_creation_input_tokens) or 0.0
               for r in usage)
    return {"share": read / total if total else 0.0, "cost": cost, "esc_ms": esc_ms,
            "requests": len(usage)}


def _wait(pred: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError("the server never saw the connection closed")
        time.sleep(0.002)


def measure(kind: str, turns: int = TURNS) -> dict[str, Any]:
    return asyncio.run(_session(kind, turns))
