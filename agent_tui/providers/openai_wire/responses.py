"""OpenAI on the Responses API (``openai``; ``openai-responses`` for other servers).

The request is built by :mod:`agent_tui.providers.openai_wire.responses_items`; the stream's
events become the interface's:

- ``response.created``: ``message_started`` (the request's size estimated until
  ``response.completed`` says; from here the request may be billed, even if cut);
- an output item added: a text block (``message``), a tool call (``function_call``,
  its ``call_id`` the call's id) or a thinking block (``reasoning``); the deltas of
  each (``output_text``, ``function_call_arguments``, ``reasoning_summary_text``)
  go to its block; an item done stops its block, and a reasoning item's id and
  ``encrypted_content`` become its signature (sent back as the API requires);
- ``response.completed`` / ``response.incomplete``: the stop reason and the usage
  (``input_tokens_details.cached_tokens``); ``response.failed`` and ``error`` are
  provider errors.

With ``background`` set in the provider's config, each request runs in background mode;
when its stream is closed before the response completed (Esc), the connection goes at
once, then ``responses.cancel`` stops the run on the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai

from agent_tui.providers import base
from agent_tui.providers.openai_wire.common import (
    OpenAIWireProvider,
    estimate_tokens,
    read_stream,
    safe_call_id,
    usage_counts,
)
from agent_tui.providers.openai_wire.responses_items import reasoning_signature, responses_body

#: Models that reason by default, when the configuration does not say.
REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4", "codex")
INCOMPLETE = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}
#: How long an interrupted background run's cancel may take (the close waits for it).
CANCEL_WAIT_S = 1.0


class OpenAIResponsesProvider(OpenAIWireProvider):
    def _body(self, request: base.ModelRequest) -> dict[str, Any]:
        entry = self.cfg.models.get(request.model)
        reasoning = (entry.reasoning if entry is not None and entry.reasoning is not None
                     else request.model.startswith(REASONING_PREFIXES))
        return responses_body(request, images=bool(entry and entry.images), reasoning=reasoning,
                              background=self.cfg.background)

    async def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        body = self._body(request)
        stream = await self.create(self._client.responses.create, body)
        fold = EventFold(estimate_tokens(body["input"]) + estimate_tokens(body.get("tools")),
                         self.name)
        try:
            async for event in read_stream(stream, self.name):
                for out in fold.on_event(event):
                    yield out
        finally:
            if self.cfg.background and fold.response_id and not fold.ended:
                await self._cancel_remote(fold.response_id)
        if not fold.ended:
            raise base.ProviderError("the stream ended before the answer did (no "
                                     "response.completed)", retryable=True,
                                     kind=base.ErrorKind.CONNECTION)



    async def _cancel_remote(self, response_id: str) -> None:
        """An interrupted background run is cancelled on the server (after the stream's
        connection is closed), within a short bound: past it, the run's end is unknown."""
        try:
            await asyncio.wait_for(self._client.responses.cancel(response_id), CANCEL_WAIT_S)
        except (openai.APIError, httpx2.TransportError, TimeoutError):
            pass  # best effort: the server may have finished it, or be out of reach


class EventFold:
    def __init__(self, estimate: int, name: str) -> None:
        self.estimate = estimate
        self.name = name
        self.blocks: dict[int, int] = {}  # output_index: our block index
        self.kinds: dict[int, str] = {}
        self.args_seen: set[int] = set()
        self.calls = 0
        self.ended = False
        self.response_id: str | None = None

    def on_event(self, event: Any) -> list[base.StreamEvent]:
        kind = event.type
        if kind == "response.created":
            self.response_id = event.response.id
            return [base.MessageStarted(id=event.response.id, model=event.response.model,
                                        usage=base.UsageCounts(input_tokens=self.estimate, estimated=True))]
        if kind == "response.output_item.added":
            return self._added(event.output_index, event.item)
        if kind == "response.output_text.delta":
            return self._delta(event.output_index, "message", event.delta)
        if kind == "response.function_call_arguments.delta":
            self.args_seen.add(event.output_index)
            return self._delta(event.output_index, "function_call", event.delta)
        if kind == "response.reasoning_summary_text.delta":
            return self._delta(event.output_index, "reasoning", event.delta)
        if kind == "response.output_item.done":
            return self._done(event.output_index, event.item)
        if kind in ("response.completed", "response.incomplete"):
            return self._ended(event.response)
        if kind == "response.failed":
            error = event.response.error
            raise base.ProviderError(f"{self.name}: the response failed: "
                                     f"{getattr(error, 'message', error)}", retryable=True,
                                     kind=base.ErrorKind.SERVER)
        if kind == "error":
            raise base.ProviderError(f"{self.name}: {event.message}", retryable=True,
                                     kind=base.ErrorKind.SERVER)
        return []

    def _added(self, output: int, item: Any) -> list[base.StreamEvent]:
        index = self.blocks[output] = len(self.blocks)
        self.kinds[output] = item.type
        if item.type == "message":
            return [base.TextStarted(index=index)]
        if item.type == "function_call":
            self.calls += 1
            return [base.ToolUseStarted(index=index, id=safe_call_id(item.call_id),
                                        name=item.name)]
        if item.type == "reasoning":
            return [base.ThinkingStarted(index=index)]
        return []

    def _delta(self, output: int, kind: str, text: str) -> list[base.StreamEvent]:
        index = self.blocks.get(output)
        if index is None or self.kinds.get(output) != kind:
            raise base.ProviderError(f"malformed stream from {self.name}: a {kind} delta for "
                                     f"output {output}", retryable=True)
        if kind == "message":
            return [base.TextDelta(index=index, text=text)]
        if kind == "function_call":
            return [base.ToolInputDelta(index=index, partial_json=text)]
        return [base.ThinkingDelta(index=index, text=text)]

    def _done(self, output: int, item: Any) -> list[base.StreamEvent]:
        index = self.blocks.get(output)
        if index is None or self.kinds.get(output) not in ("message", "function_call",
                                                           "reasoning"):
            return []
        events: list[base.StreamEvent] = []
        if item.type == "function_call" and output not in self.args_seen and item.arguments:
            events.append(base.ToolInputDelta(index=index, partial_json=item.arguments))
        if item.type == "reasoning":
            events.append(base.SignatureDelta(index=index, signature=reasoning_signature(
                item.id, getattr(item, "encrypted_content", None))))
        return [*events, base.BlockStopped(index=index)]

    def _ended(self, response: Any) -> list[base.StreamEvent]:
        self.ended = True
        details = getattr(response, "incomplete_details", None)
        reason = getattr(details, "reason", None)
        stop = INCOMPLETE.get(reason or "", "tool_use" if self.calls else "end_turn")
        usage = response.usage
        counts: dict[str, int] = {}
        if usage is not None:
            cached = getattr(usage.input_tokens_details, "cached_tokens", 0) or 0
            counts = usage_counts(usage.input_tokens, usage.output_tokens, cached)
        return [base.MessageEnded(stop_reason=stop, **counts)]
