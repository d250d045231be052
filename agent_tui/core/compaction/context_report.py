"""``/context``: what fills the model's window, part by part.

The parts are estimated from what the next request would send: text at about 4
characters a token, an image as the API counts it (from its pixel size, not its
base64 length: ``image_limits.py``); ``used`` is the API's own count from the last
request when there was one.
"""

from __future__ import annotations

from typing import Any

from agent_tui.core.compaction.compaction import estimate_tokens
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.history.history import SUMMARY_HEADER, build_view
from agent_tui.core.history.image_budget import block_image_tokens
from agent_tui.core.memory.memory import MemoryFile
from agent_tui.core.memory.prompt import memory_section
from agent_tui.protocol import ContextItem, ContextReport


def _block_tokens(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "image":
        return block_image_tokens(block)
    inner = block.get("content")
    if kind == "tool_result" and isinstance(inner, list):
        images = [b for b in inner if b.get("type") == "image"]
        if images:
            rest = dict(block, content=[b for b in inner if b.get("type") != "image"])
            return estimate_tokens(rest) + sum(block_image_tokens(b) for b in images)
    return estimate_tokens(block)


def _split_messages(messages: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(conversation, tool output, summary) tokens of a model view."""
    talk = output = summary = 0
    for message in messages:
        for block in message["content"]:
            size = _block_tokens(block)
            if block.get("type") == "tool_result":
                output += size
            elif block.get("type") == "text" and block["text"].startswith(SUMMARY_HEADER):
                summary += size
            else:
                talk += size
    return talk, output, summary


def context_report(
    deps: SessionDeps, memory: list[MemoryFile], notes: list[str] | None = None
) -> ContextReport:
    cfg = deps.config
    view = build_view(deps.journal.records, cfg.model)
    talk, output, summary = _split_messages(view.messages)
    mem = estimate_tokens(memory_section(memory)) if memory else 0
    items = [
        ContextItem(label="system prompt", tokens=max(0, estimate_tokens(cfg.system) - mem)),
        ContextItem(label="memory (AGENTS.md, CLAUDE.md)", tokens=mem),
        ContextItem(label="tools", tokens=estimate_tokens(deps.tools.specs())),
        ContextItem(label="messages", tokens=talk),
        ContextItem(label="tool output", tokens=output),
    ]
    if summary:
        items.append(ContextItem(label="compaction summary", tokens=summary))
    last = deps.usage.last
    return ContextReport(
        model=cfg.model,
        window=deps.limits.window(cfg.model),
        used=last.context_tokens if last is not None else sum(i.tokens for i in items),
        measured=last is not None,
        items=items,
        notes=[*(notes or []), f"output style: {cfg.output_style or 'Default'}"],
    )
