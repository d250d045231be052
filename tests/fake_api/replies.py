"""Scripted answers of the fake API: the :class:`Reply` value and its factories.

A ``Reply`` is what "the model" says to one valid ``POST /v1/messages``. Factories here
cover text, tool calls, stalls, cut streams and errors; the thinking blocks and the stop
reasons other than ``end_turn`` / ``tool_use`` are in :mod:`tests.fake_api.reply_stops`,
the web search tool's blocks in :mod:`tests.fake_api.web_search` (both mixed into
``Reply``, so all are ``Reply.<factory>``):

=================================  ========================================================
``Reply.text(s, chunk=5)``         text in ``text_delta`` pieces of ``chunk`` characters
``Reply.slow_text(s, delay=)``     the same with ``delay`` seconds between SSE events
``Reply.message([blocks])``        any blocks: text, tool_use, thinking, redacted_thinking,
                                   server_tool_use (ids, signatures and data filled in)
``Reply.tool_use(name, input)``    one call (``text_before=`` optional), stop ``tool_use``
``Reply.tool_uses([(n, i), ...])`` several calls in one message
``Reply.stall(after_text, s)``     stream some text, then send nothing (``then="close"`` /
                                   ``"finish"`` after ``s`` seconds, or the client leaves)
``Reply.half_tool_use(n, json)``   start a tool call, send part of its input, stall
``Reply.stream_error(...)``        SSE ``error`` event mid-stream (``overloaded_error``)
``Reply.error(status, type)``      an HTTP error with the API's error body
=================================  ========================================================

Anything a factory sets can be changed on the returned value (it is a dataclass):
``output_tokens`` / ``thinking_tokens`` override the estimated counts, ``model``
overrides the echoed model, ``headers`` adds response headers.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from .errors import DEFAULT_ERROR_MESSAGE
from .ids import new_tool_use_id
from .reply_stops import StopReplies
from .web_search import SearchReplies
from .tokens import output_tokens

__all__ = ["Reply"]


@dataclass
class Reply(StopReplies, SearchReplies):
    """One scripted answer. Build it with the class-method factories.

    ``blocks`` are complete content blocks (``{"type": "text", "text": ...}``,
    ``{"type": "tool_use", "id", "name", "input"}``, ``{"type": "thinking", "thinking":
    ...}``, ``{"type": "redacted_thinking"}``, ``{"type": "server_tool_use", ...}``; a
    tool_use with ``partial_json`` instead of ``input`` is a call cut by ``max_tokens``).
    ``partial`` is an optional last block that is left unfinished (text, tool_use with
    ``partial_json``, or thinking without its signature) before the ``end`` behaviour
    kicks in:

    * ``"complete"``   - normal message end (``message_delta`` + ``message_stop``);
    * ``"stall"``      - stop sending bytes until the client disconnects, the server
      stops, or ``stall_seconds`` pass; then ``stall_then`` = ``"close"`` (drop the
      connection without finishing the chunked body) or ``"finish"`` (finish the
      message normally, the partial text or thinking becoming a complete block);
    * ``"error_event"`` - send an SSE ``event: error`` (mid-stream error) and end the
      stream. Non-streaming requests get the equivalent HTTP error instead.
    """

    kind: str = "message"  # "message" | "error"
    blocks: list[dict] = field(default_factory=list)
    partial: dict | None = None
    end: str = "complete"
    stop_reason: str | None = "end_turn"
    chunk: int = 5
    json_chunk: int = 8
    delay_between_events: float = 0.0
    stall_seconds: float = 30.0
    stall_then: str = "close"
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    model: str | None = None  # default: echo the request's model
    output_tokens: int | None = None
    matched_stop_sequence: str | None = None  # sent as stop_sequence (Reply.stop_sequence)
    stop_details: dict | None = None
    thinking_tokens: int | None = None

    # ---- factories ---------------------------------------------------------------

    @classmethod
    def text(
        cls,
        text: str,
        chunk: int = 5,
        *,
        delay_between_events: float = 0.0,
        stop_reason: str = "end_turn",
        model: str | None = None,
    ) -> "Reply":
        """A plain text answer streamed as ``text_delta`` pieces of ``chunk`` chars."""
        return cls(
            blocks=[{"type": "text", "text": text}],
            chunk=chunk,
            delay_between_events=delay_between_events,
            stop_reason=stop_reason,
            model=model,
        )

    @classmethod
    def slow_text(cls, text: str, chunk: int = 5, delay: float = 0.05, **kw: Any) -> "Reply":
        """``Reply.text`` with ``delay`` seconds between SSE events."""
        return cls.text(text, chunk, delay_between_events=delay, **kw)

    @classmethod
    def message(
        cls,
        content: Sequence[dict],
        *,
        stop_reason: str = "end_turn",
        chunk: int = 5,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Any sequence of blocks (a missing tool_use ``id`` is filled in).

        A ``thinking`` block gets its ``signature`` and a ``redacted_thinking`` block its
        ``data`` from the server when sent (give them explicitly to send made-up ones).
        """
        blocks = []
        for b in content:
            b = dict(b)
            if b.get("type") == "tool_use":
                b.setdefault("id", new_tool_use_id())
                if b["id"] is None:
                    b["id"] = new_tool_use_id()
            blocks.append(b)
        return cls(
            blocks=blocks,
            stop_reason=stop_reason,
            chunk=chunk,
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def tool_use(
        cls,
        name: str,
        input: dict,
        *,
        text_before: str | None = None,
        id: str | None = None,
        chunk: int = 5,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """One tool_use block (optionally after a text block); ``stop_reason`` tool_use."""
        return cls.tool_uses(
            [(name, input, id)],
            text_before=text_before,
            chunk=chunk,
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def tool_uses(
        cls,
        calls: Iterable[tuple],
        *,
        text_before: str | None = None,
        chunk: int = 5,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Several tool_use blocks in one message: ``[(name, input), (name, input, id), ...]``."""
        blocks: list[dict] = []
        if text_before:
            blocks.append({"type": "text", "text": text_before})
        for call in calls:
            name, inp = call[0], call[1]
            tid = call[2] if len(call) > 2 and call[2] else new_tool_use_id()
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        return cls(
            blocks=blocks,
            stop_reason="tool_use",
            chunk=chunk,
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def stall(
        cls,
        after_text: str = "",
        seconds: float = 30.0,
        *,
        then: str = "close",
        chunk: int = 5,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Stream ``after_text`` (if any), then send nothing until the client disconnects
        or ``seconds`` pass; then ``then="close"`` drops the connection mid-body and
        ``then="finish"`` completes the message normally."""
        if then not in ("close", "finish"):
            raise ValueError("then must be 'close' or 'finish'")
        return cls(
            partial={"type": "text", "text": after_text} if after_text else None,
            end="stall",
            stall_seconds=seconds,
            stall_then=then,
            chunk=chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def half_tool_use(
        cls,
        name: str,
        partial_json: str,
        *,
        text_before: str | None = None,
        id: str | None = None,
        seconds: float = 30.0,
        json_chunk: int = 8,
        delay_between_events: float = 0.0,
    ) -> "Reply":
        """Start a tool_use block, send ``partial_json`` as input_json_delta pieces, then
        stall until the client disconnects (or ``seconds`` pass: connection dropped)."""
        blocks = [{"type": "text", "text": text_before}] if text_before else []
        return cls(
            blocks=blocks,
            partial={
                "type": "tool_use",
                "id": id or new_tool_use_id(),
                "name": name,
                "partial_json": partial_json,
            },
            end="stall",
            stall_seconds=seconds,
            stall_then="close",
            stop_reason="tool_use",
            json_chunk=json_chunk,
            delay_between_events=delay_between_events,
        )

    @classmethod
    def stream_error(
        cls,
        after_text: str = "",
        error_type: str = "overloaded_error",
        message: str | None = None,
        *,
        chunk: int = 5,
    ) -> "Reply":
        """Start streaming (optionally some text), then send an SSE ``error`` event, like
        the real API does when it gets overloaded mid-stream. The SDK raises an
        ``APIStatusError`` (status is the HTTP 200 of the stream) from the iteration."""
        return cls(
            partial={"type": "text", "text": after_text} if after_text else None,
            end="error_event",
            error_type=error_type,
            error_message=message or DEFAULT_ERROR_MESSAGE.get(error_type, error_type),
            chunk=chunk,
        )

    @classmethod
    def error(
        cls,
        status: int,
        error_type: str,
        message: str | None = None,
        *,
        retry_after: float | int | None = None,
        headers: dict[str, str] | None = None,
    ) -> "Reply":
        """An HTTP error with the Anthropic error JSON body (and ``retry-after`` header)."""
        hdrs = dict(headers or {})
        if retry_after is not None:
            hdrs["retry-after"] = str(retry_after)
        return cls(
            kind="error",
            status=status,
            error_type=error_type,
            error_message=message or DEFAULT_ERROR_MESSAGE.get(error_type, error_type),
            headers=hdrs,
        )

    # ---- helpers -----------------------------------------------------------------

    @property
    def tool_ids(self) -> list[str]:
        """Ids of the tool_use blocks of this reply (complete ones, then the partial one)."""
        ids = [b["id"] for b in self.blocks if b.get("type") == "tool_use"]
        if self.partial and self.partial.get("type") == "tool_use":
            ids.append(self.partial["id"])
        return ids

    def copy(self) -> "Reply":
        return replace(self, blocks=copy.deepcopy(self.blocks), partial=copy.deepcopy(self.partial),
                       headers=dict(self.headers))

    def _complete_blocks(self) -> list[dict]:
        """Content of the final message (for non-streaming / 'finish' replies)."""
        blocks = copy.deepcopy(self.blocks)
        if self.partial and self.partial["type"] in ("text", "thinking"):
            blocks.append(copy.deepcopy(self.partial))
        return blocks

    def _output_tokens(self, blocks: list[dict]) -> int:
        if self.output_tokens is not None:
            return self.output_tokens
        return output_tokens(blocks)[0]
