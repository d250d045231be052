"""The API's rules for a message list, checked before every request.

:func:`check_model_view` names the offending message index: a violation is a bug
report, never a request the API rejects.
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]

THINKING_TYPES = ("thinking", "redacted_thinking")
# Server tools' blocks: run by the API, sent back verbatim (a paused turn needs them).
SERVER_TYPES = ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                "code_execution_tool_result", "bash_code_execution_tool_result",
                "text_editor_code_execution_tool_result", "tool_search_tool_result")


class ModelViewError(AssertionError):
    """The model view breaks an API rule: a bug in the core, never sent."""


def check_model_view(messages: list[Message]) -> None:
    """Raise :class:`ModelViewError` naming the offending message index."""
    if not messages:
        raise ModelViewError("messages: at least one message is required")
    if messages[0]["role"] != "user":
        raise ModelViewError("messages.0: the first message must use the user role")
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        role, content = msg.get("role"), msg.get("content")
        if role not in ("user", "assistant"):
            raise ModelViewError(f"messages.{i}: unknown role {role!r}")
        if i and messages[i - 1]["role"] == role:
            raise ModelViewError(f"messages.{i}: roles must alternate")
        if not isinstance(content, list) or not content:
            raise ModelViewError(f"messages.{i}: content must be a non-empty list")
        expected: list[str] = []
        if i and messages[i - 1]["role"] == "assistant":
            expected = [b["id"] for b in messages[i - 1]["content"] if b["type"] == "tool_use"]
        got: list[str] = []
        text_seen = False
        for j, block in enumerate(content):
            kind = block.get("type")
            if kind == "text":
                if not block.get("text", "").strip():
                    raise ModelViewError(f"messages.{i}.content.{j}: empty text block")
                text_seen = True
            elif kind == "tool_use":
                if role != "assistant":
                    raise ModelViewError(f"messages.{i}.content.{j}: tool_use in a user message")
                if block["id"] in seen_ids:
                    raise ModelViewError(f"messages.{i}.content.{j}: duplicate tool_use id")
                if not isinstance(block.get("input"), dict):
                    raise ModelViewError(f"messages.{i}.content.{j}: input must be an object")
                seen_ids.add(block["id"])
            elif kind in THINKING_TYPES:
                if role != "assistant":
                    raise ModelViewError(f"messages.{i}.content.{j}: {kind} in a user message")
                if kind == "thinking" and not block.get("signature"):
                    raise ModelViewError(f"messages.{i}.content.{j}: thinking without a signature")
            elif kind in SERVER_TYPES:
                if role != "assistant":
                    raise ModelViewError(f"messages.{i}.content.{j}: {kind} in a user message")
            elif kind == "image":
                if role != "user":
                    raise ModelViewError(f"messages.{i}.content.{j}: image from assistant")
            elif kind == "tool_result":
                if role != "user":
                    raise ModelViewError(f"messages.{i}.content.{j}: tool_result from assistant")
                if text_seen:
                    raise ModelViewError(f"messages.{i}.content.{j}: tool_result after text")
                got.append(block["tool_use_id"])
            else:
                raise ModelViewError(f"messages.{i}.content.{j}: unknown block type {kind!r}")
        if role == "user" and got != expected:
            missing = [x for x in expected if x not in got]
            extra = [x for x in got if x not in expected]
            raise ModelViewError(
                f"messages.{i}: tool results do not match the previous tool_use blocks "
                f"(missing {missing}, unexpected {extra}, order {got})"
            )
    last = messages[-1]
    if last["role"] == "assistant" and any(b["type"] == "tool_use" for b in last["content"]):
        raise ModelViewError(f"messages.{len(messages) - 1}: tool_use without a tool_result")
