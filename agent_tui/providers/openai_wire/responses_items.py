"""The model view (Messages API shape) as a Responses API request.

- The system prompt is ``instructions``; ``store`` is false (nothing is kept on the
  server: the conversation goes whole each time, as for every other provider), unless
  the provider runs requests in ``background`` mode, which the server must keep.
- A user message is an input message (``input_text``, ``input_image`` parts); a
  ``tool_result`` is a ``function_call_output`` for its ``call_id``.
- An assistant message is, in its order: ``reasoning`` items, an assistant message
  with its text, ``function_call`` items.
- Reasoning: a thinking block this API wrote (its signature holds the item's id and
  its ``encrypted_content``) goes back as that reasoning item, unchanged, as the API
  requires in a tool loop. Any other thinking stays in the journal only.
"""

from __future__ import annotations

import json
from typing import Any

from agent_tui.providers import base
from agent_tui.providers.openai_wire.chat_messages import system_text, user_items
from agent_tui.providers.openai_wire.common import RESPONSES_REASONING


def responses_body(request: base.ModelRequest, *, images: bool, reasoning: bool,
                   background: bool = False) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for message in request.messages:
        if message["role"] == "assistant":
            items.extend(_assistant(message["content"]))
        else:
            items.extend(_user(message["content"], images=images))
    body: dict[str, Any] = {
        "model": request.model, "input": items, "stream": True, "store": False,
        "max_output_tokens": request.max_tokens,
    }
    instructions = system_text(request.system)
    if instructions:
        body["instructions"] = instructions
    if request.tools:
        body["tools"] = [{"type": "function", "name": t["name"],
                          "description": t.get("description", ""),
                          "parameters": t["input_schema"], "strict": False}
                         for t in request.tools if "input_schema" in t]
    if background:  # kept on the server, so that a cancel can reach it there
        body.update(background=True, store=True)
    if reasoning:
        body["include"] = ["reasoning.encrypted_content"]
        body["reasoning"] = {"summary": "auto"}
    return body


def reasoning_signature(item_id: str, encrypted: str | None) -> str:
    return RESPONSES_REASONING + json.dumps({"id": item_id, "encrypted_content": encrypted})


def _assistant(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "assistant", "content": content}]
    reasoning: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            calls.append({"type": "function_call", "call_id": block["id"],
                          "name": block["name"],
                          "arguments": json.dumps(block.get("input") or {})})
        elif kind == "thinking" and str(block.get("signature", "")).startswith(
                RESPONSES_REASONING):
            reasoning.append(_reasoning_item(block))
    message = [{"role": "assistant", "content": "".join(texts)}] if texts else []
    # a reasoning item goes with what followed it; alone it is refused
    return [*reasoning, *message, *calls] if message or calls else []


def _reasoning_item(block: dict[str, Any]) -> dict[str, Any]:
    saved = json.loads(block["signature"][len(RESPONSES_REASONING):])
    text = block.get("thinking", "")
    item: dict[str, Any] = {"type": "reasoning", "id": saved["id"],
                            "summary": [{"type": "summary_text", "text": text}] if text else []}
    if saved.get("encrypted_content"):
        item["encrypted_content"] = saved["encrypted_content"]
    return item


def _user(content: str | list[dict[str, Any]], *, images: bool) -> list[dict[str, Any]]:
    return user_items(content, images=images, part=_part, answer=lambda call_id, text: {
        "type": "function_call_output", "call_id": call_id, "output": text})


def _part(block: dict[str, Any], *, images: bool) -> list[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        return [{"type": "input_text", "text": block["text"]}]
    source = block.get("source") or {}
    if kind == "image" and images and source.get("type") in ("base64", "url"):
        url = (source["url"] if source["type"] == "url"
               else f"data:{source['media_type']};base64,{source['data']}")
        return [{"type": "input_image", "image_url": url, "detail": "auto"}]
    what = "an image" if kind == "image" else f"a {kind} block"
    return [{"type": "input_text", "text": f"[{what} was left out: not sent to this model]"}]
