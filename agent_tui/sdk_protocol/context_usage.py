"""The answer to ``get_context_usage``: the ``/context`` report in Claude Code's words.

Categories by Claude Code's ids (``system_prompt``, ``system_tools``, ``memory_files``,
``messages``, ``autocompact_buffer``: the room kept free for compaction, then
``free_space``), the grid ``/context`` draws, and the details Claude Code fills that
agent-tui can compute: each memory file, each MCP tool's and each kind of tool call's
share (``messageBreakdown``), the sub-agent types, the threshold of automatic
compaction and the last request's usage. The figures are the report's estimates
(about 4 characters a token), the total the API's own count once a request was made.
"""

from __future__ import annotations

from typing import Any

from agent_tui.core.compaction.compaction import estimate_tokens
from agent_tui.core.history.history import build_view
from agent_tui.core.session.session import Session
from agent_tui.core.usage.usage import COMPACT_AT
from agent_tui.protocol import ContextReport, Usage
from agent_tui.protocol.tool_names import claude_name
from agent_tui.sdk_protocol.callbacks import APP_FILE

#: Our report's parts as Claude Code's categories (id, name, color).
_CATEGORIES = {
    "system prompt": ("system_prompt", "System prompt", "promptBorder"),
    "memory (AGENTS.md, CLAUDE.md)": ("memory_files", "Memory files", "claude"),
    "tools": ("system_tools", "System tools", "inactive"),
    "messages": ("messages", "Messages", "purple_FOR_SUBAGENTS_ONLY"),
    "tool output": ("messages", "Messages", "purple_FOR_SUBAGENTS_ONLY"),
    "compaction summary": ("messages", "Messages", "purple_FOR_SUBAGENTS_ONLY"),
}
#: A memory file's scope in Claude Code's words (a sub-folder's file is the project's).
_MEMORY_TYPE = {"user": "User", "project": "Project", "local": "Local", "folder": "Project"}
#: Where a sub-agent type comes from, in Claude Code's words (the app's: flagSettings).
_AGENT_SOURCE = {"project": "projectSettings", "user": "userSettings", "plugin": "plugin"}


def context_usage(report: ContextReport, session: Session, last: Usage | None) -> dict[str, Any]:
    """``report`` and what the session shows of itself, as Claude Code answers."""
    window = report.window
    threshold = round(COMPACT_AT * window)
    categories = _categories(report, window - threshold)
    return {
        "categories": categories, "totalTokens": report.used, "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100 * report.used / window) if window else 0,
        "gridRows": grid(categories, window), "model": report.model,
        "memoryFiles": [{"path": m.path, "type": _MEMORY_TYPE.get(m.scope, "Project"),
                         "tokens": estimate_tokens(m.text)} for m in session.memory()],
        "mcpTools": _mcp_tools(session), "agents": _agents(session),
        "autoCompactThreshold": threshold, "isAutoCompactEnabled": True,
        "messageBreakdown": _breakdown(session),
        "apiUsage": None if last is None else {
            "input_tokens": last.input_tokens, "output_tokens": last.output_tokens,
            "cache_creation_input_tokens": last.cache_creation_input_tokens,
            "cache_read_input_tokens": last.cache_read_input_tokens},
    }


def _categories(report: ContextReport, buffer: int) -> list[dict[str, Any]]:
    tokens: dict[str, int] = {}
    for item in report.items:
        key = _CATEGORIES.get(item.label, ("messages",))[0]
        tokens[key] = tokens.get(key, 0) + item.tokens
    categories = [{"id": cid, "name": name, "tokens": tokens[cid], "color": color,
                   "kind": "used"}
                  for cid, name, color in dict.fromkeys(_CATEGORIES.values()) if tokens.get(cid)]
    free = max(0, report.window - report.used - buffer)
    if buffer > 0:
        categories.append({"id": "autocompact_buffer", "name": "Autocompact buffer",
                           "tokens": buffer, "color": "inactive", "kind": "buffer"})
    categories.append({"id": "free_space", "name": "Free space", "tokens": free,
                       "color": "promptBorder", "kind": "free"})
    return categories


def _mcp_tools(session: Session) -> list[dict[str, Any]]:
    """Each MCP tool the model is offered, with what its definition costs."""
    shown = []
    for name in session.tools.names():
        tool = session.tools.get(name)
        if tool is None or not name.startswith("mcp__") or name.count("__") < 2:
            continue
        shown.append({"name": name, "serverName": name.split("__")[1],
                      "tokens": estimate_tokens(tool.spec()), "isLoaded": True})
    return shown


def _breakdown(session: Session) -> dict[str, Any]:
    """The conversation's share by kind: tool calls and results by tool, the rest by role."""
    view = build_view(session.records(), session.deps.config.model)
    calls: dict[str, list[int]] = {}  # tool -> [call tokens, result tokens]
    names: dict[str, str] = {}  # tool_use id -> tool
    said = {"user": 0, "assistant": 0}
    for message in view.messages:
        for block in message["content"]:
            size = estimate_tokens(block)
            kind = block.get("type")
            if kind == "tool_use":
                name = names[str(block.get("id"))] = claude_name(str(block.get("name")))
                calls.setdefault(name, [0, 0])[0] += size
            elif kind == "tool_result":
                name = names.get(str(block.get("tool_use_id")), "unknown")
                calls.setdefault(name, [0, 0])[1] += size
            elif message["role"] in said:
                said[message["role"]] += size
    return {
        "toolCallTokens": sum(c for c, _ in calls.values()),
        "toolResultTokens": sum(r for _, r in calls.values()),
        "attachmentTokens": 0, "assistantMessageTokens": said["assistant"],
        "userMessageTokens": said["user"], "redirectedContextTokens": 0,
        "unattributedTokens": 0,
        "toolCallsByType": [{"name": name, "callTokens": c, "resultTokens": r}
                            for name, (c, r) in calls.items()],
        "attachmentsByType": [],
    }


def _agents(session: Session) -> list[dict[str, Any]]:
    """The sub-agent types the model is offered, and what their listing costs."""
    types = getattr(session.tools.first(lambda t: t.starts_agents), "agent_types", None)
    return [{"agentType": t.name, "tokens": len(t.description) // 4,
             "source": "flagSettings" if t.file == APP_FILE else _AGENT_SOURCE[str(t.scope)]}
            for t in (types.types if types is not None else [])]


def grid(categories: list[dict[str, Any]], window: int) -> list[list[dict[str, Any]]]:
    """The window as ``/context`` draws it: 10 rows of squares (20 a row past 200k
    tokens), each category's squares in turn, free space, then the buffer last."""
    if window <= 0:
        return []
    columns = 20 if window > 200_000 else 10
    count = 10 * columns
    per = window / count
    squares: list[dict[str, Any]] = []

    def square(category: dict[str, Any], fullness: float) -> dict[str, Any]:
        return {"color": category["color"], "isFilled": True,
                "categoryName": category["name"], "tokens": category["tokens"],
                "percentage": round(100 * category["tokens"] / window),
                "squareFullness": fullness}

    def squares_of(category: dict[str, Any]) -> list[dict[str, Any]]:
        exact = category["tokens"] / per  # at least one square, the last one part full
        return [square(category, round(min(1.0, exact - i), 2))
                for i in range(min(count, max(1, round(exact))))]

    free = next(c for c in categories if c["kind"] == "free")
    for category in (c for c in categories if c["kind"] == "used"):
        squares += squares_of(category)
    tail = [s for c in categories if c["kind"] == "buffer" for s in squares_of(c)][:count]
    squares = squares[:count - len(tail)]
    squares += [square(free, 1.0)] * (count - len(squares) - len(tail)) + tail
    return [squares[row * columns:(row + 1) * columns] for row in range(10)]
