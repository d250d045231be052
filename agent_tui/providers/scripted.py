"""An offline, deterministic model that plays a script.

A script is JSON::

    {"rules": [{"match": "regex", "replies": [[block, ...], [block, ...]]}, ...],
     "default": [[block, ...]]}

where a block is ``{"text": "..."}`` or ``{"tool": "name", "input": {...}}``; a block
with ``"if_result": "regex"`` (or ``"unless_result"``) is played only when the tool
results just received match (or do not match) it. The rule is chosen by the user's
latest prompt: the last user message without tool results, or the one that follows an
interrupted turn (the core's note says so; the interrupted calls' results ride in it).
The reply is chosen by how many answers the model has given since. A steer that rode
in with tool results is acknowledged. Text and tool arguments stream in small chunks
at a visible pace (``delay`` seconds per chunk; ``AGENT_TUI_SCRIPTED_DELAY``
overrides). Tool ids are unique per provider (so per session, resumes and rewinds
included): a random tag of this provider and a counter.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import secrets
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent_tui.providers import base

CHUNK = 4
# How the core opens its note on the prompt after an interrupted turn
# (core/history/history.py ``interrupted_note``): that message starts a new turn.
INTERRUPTED_NOTE = "[The user interrupted the previous turn"


class Block(BaseModel):
    text: str | None = None
    tool: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    if_result: str | None = None  # play only when the tool results match this regex
    unless_result: str | None = None  # play only when they do not

    def wanted(self, results: str) -> bool:
        if self.if_result is not None and not re.search(self.if_result, results):
            return False
        return self.unless_result is None or not re.search(self.unless_result, results)


class Rule(BaseModel):
    match: str
    replies: list[list[Block]]


class Script(BaseModel):
    rules: list[Rule] = Field(default_factory=list)
    default: list[list[Block]] = Field(
        default_factory=lambda: [[Block(text="(the script has no answer for this)")]]
    )


class ScriptError(ValueError):
    pass


def load_script(path: Path | None = None) -> Script:
    """Load a script file, or the built-in demo. Errors name the file."""
    if path is None:
        raw = resources.files("agent_tui.providers").joinpath("demo_script.json").read_text()
        where = "built-in demo script"
    else:
        where = str(path)
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptError(f"cannot read script {where}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        line = f":{exc.lineno}:{exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ScriptError(f"invalid script {where}{line}: {getattr(exc, 'msg', exc)}") from None
    except RecursionError:
        raise ScriptError(f"invalid script {where}: nested too deeply") from None
    try:
        script = Script.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ScriptError(f"invalid script {where}: {loc}: {first['msg']}") from None
    patterns = [rule.match for rule in script.rules] + [
        p for reply in [*script.default, *(r for rule in script.rules for r in rule.replies)]
        for block in reply for p in (block.if_result, block.unless_result) if p is not None
    ]
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ScriptError(f"invalid script {where}: bad pattern {pattern!r}: {exc}") from None
    return script


def _texts(content: Any) -> list[str]:
    """The text of a block's content (a string, or a list of blocks)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return []


def _starts_turn(msg: dict[str, Any]) -> bool:
    if msg["role"] != "user":
        return False
    blocks = msg["content"]
    if not any(b.get("type") == "tool_result" for b in blocks):
        return True
    return any(b.get("type") == "text" and b["text"].startswith(INTERRUPTED_NOTE) for b in blocks)


class ScriptedProvider(base.Provider):
    name = "scripted"
    default_model = "scripted"

    def __init__(self, script: Script | None = None, *, delay: float | None = None) -> None:
        self.script = script or load_script()
        env = os.environ.get("AGENT_TUI_SCRIPTED_DELAY")
        self.delay = float(env) if env else (0.02 if delay is None else delay)
        self._tag = secrets.token_hex(3)
        self._ids = itertools.count(1)

    def choose(self, messages: list[dict[str, Any]]) -> tuple[list[Block], str | None]:
        """The reply for this point of the conversation, and a steer to acknowledge."""
        prompt_at = 0
        for i, msg in enumerate(messages):
            if _starts_turn(msg):
                prompt_at = i
        texts = [b["text"] for b in messages[prompt_at]["content"] if b.get("type") == "text"]
        prompt = texts[-1] if texts else ""
        step = sum(1 for m in messages[prompt_at:] if m["role"] == "assistant")
        replies = self.script.default
        for rule in self.script.rules:
            if re.search(rule.match, prompt, re.IGNORECASE):
                replies = rule.replies
                break
        steer = None
        last = messages[-1]
        failed = [
            b for b in last["content"] if b.get("type") == "tool_result" and b.get("is_error")
        ]
        if failed and last is not messages[prompt_at]:
            # Say so rather than carry on with the script as if it had worked.
            first_line = "\n".join(_texts(failed[0].get("content"))).strip().splitlines()[:1]
            why = first_line[0] if first_line else "no reason given"
            return [Block(text=f"That tool call did not go through: {why}")], None
        if last is not messages[prompt_at]:
            steer_texts = [b["text"] for b in last["content"] if b.get("type") == "text"]
            steer = steer_texts[-1] if steer_texts else None
        if step >= len(replies):
            return [Block(text="Done.")], steer
        results = "\n".join(
            text for b in last["content"] if b.get("type") == "tool_result"
            for text in _texts(b.get("content"))
        )
        return [b for b in replies[step] if b.wanted(results)], steer

    async def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        blocks, steer = self.choose(request.messages)
        if steer:
            blocks = [Block(text=f"Noted: \"{steer}\". ")] + list(blocks)
        # Usage as the API would report it, estimated (about 4 characters a token).
        size = len(json.dumps(request.messages)) + len(json.dumps(request.system))
        yield base.MessageStarted(model=request.model, usage=base.UsageCounts(
            input_tokens=max(1, size // 4), output_tokens=1))
        has_tool = False
        for index, block in enumerate(blocks):
            if block.tool is not None:
                has_tool = True
                yield base.ToolUseStarted(
                    index=index, id=f"toolu_s{self._tag}_{next(self._ids):04d}", name=block.tool
                )
                payload = json.dumps(block.input)
                for piece in _chunks(payload, CHUNK * 4):
                    await self._pause()
                    yield base.ToolInputDelta(index=index, partial_json=piece)
            else:
                yield base.TextStarted(index=index)
                for piece in _chunks(block.text or "", CHUNK):
                    await self._pause()
                    yield base.TextDelta(index=index, text=piece)
            yield base.BlockStopped(index=index)
        out = sum(len(b.text or "") + len(json.dumps(b.input)) for b in blocks)
        yield base.MessageEnded(stop_reason="tool_use" if has_tool else "end_turn",
                                output_tokens=max(1, out // 4))

    async def model_info(self, model: str) -> base.ModelInfo | None:
        return base.ModelInfo(id=model, display_name="offline demo model",
                              max_input_tokens=200_000, max_tokens=8192)

    async def list_models(self) -> list[base.ModelInfo]:
        return [base.ModelInfo(id=self.default_model, display_name="offline demo model",
                               max_input_tokens=200_000, max_tokens=8192)]

    async def _pause(self) -> None:
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        else:
            await asyncio.sleep(0)


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
