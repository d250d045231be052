"""One model response as it streams in: text, tool calls, and how the stream ended.

The reader folds the provider's stream events into a :class:`Reply`, tells each
tool call's birth (``streaming``) and readiness (``queued``, once its arguments are
complete and valid), and records the response in the journal. A call whose
arguments never completed never runs and never reaches the model view.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, assert_never

from pydantic import BaseModel, PrivateAttr

from agent_tui.cancel import CancelScope
from agent_tui.core.journal.records import AssistantMessageRecord
from agent_tui.protocol import TextDelta, ThinkingDelta, ToolState
from agent_tui.core.calls.tool import InvalidInput
from agent_tui.core.turn.turn_log import ToolCall, TurnLog
from agent_tui.providers import base as model


class StopReason(StrEnum):
    """The API's stop reasons (``message_delta.delta.stop_reason``)."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    PAUSE_TURN = "pause_turn"
    REFUSAL = "refusal"
    CONTEXT_WINDOW_EXCEEDED = "model_context_window_exceeded"


class Reply(BaseModel):
    """What one model response produced, complete or not."""

    blocks: dict[int, dict[str, Any]] = {}
    calls: dict[int, ToolCall] = {}
    # tool_use blocks a garbled stream spoiled (an id repeated, a block started again):
    # never run, never shown to the model
    dropped: list[dict[str, Any]] = []
    stop_reason: str | None = None
    ended: str = "end_turn"
    error: Any = None
    usage: model.UsageCounts | None = None  # None until message_start arrived
    # Text and thinking deltas not yet added to their block, by the block's id: adding
    # each delta to the block's string would copy all the text so far, for every delta
    # (a long answer streamed fast would cost the core more and more). Joined when
    # the reply is recorded.
    _pending: dict[int, tuple[dict[str, Any], str, list[str]]] = PrivateAttr(default_factory=dict)

    @property
    def empty(self) -> bool:
        """Nothing was shown to the user (a retry cannot take shown text back)."""
        return not self.calls and not any(
            b.get("text") or b.get("thinking") or b.get("data") for b in self.blocks.values()
        ) and not any(any(parts) for _, _, parts in self._pending.values())

    def add_delta(self, block: dict[str, Any], key: str, text: str) -> None:
        """``text`` goes at the end of ``block[key]`` (joined by :meth:`join_deltas`)."""
        pending = self._pending.get(id(block))
        if pending is None or pending[0] is not block:
            pending = self._pending[id(block)] = (block, key, [])
        pending[2].append(text)

    def join_deltas(self) -> None:
        for block, key, parts in self._pending.values():
            block[key] += "".join(parts)
        self._pending.clear()

    def complete_calls(self) -> list[ToolCall]:
        return [c for i, c in sorted(self.calls.items()) if c.input is not None]


def _complete_other(block: dict[str, Any]) -> None:
    partial = block.pop("_partial")
    if partial.strip():
        try:
            block["input"] = json.loads(partial)
        except (json.JSONDecodeError, RecursionError):
            block["_incomplete"] = partial


class ReplyReader:
    """Folds stream events into a Reply, telling each call's state through the log."""

    def __init__(self, log: TurnLog, scope: CancelScope) -> None:
        self.log = log
        self.scope = scope

    def on_event(self, reply: Reply, event: model.StreamEvent) -> None:
        match event:
            case model.MessageStarted():
                self._message_started(reply, event)
            case model.TextStarted():
                self._text_started(reply, event)
            case model.TextDelta():
                self._text_delta(reply, event)
            case model.CitationDelta():
                self._citation_delta(reply, event)
            case model.ThinkingStarted():
                self._thinking_started(reply, event)
            case model.ThinkingDelta():
                self._thinking_delta(reply, event)
            case model.SignatureDelta():
                self._signature_delta(reply, event)
            case model.RedactedThinking():
                self._redacted_thinking(reply, event)
            case model.OtherBlockStarted():
                self._other_block_started(reply, event)
            case model.ToolUseStarted():
                self._tool_use_started(reply, event)
            case model.ToolInputDelta():
                self._tool_input_delta(reply, event)
            case model.BlockStopped():
                self._block_stopped(reply, event)
            case model.MessageEnded():
                self._message_ended(reply, event)
            case _:
                assert_never(event)

    # -- one handler per stream event --------------------------------------------------

    def _message_started(self, reply: Reply, event: model.MessageStarted) -> None:
        reply.usage = event.usage.model_copy()

    def _text_started(self, reply: Reply, event: model.TextStarted) -> None:
        reply.blocks[event.index] = {"type": "text", "text": ""}

    def _text_delta(self, reply: Reply, event: model.TextDelta) -> None:
        block = reply.blocks.setdefault(event.index, {"type": "text", "text": ""})
        if block.get("type") != "text":
            return  # a delta for another kind of block (a garbled stream): dropped
        reply.add_delta(block, "text", event.text)
        self.log.emit(TextDelta(turn_id=self.log.turn_id, text=event.text))

    def _citation_delta(self, reply: Reply, event: model.CitationDelta) -> None:
        block = reply.blocks.get(event.index)
        if block is not None and block.get("type") == "text":
            block.setdefault("citations", []).append(event.citation)

    def _thinking_started(self, reply: Reply, event: model.ThinkingStarted) -> None:
        reply.blocks[event.index] = {"type": "thinking", "thinking": "", "signature": ""}

    def _thinking_delta(self, reply: Reply, event: model.ThinkingDelta) -> None:
        block = reply.blocks.setdefault(
            event.index, {"type": "thinking", "thinking": "", "signature": ""}
        )
        if block.get("type") != "thinking":
            return  # a delta for another kind of block (a garbled stream): dropped
        reply.add_delta(block, "thinking", event.text)
        self.log.emit(ThinkingDelta(turn_id=self.log.turn_id, text=event.text))

    def _signature_delta(self, reply: Reply, event: model.SignatureDelta) -> None:
        block = reply.blocks.get(event.index)
        if block is not None and block.get("type") == "thinking":
            block["signature"] += event.signature

    def _redacted_thinking(self, reply: Reply, event: model.RedactedThinking) -> None:
        reply.blocks[event.index] = {"type": "redacted_thinking", "data": event.data}

    def _other_block_started(self, reply: Reply, event: model.OtherBlockStarted) -> None:
        reply.blocks[event.index] = dict(event.block, _partial="")

    def _tool_use_started(self, reply: Reply, event: model.ToolUseStarted) -> None:
        # A garbled stream may start a block again: the call it cuts into never runs.
        spoiled = reply.calls.get(event.index)
        if spoiled is not None and spoiled.state is ToolState.STREAMING:
            self.log.set_tool_state(spoiled, ToolState.FAILED,
                                    detail="the stream started its block again")
        if event.id in self.log.calls or self.log.deps.journal.has_tool_use(event.id):
            # Two calls under one id cannot both be answered.
            reply.dropped.append({"id": event.id, "name": event.name, "partial": "",
                                   "why": "its id repeats an earlier call's"})
            return
        if spoiled is not None:
            reply.dropped.append({"id": spoiled.id, "name": spoiled.name,
                                   "partial": spoiled.input_json,
                                   "why": "another block started at its place"})
        call = ToolCall(id=event.id, name=event.name, index=event.index)
        reply.calls[event.index] = call
        self.log.calls[call.id] = call
        self.log.set_tool_state(call, ToolState.STREAMING)

    def _tool_input_delta(self, reply: Reply, event: model.ToolInputDelta) -> None:
        call = reply.calls.get(event.index)
        if call is not None:
            if call.state is ToolState.STREAMING:
                call.input_json += event.partial_json
        elif "_partial" in reply.blocks.get(event.index, {}):
            reply.blocks[event.index]["_partial"] += event.partial_json

    def _block_stopped(self, reply: Reply, event: model.BlockStopped) -> None:
        call = reply.calls.get(event.index)
        if call is not None and call.state is ToolState.STREAMING:
            self._complete_call(call)
        other = reply.blocks.get(event.index)
        if other is not None and "_partial" in other:
            _complete_other(other)

    def _message_ended(self, reply: Reply, event: model.MessageEnded) -> None:
        reply.stop_reason = event.stop_reason
        usage = reply.usage or model.UsageCounts()
        # message_delta's counts are cumulative; those it leaves out stand.
        update = {k: v for k, v in event.model_dump().items()
                  if k in model.UsageCounts.model_fields and v is not None}
        reply.usage = usage.model_copy(update=update)

    def _complete_call(self, call: ToolCall) -> None:
        """All arguments have arrived: parse and validate them, then queue the call."""
        try:
            raw = json.loads(call.input_json) if call.input_json.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return  # stays incomplete; settle() drops it
        if not isinstance(raw, dict):
            return
        call.input = raw
        tool = self.log.deps.tools.get(call.name)
        if tool is None:
            call.invalid = f"unknown tool {call.name!r}"
        else:
            call.tool = tool
            try:
                call.args = tool.parse(raw)
            except InvalidInput as exc:
                call.invalid = str(exc)
        self.log.set_tool_state(call, ToolState.QUEUED)

    def settle(self, reply: Reply) -> None:
        """Calls whose arguments never completed never run and never reach the model."""
        for call in reply.calls.values():
            if call.state is ToolState.STREAMING:
                if self.scope.cancelled:
                    self.log.set_tool_state(
                        call, ToolState.CANCELLED_BEFORE_START, detail="arguments incomplete"
                    )
                else:
                    self.log.set_tool_state(
                        call,
                        ToolState.FAILED,
                        detail=f"arguments incomplete (stream ended: {reply.ended})",
                    )

    def record(self, reply: Reply, model_id: str | None = None) -> None:
        reply.join_deltas()
        blocks: list[dict[str, Any]] = []
        incomplete: list[dict[str, Any]] = []
        cut_thinking: list[dict[str, Any]] = []
        for index in sorted(set(reply.blocks) | set(reply.calls)):
            if index in reply.blocks:  # a garbled stream may put text and a call at one index
                block = dict(reply.blocks[index])
                if block["type"] == "thinking" and not block.get("signature"):
                    cut_thinking.append(block)  # never sent back: it has no signature
                elif "_partial" in block or "_incomplete" in block:
                    incomplete.append({"type": block["type"], "partial": block.get("_partial")
                                       or block.get("_incomplete")})
                else:
                    blocks.append(block)
            call = reply.calls.get(index)
            if call is None:
                continue
            if call.input is None:
                incomplete.append({"id": call.id, "name": call.name, "partial": call.input_json})
            else:
                blocks.append(
                    {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
                )
        self.log.record(
            AssistantMessageRecord(
                turn_id=self.log.turn_id,
                blocks=blocks,
                ended=reply.ended,
                incomplete_tool_uses=incomplete + reply.dropped,
                incomplete_thinking=cut_thinking,
                model=model_id,
            ),
            durable=reply.ended == "cancelled",
        )
