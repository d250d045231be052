"""Warms the crash trials' fork server: imported there (and only there) once.

The SDK builds its parsers and imports its transport on the first request, and the
core builds its models' schemas on first use: a fresh agent pays about 0.3 s for
that. One streamed request to a throwaway loopback server, made here before any
agent is forked, moves that cost out of every trial. It runs on one thread: the
loop's executor is shut down before the import returns, so the fork server still
has no thread when it forks.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import threading
from pathlib import Path

from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.records import UserMessageRecord
from agent_tui.protocol import TextDelta
from agent_tui.providers import base
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.tools.background import BackgroundJobs
from agent_tui.tools.registry import default_tools
from bench.forked_agent import share_ssl_context


def _sse(kind: str, data: dict) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


_EVENTS = b"".join([
    _sse("message_start", {"type": "message_start", "message": {
        "id": "msg_warm", "type": "message", "role": "assistant", "model": "warm",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
    _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "hi"}}),
    _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
    _sse("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "toolu_warm", "name": "bash", "input": {}}}),
    _sse("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
        "type": "input_json_delta", "partial_json": '{"command": "true"}'}}),
    _sse("content_block_stop", {"type": "content_block_stop", "index": 1}),
    _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                           "usage": {"output_tokens": 2}}),
    _sse("message_stop", {"type": "message_stop"}),
])


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    await reader.readexactly(length)
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
                 b"content-length: %d\r\n\r\n" % len(_EVENTS) + _EVENTS)
    await writer.drain()
    writer.close()


async def _warm() -> None:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        tools = default_tools(Path(tmp), jobs=BackgroundJobs())
        provider = AnthropicProvider(api_key="warm", base_url=f"http://127.0.0.1:{port}")
        request = base.ModelRequest(model="warm", system="warm", tools=tools.specs(),
                                    messages=[{"role": "user", "content": "hi"}])
        async for _event in provider.stream(request):
            pass
        await provider.aclose()
        journal = Journal(Path(tmp) / "j.jsonl")
        journal.append(UserMessageRecord(turn_id="t1", text="hi"), durable=True)
        journal.close()
        TextDelta(turn_id="t1", text="hi").model_dump_json()
    server.close()
    await server.wait_closed()


share_ssl_context()
asyncio.run(_warm())
assert threading.active_count() == 1, "the fork server must not fork with threads running"
