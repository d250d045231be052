"""A ``web_search`` call's result text: written from the search request's content, and
read back by the front ends for the listing under the call (one place knows its shape)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the TUI reads listings before it needs the core's models
    from agent_tui.core.calls.tool import ToolResult

#: The API's error codes, in words a model (and a person) can act on.
ERROR_WORDS = {
    "invalid_tool_input": "the query was not valid",
    "unavailable": "the search service is unavailable; try again later",
    "max_uses_exceeded": "the search was not run: one search per call",
    "too_many_requests": "too many searches for now; try again later",
    "query_too_long": "the query is too long; shorten it",
    "request_too_large": "the request was too large",
}


def search_result(query: str, content: list[dict[str, Any]], *, searches: int,
                  stop_reason: str) -> ToolResult:
    """The call's result from the search request's content (kept whole in details)."""
    from agent_tui.core.calls.tool import ToolResult

    found: list[dict[str, Any]] = []
    errors: list[str] = []
    said: list[str] = []
    sources: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "web_search_tool_result":
            inner = block.get("content")
            if isinstance(inner, dict):
                code = str(inner.get("error_code"))
                errors.append(f"{code} ({ERROR_WORDS.get(code, 'the search failed')})")
            elif isinstance(inner, list):
                found.extend(r for r in inner if isinstance(r, dict))
        elif kind == "text":
            said.append(block.get("text", "").strip())
            for cite in block.get("citations") or []:
                url = cite.get("url")
                if url and url not in sources:
                    sources.append(url)
    lines = [f'Web search results for "{_one_line(query)}":']
    for n, result in enumerate(found, 1):
        url = _one_line(result.get("url"))
        age = f" ({_one_line(result['page_age'])})" if result.get("page_age") else ""
        lines.append(f"{n}. {_one_line(result.get('title')) or url}")
        lines.append(f"   {url}{age}")
    if not found:
        lines.append("No results." if not errors else "The search failed: " + "; ".join(errors))
    elif errors:
        lines.append("A further search failed: " + "; ".join(errors))
    summary = "\n".join(s for s in said if s)
    if summary:
        lines += ["", summary]
    if sources:
        lines += ["", "Sources: " + ", ".join(sources)]
    if stop_reason not in ("end_turn", "stop_sequence"):
        lines += ["", f"(The search request ended with {stop_reason}: it may be incomplete.)"]
    details = {"search": {"query": query, "content": content, "searches": searches,
                          "stop_reason": stop_reason},
               "results": [{"title": r.get("title"), "url": r.get("url"),
                            "page_age": r.get("page_age")} for r in found]}
    text = "\n".join(lines)
    told = ToolResult.error(text) if errors and not found else ToolResult.ok(text)
    told.details = details
    return told


def _one_line(value: Any) -> str:
    """A title, link or age from the web on one line (it cannot add lines of its own)."""
    return " ".join(str(value or "").split())


class Listed(NamedTuple):
    title: str
    url: str
    page_age: str


_ITEM = re.compile(r"^(\d+)\. (.+)\n   (\S+)(?: \((.+)\))?$", re.MULTILINE)


def listed_results(result: str) -> list[Listed]:
    """The results a ``web_search`` result lists (what the transcript shows of it)."""
    if not result.startswith("Web search results for "):
        return []
    head = result.split("\n\n", 1)[0]
    return [Listed(m.group(2), m.group(3), m.group(4) or "") for m in _ITEM.finditer(head)]
