"""Prompt caching over a long session: the share of input read from the cache.

A scripted 40-turn session (a tool call and an answer each turn, one turn
interrupted mid-stream) runs twice against the fake Messages API, which caches by
breakpoints and prefixes as the API documents: once as the agent sends it, once
with its cache marks off. Also: input tokens per turn, and how long a compaction of
the finished session takes (the fake answers at once: this is the agent's own time).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

TURNS = 40


def _model(body: dict) -> Any:
    from tests.fake_api import Reply

    last = body["messages"][-1]["content"]
    if any("Write a summary of this conversation" in b.get("text", "") for b in last):
        return Reply.text("summary: forty numbered steps, all done but step 17")
    if any(b.get("type") == "tool_result" for b in last):
        return Reply.text("Step done. " + "The result looks right. " * 12)
    return Reply.tool_use("quick", {"note": "check " + "the file " * 40})


async def _session(cached: bool, turns: int) -> dict[str, Any]:
    from agent_tui.core.journal.records import UsageRecord
    from agent_tui.protocol import Compact, Interrupt, UserMessage
    from agent_tui.providers.anthropic import AnthropicProvider
    from tests.fake_api import FakeAnthropicServer, Reply
    from tests.harness import QuickTool, start_session

    with FakeAnthropicServer() as srv:
        workspace = Path(tempfile.mkdtemp(prefix="atui-bench-cache-"))
        provider = AnthropicProvider(api_key="bench", base_url=srv.url)
        run = start_session(provider, [QuickTool()], workspace, prompt_cache=cached)
        for turn in range(turns):
            if turn == turns // 2:  # one turn interrupted mid-stream
                srv.enqueue(Reply.stall("Let me think about step " + "x" * 50, seconds=20))
                seen = len(run.rec.of("text_delta"))
                run.submit(UserMessage(text=f"step {turn}: go on"))
                await run.rec.wait_for(lambda: len(run.rec.of("text_delta")) > seen)
                run.submit(Interrupt())
            else:
                srv.enqueue(_model, _model)
                run.submit(UserMessage(text=f"step {turn}: do the next numbered step"))
            await run.idle(timeout=60)
        started = time.monotonic()
        srv.enqueue(_model)
        run.submit(Compact())
        await run.rec.wait_for(
            lambda: any(e.state in ("completed", "failed") for e in run.rec.of("compaction")),
            timeout=60)
        compaction_ms = (time.monotonic() - started) * 1000
        await run.idle()
        await run.close()
        records = [r for r in run.journal.records
                   if isinstance(r, UsageRecord) and r.purpose == "turn"]
        total = sum(r.input_tokens + r.cache_read_input_tokens + r.cache_creation_input_tokens
                    for r in records)
        read = sum(r.cache_read_input_tokens for r in records)
        return {"share": read / total if total else 0.0, "per_turn": total / turns,
                "compaction_ms": compaction_ms, "rejections": len(srv.rejections)}


def measure(cached: bool, turns: int = TURNS) -> dict[str, Any]:
    return asyncio.run(_session(cached, turns))
