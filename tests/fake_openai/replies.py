"""What the fake OpenAI server answers: scripted replies, and their chunks.

A :class:`Reply` is one model answer (or one failure) for either API: text, reasoning,
tool calls, how it ends, and how it misbehaves (a stall before or inside the stream, a
malformed chunk, a cut stream, an error status with its headers). The Chat
Completions chunks are checked against the SDK's own ``ChatCompletionChunk`` before
they go out, so the fake never sends what the real API could not.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from openai.types.chat import ChatCompletionChunk


@dataclass
class Call:
    name: str
    arguments: str  # JSON text, sent as it is (an invalid one is a test of its own)
    id: str = field(default_factory=lambda: "call_" + secrets.token_hex(12))


@dataclass
class Reply:
    text: str = ""
    reasoning: str = ""  # chat: reasoning_content; responses: a reasoning item's summary
    calls: list[Call] = field(default_factory=list)
    chunk: int = 8  # characters per delta
    finish: str | None = None  # None: tool_calls when there are calls, else stop
    stall_before: float = 0.0  # seconds before the response's headers
    stall_after: tuple[int, float] | None = None  # (deltas sent, seconds) then a stall
    malformed: bool = False  # one chunk that is not JSON
    cut: bool = False  # the stream ends without its finish
    status: int | None = None  # an error answer instead of a stream
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    output_tokens: int | None = None

    def output_estimate(self) -> int:
        """Output tokens: a quarter of what the model wrote (text, reasoning, arguments)."""
        if self.output_tokens is not None:
            return self.output_tokens
        written = len(self.text) + len(self.reasoning) + sum(len(c.arguments) for c in self.calls)
        return max(1, written // 4)

    @classmethod
    def failure(cls, status: int, message: str, *, code: str | None = None,
                headers: dict[str, str] | None = None, kind: str = "invalid_request_error",
                ) -> Reply:
        return cls(status=status, headers=headers or {},
                   error={"message": message, "type": kind, "param": None, "code": code})

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any] | str, text: str = "") -> Reply:
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(text=text, calls=[Call(name, args)])


def pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), max(1, size))]


class ChatChunks:
    """The chunks of one reply, as the Chat Completions API streams them."""

    def __init__(self, reply: Reply, model: str, *, reasoning_field: str = "reasoning_content",
                 ) -> None:
        self.reply = reply
        self.model = model
        self.id = "chatcmpl-" + secrets.token_hex(12)
        self.created = int(time.time())
        self.reasoning_field = reasoning_field

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        chunk = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                 "model": self.model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        ChatCompletionChunk.model_validate(chunk)  # the SDK's own type: never a wrong shape
        return chunk

    def deltas(self) -> list[dict[str, Any]]:
        reply = self.reply
        out = [self._chunk({"role": "assistant", "content": ""})]
        for piece in pieces(reply.reasoning, reply.chunk):
            out.append(self._chunk({self.reasoning_field: piece}))
        for piece in pieces(reply.text, reply.chunk):
            out.append(self._chunk({"content": piece}))
        for number, call in enumerate(reply.calls):
            out.append(self._chunk({"tool_calls": [{
                "index": number, "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": ""}}]}))
            for piece in pieces(call.arguments, reply.chunk):
                out.append(self._chunk({"tool_calls": [{
                    "index": number, "function": {"arguments": piece}}]}))
        return out

    def finish(self) -> dict[str, Any]:
        reason = self.reply.finish or ("tool_calls" if self.reply.calls else "stop")
        return self._chunk({}, reason)

    def usage(self, prompt: int, cached: int, output: int) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model, "choices": [],
                "usage": {"prompt_tokens": prompt, "completion_tokens": output,
                          "total_tokens": prompt + output,
                          "prompt_tokens_details": {"cached_tokens": cached},
                          "completion_tokens_details": {"reasoning_tokens": 0}}}
