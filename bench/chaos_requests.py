"""What a Messages request sent, as the chaos checks read it: its tool results by
tool_use id, a result block's text, and every text block of its messages."""

from __future__ import annotations

from typing import Any


def sent_results(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of every message, by tool_use id."""
    sent = {}
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    sent[block["tool_use_id"]] = block
    return sent


def text_of(block: dict[str, Any]) -> str:
    """The text a tool_result block carries (a string, or its text blocks joined)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def texts_of(request: dict[str, Any]) -> list[str]:
    """The text of every message: string contents and text blocks."""
    texts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts
