"""Reply factories for thinking and for every stop reason (mixed into ``Reply``).

Thinking (see :mod:`tests.fake_api.thinking` for signatures)::

    Reply.thinking("Let me check the file.", "It is there.")          # thinking, then text
    Reply.thinking("I need ls.", tool_uses=[("bash", {"command": "ls"})])
    Reply.tool_use("bash", {"command": "ls"}).with_thinking("First, list.")
    Reply.text("done").with_thinking("...").with_redacted_thinking()  # + redacted block
    Reply.half_thinking("I am still thi", then="close")   # cut before the signature

A thinking block streams as ``content_block_start`` (``thinking: ""``), ``thinking_delta``
pieces of ``chunk`` characters, one ``signature_delta``, ``content_block_stop``. With
``display: "omitted"`` (the request's, or the model's default: Claude Sonnet/Opus 5.5)
no ``thinking_delta`` is sent and the block's text is empty, as the API does; the
output tokens still count the scripted text. A ``redacted_thinking`` block is one
``content_block_start`` carrying ``data``, then ``content_block_stop``. The scripted
reply is sent as written whatever the request's ``thinking`` says.

Stop reasons (``Reply.text(...)`` is ``end_turn``, tool factories are ``tool_use``):

=============================================  ==============================================
``Reply.max_tokens("cut her")``                text cut by ``max_tokens``; ``output_tokens``
                                               reports the request's ``max_tokens``
``Reply.max_tokens_in_tool_use(n, json)``      a tool call whose input was cut: its
                                               ``input_json_delta`` pieces end mid-JSON,
                                               the block stops, ``stop_reason: max_tokens``
``Reply.stop_sequence("a b", "###")``          ``stop_sequence`` set to the sequence
``Reply.pause_turn("Searching...")``           a ``server_tool_use`` (web_search) left open,
                                               ``stop_reason: pause_turn``
``Reply.refusal("I can't", category="cyber")`` ``stop_details: {"type": "refusal", ...}``
``Reply.context_window_exceeded("long...")``   ``model_context_window_exceeded``
=============================================  ==============================================

``pause_turn`` continuation, as documented: the client sends the paused assistant content
back as-is, as the final message (``[..., user, assistant(paused content)]``), and the
fake answers it with the next queued reply. A final assistant message is accepted only
when it is exactly the content of a ``pause_turn`` reply this server sent (or with
``allow_assistant_last=True``).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Iterable

from .ids import new_server_tool_use_id, new_tool_use_id

__all__ = ["StopReplies"]

_THINKING = ("thinking", "redacted_thinking")


def _calls(calls: Iterable[tuple] | None) -> list[dict]:
    out = []
    for call in calls or ():
        tid = call[2] if len(call) > 2 and call[2] else new_tool_use_id()
        out.append({"type": "tool_use", "id": tid, "name": call[0], "input": call[1]})
    return out


class StopReplies:
    """Factories that ``Reply`` inherits (``cls`` is ``Reply``)."""

    blocks: list[dict]

    # ---- thinking ----------------------------------------------------------------

    @classmethod
    def thinking(cls, thinking: str, text: str | None = None, *,
                 tool_uses: Iterable[tuple] | None = None, redacted: int = 0,
                 chunk: int = 5, json_chunk: int = 8, delay_between_events: float = 0.0) -> Any:
        """A thinking block, ``redacted`` redacted_thinking blocks, then ``text`` and/or tool
        calls ``[(name, input), (name, input, id)]`` (``stop_reason`` follows)."""
        blocks: list[dict] = [{"type": "thinking", "thinking": thinking}]
        blocks += [{"type": "redacted_thinking"} for _ in range(redacted)]
        if text:
            blocks.append({"type": "text", "text": text})
        calls = _calls(tool_uses)
        return cls(blocks=blocks + calls, stop_reason="tool_use" if calls else "end_turn",
                   chunk=chunk, json_chunk=json_chunk, delay_between_events=delay_between_events)

    def _with_leading(self, block: dict) -> Any:
        blocks = copy.deepcopy(self.blocks)
        at = next((i for i, b in enumerate(blocks) if b.get("type") not in _THINKING), len(blocks))
        blocks.insert(at, block)
        return replace(self, blocks=blocks)  # type: ignore[type-var]

    def with_thinking(self, thinking: str) -> Any:
        """A copy with a thinking block added after the reply's leading thinking blocks."""
        return self._with_leading({"type": "thinking", "thinking": thinking})

    def with_redacted_thinking(self) -> Any:
        """A copy with a redacted_thinking block added after its leading thinking blocks."""
        return self._with_leading({"type": "redacted_thinking"})

    @classmethod
    def half_thinking(cls, thinking: str, *, seconds: float = 30.0, then: str = "close",
                      error_type: str = "overloaded_error", chunk: int = 5,
                      delay_between_events: float = 0.0) -> Any:
        """Stream ``thinking`` as thinking_delta pieces and stop before its signature.

        ``then``: ``"close"`` (stall, then drop the connection after ``seconds`` or when
        the client leaves), ``"finish"`` (stall, then send the signature, close the block
        and end the message) or ``"error"`` (an SSE ``error`` event of ``error_type``).
        """
        if then not in ("close", "finish", "error"):
            raise ValueError("then must be 'close', 'finish' or 'error'")
        partial = {"type": "thinking", "thinking": thinking}
        if then == "error":
            reply = cls.stream_error(error_type=error_type, chunk=chunk)  # type: ignore[attr-defined]
            reply.partial = partial
            return reply
        return cls(partial=partial, end="stall", stall_seconds=seconds, stall_then=then,
                   chunk=chunk, delay_between_events=delay_between_events)

    # ---- stop reasons ------------------------------------------------------------

    @classmethod
    def max_tokens(cls, text: str, *, chunk: int = 5) -> Any:
        """Text cut by ``max_tokens``: ``stop_reason: "max_tokens"``, ``output_tokens`` equal
        to the request's ``max_tokens`` (unless ``output_tokens`` is set on the reply)."""
        return cls(blocks=[{"type": "text", "text": text}] if text else [],
                   stop_reason="max_tokens", chunk=chunk)

    @classmethod
    def max_tokens_in_tool_use(cls, name: str, partial_json: str, *,
                               text_before: str | None = None, id: str | None = None,
                               json_chunk: int = 8) -> Any:
        """A tool call cut by ``max_tokens`` inside its input: the block's input JSON is
        incomplete (the SDK parses it partially; non-streaming gets the partial parse)."""
        blocks = [{"type": "text", "text": text_before}] if text_before else []
        blocks.append({"type": "tool_use", "id": id or new_tool_use_id(), "name": name,
                       "partial_json": partial_json})
        return cls(blocks=blocks, stop_reason="max_tokens", json_chunk=json_chunk)

    @classmethod
    def stop_sequence(cls, text: str, sequence: str, *, chunk: int = 5) -> Any:
        """Text that stopped at one of the request's ``stop_sequences`` (not included)."""
        return cls(blocks=[{"type": "text", "text": text}] if text else [],
                   stop_reason="stop_sequence", matched_stop_sequence=sequence, chunk=chunk)

    @classmethod
    def pause_turn(cls, text: str | None = None, *, tool: str = "web_search",
                   input: dict | None = None, chunk: int = 5) -> Any:
        """A long turn paused by the server: optional text, then a ``server_tool_use``
        block (``tool`` with ``input``) without its result; ``stop_reason: pause_turn``."""
        blocks: list[dict] = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "server_tool_use", "id": new_server_tool_use_id(), "name": tool,
                       "input": input if input is not None else {"query": "latest news"}})
        return cls(blocks=blocks, stop_reason="pause_turn", chunk=chunk)

    @classmethod
    def refusal(cls, text: str = "", *, category: str | None = None,
                explanation: str | None = None, chunk: int = 5) -> Any:
        """A refusal: optional text streamed before it, ``stop_reason: "refusal"`` and
        ``stop_details: {"type": "refusal", "category", "explanation"}``."""
        return cls(blocks=[{"type": "text", "text": text}] if text else [],
                   stop_reason="refusal", chunk=chunk,
                   stop_details={"type": "refusal", "category": category,
                                 "explanation": explanation})

    @classmethod
    def context_window_exceeded(cls, text: str, *, chunk: int = 5) -> Any:
        """Output that ran into the model's context window:
        ``stop_reason: "model_context_window_exceeded"`` (Claude 4.5 and newer)."""
        return cls(blocks=[{"type": "text", "text": text}] if text else [],
                   stop_reason="model_context_window_exceeded", chunk=chunk)
