"""Any OpenAI-compatible server, on the Chat Completions API (``openai-chat``).

The request is built by :mod:`agent_tui.providers.openai_wire.chat_messages`; the streamed chunks
become the provider interface's events here:

- the stream's start (its headers arrived) is ``message_started``, with the request's
  size estimated: from then on the server may bill it, even if it is cut;
- ``delta.content`` is a text block; ``delta.reasoning_content`` (DeepSeek, vLLM) or
  ``delta.reasoning`` (OpenRouter, Ollama) a thinking block marked as this API's;
- ``delta.tool_calls`` are assembled by their ``index``: the first delta of a call
  carries its id and name, the next ones pieces of its arguments;
- ``finish_reason`` is the stop reason, and the last chunk's ``usage``
  (``stream_options.include_usage``) the counts, cached tokens from
  ``prompt_tokens_details.cached_tokens``.

A stream that ends with no ``finish_reason`` was cut: that is an error to retry, not
an answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agent_tui.providers import base
from agent_tui.providers.openai_wire.chat_messages import chat_body
from agent_tui.providers.openai_wire.common import (
    CHAT_REASONING,
    OpenAIWireProvider,
    estimate_tokens,
    read_stream,
    safe_call_id,
    usage_counts,
)

STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
                "length": "max_tokens", "content_filter": "refusal"}


class OpenAIChatProvider(OpenAIWireProvider):
    def _body(self, request: base.ModelRequest) -> dict[str, Any]:
        entry = self.cfg.models.get(request.model)
        return chat_body(request, model=request.model,
                         images=bool(entry and entry.images),
                         reasoning_back=bool(entry and entry.reasoning),
                         max_tokens_param=self.cfg.max_tokens_param)

    async def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        body = self._body(request)
        stream = await self.create(self._client.chat.completions.create, body)
        fold = ChunkFold(estimate_tokens(body["messages"]) + estimate_tokens(body.get("tools")))
        yield fold.started(request.model)
        async for chunk in read_stream(stream, self.name):
            for event in fold.on_chunk(chunk):
                yield event
        for event in fold.finished():
            yield event



class ChunkFold:
    """Chunks in, the interface's events out, with block indices of our own."""

    def __init__(self, estimate: int) -> None:
        self.estimate = estimate
        self.next_index = 0
        self.text: int | None = None
        self.thinking: int | None = None
        self.calls: dict[int, int] = {}  # the chunk's tool call index: our block index
        self.open: list[int] = []
        self.finish: str | None = None
        self.usage: dict[str, int] | None = None

    def started(self, model: str) -> base.MessageStarted:
        return base.MessageStarted(model=model, usage=base.UsageCounts(input_tokens=self.estimate, estimated=True))

    def _new_block(self) -> int:
        index = self.next_index
        self.next_index += 1
        self.open.append(index)
        return index

    def _stop(self, index: int | None) -> list[base.StreamEvent]:
        if index is None or index not in self.open:
            return []
        self.open.remove(index)
        return [base.BlockStopped(index=index)]

    def on_chunk(self, chunk: Any) -> list[base.StreamEvent]:
        events: list[base.StreamEvent] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = _usage(usage)
        for choice in chunk.choices or []:
            if choice.index != 0:
                continue
            delta = choice.delta
            extra = delta.model_extra or {}
            reasoning = extra.get("reasoning_content") or extra.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                events += self._reasoning(reasoning)
            if delta.content:
                events += self._text(delta.content)
            for call in delta.tool_calls or []:
                events += self._call(call)
            if choice.finish_reason:
                self.finish = choice.finish_reason
        return events

    def _reasoning(self, text: str) -> list[base.StreamEvent]:
        events: list[base.StreamEvent] = []
        if self.thinking is None or self.thinking not in self.open:
            self.thinking = self._new_block()
            events.append(base.ThinkingStarted(index=self.thinking))
        events.append(base.ThinkingDelta(index=self.thinking, text=text))
        return events

    def _close_thinking(self) -> list[base.StreamEvent]:
        if self.thinking is None or self.thinking not in self.open:
            return []
        return [base.SignatureDelta(index=self.thinking, signature=CHAT_REASONING),
                *self._stop(self.thinking)]

    def _text(self, text: str) -> list[base.StreamEvent]:
        events = self._close_thinking()
        if self.text is None or self.text not in self.open:
            self.text = self._new_block()
            events.append(base.TextStarted(index=self.text))
        events.append(base.TextDelta(index=self.text, text=text))
        return events

    def _call(self, call: Any) -> list[base.StreamEvent]:
        events: list[base.StreamEvent] = []
        function = call.function
        index = self.calls.get(call.index)
        if index is None:
            name = function.name if function is not None else None
            if not name:
                raise base.ProviderError(
                    f"malformed stream: tool call {call.index} starts without a name",
                    retryable=True)
            events += self._close_thinking() + self._stop(self.text)
            index = self.calls[call.index] = self._new_block()
            events.append(base.ToolUseStarted(
                index=index, id=safe_call_id(call.id), name=name))
        if function is not None and function.arguments:
            events.append(base.ToolInputDelta(index=index, partial_json=function.arguments))
        return events

    def finished(self) -> list[base.StreamEvent]:
        if self.finish is None:
            raise base.ProviderError("the stream ended before the answer did (no finish_reason)",
                                     retryable=True, kind=base.ErrorKind.CONNECTION)
        events = self._close_thinking()
        for index in list(self.open):
            events += self._stop(index)
        stop = STOP_REASONS.get(self.finish, self.finish)
        if self.calls and stop == "end_turn":
            stop = "tool_use"  # some servers say "stop" after calls
        usage = self.usage or {}
        events.append(base.MessageEnded(stop_reason=stop, **usage))
        return events


def _usage(usage: Any) -> dict[str, int]:
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    written = getattr(details, "cache_write_tokens", None) or 0
    return usage_counts(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached, written)
