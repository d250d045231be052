"""The model view (Messages API shape) as a Chat Completions request.

- The system prompt is the first message (``system``).
- An assistant message's text is its ``content``; its ``tool_use`` blocks are its
  ``tool_calls`` (arguments as JSON text).
- A ``tool_result`` is a ``tool`` message right after the assistant message, one per
  ``tool_call_id`` (the API refuses a call without its answer, and an answer without
  its call); the text of the same user message follows as a ``user`` message.
- Images go as ``image_url`` data URLs when the model takes images, else a line
  says one was left out. An image inside a tool result follows in a ``user`` message
  (a ``tool`` message holds text only).
- Thinking: a ``reasoning_content`` this server sent (its marker signature) goes back
  on the assistant messages of the current tool loop, as DeepSeek asks; older ones, and
  any other model's thinking, stay in the journal only. Blocks of Anthropic's server
  tools (web search) are told as text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agent_tui.providers import base
from agent_tui.providers.openai_wire.common import CHAT_REASONING


def chat_body(request: base.ModelRequest, *, model: str, images: bool,
              reasoning_back: bool, max_tokens_param: str = "max_tokens") -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    system = system_text(request.system)
    if system:
        messages.append({"role": "system", "content": system})
    loop_start = _current_loop_start(request.messages)
    for number, message in enumerate(request.messages):
        if message["role"] == "assistant":
            keep = reasoning_back and number >= loop_start
            messages.append(_assistant(message["content"], keep_reasoning=keep))
        else:
            messages.extend(_user(message["content"], images=images))
    body: dict[str, Any] = {
        "model": model, "messages": messages, "stream": True,
        "stream_options": {"include_usage": True},
        max_tokens_param: request.max_tokens,
    }
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools if "input_schema" in t]
    return body


def system_text(system: str | list[dict[str, Any]]) -> str:
    if isinstance(system, str):
        return system
    return "\n\n".join(b.get("text", "") for b in system if b.get("type") == "text")


def _current_loop_start(messages: list[dict[str, Any]]) -> int:
    """The index of the newest user message that is not only tool results."""
    for number in range(len(messages) - 1, -1, -1):
        message = messages[number]
        content = message["content"]
        if message["role"] == "user" and (isinstance(content, str) or any(
                b.get("type") != "tool_result" for b in content)):
            return number
    return 0


def _tool(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": spec["name"], "description": spec.get("description", ""),
        "parameters": spec["input_schema"]}}


def _assistant(content: str | list[dict[str, Any]], *, keep_reasoning: bool) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            calls.append({"id": block["id"], "type": "function", "function": {
                "name": block["name"], "arguments": json.dumps(block.get("input") or {})}})
        elif kind == "thinking" and block.get("signature") == CHAT_REASONING:
            reasoning.append(block.get("thinking", ""))
        elif kind in ("server_tool_use", "web_search_tool_result"):
            texts.append(f"[{kind}: {json.dumps(block.get('input') or block.get('content'))}]")
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        out["tool_calls"] = calls
    if keep_reasoning and reasoning:
        out["reasoning_content"] = "".join(reasoning)
    return out


def _user(content: str | list[dict[str, Any]], *, images: bool) -> list[dict[str, Any]]:
    return user_items(content, images=images, part=_part, answer=lambda call_id, text: {
        "role": "tool", "tool_call_id": call_id, "content": text})


def user_items(content: str | list[dict[str, Any]], *, images: bool,
               part: Callable[..., list[dict[str, Any]]],
               answer: Callable[[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """A user message: each tool result as ``answer`` words it (first: the API wants
    the answers right after the calls), then the rest as one user message of parts."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    answers: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "tool_result":
            text, pictures = result_parts(block.get("content"), part, images=images)
            if block.get("is_error"):
                text = f"Error: {text}"
            answers.append(answer(block["tool_use_id"], text))
            parts.extend(pictures)
        else:
            parts.extend(part(block, images=images))
    if parts:
        answers.append({"role": "user", "content": parts})
    return answers


def result_parts(content: Any, part: Callable[..., list[dict[str, Any]]], *, images: bool,
                 ) -> tuple[str, list[dict[str, Any]]]:
    """A tool result's text, and its images as ``part`` makes them (to follow it in a
    user message: a tool's answer holds text only)."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    pictures: list[dict[str, Any]] = []
    for block in content or []:
        if block.get("type") == "text":
            texts.append(block["text"])
        else:
            pictures.extend(part(block, images=images))
            texts.append("[image attached below]" if images else "[image left out]")
    return "\n".join(texts), pictures


def _part(block: dict[str, Any], *, images: bool) -> list[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        return [{"type": "text", "text": block["text"]}]
    if kind == "image":
        source = block.get("source") or {}
        if images and source.get("type") == "base64":
            url = f"data:{source['media_type']};base64,{source['data']}"
            return [{"type": "image_url", "image_url": {"url": url}}]
        if images and source.get("type") == "url":
            return [{"type": "image_url", "image_url": {"url": source["url"]}}]
        return [{"type": "text", "text": "[an image was left out: this model takes text only]"}]
    return [{"type": "text", "text": f"[a {kind} block was left out: not sent on this API]"}]
