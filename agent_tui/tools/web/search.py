"""The ``web_search`` tool: a web search by the API's server-side search, asked per use.

Offered only when settings say ``"webSearch": {"enabled": true}``. Not read-only for
the permission policy: ``ask`` and ``accept-edits`` ask before each call (Claude
Code's rule name is ``WebSearch``: ``"allow": ["WebSearch"]`` stops the asking,
``"deny": ["WebSearch"]`` refuses every search), ``auto`` allows. The search itself is
``ToolContext.web_search`` (``core/web_search.py``): a separate request that declares
the server tool, made only once the call is allowed. The result the model gets, and
the transcript shows, lists each result's title and link, then what the search said
of them with its sources; the search's blocks are kept verbatim in the call's details.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_tui.core.tool import Tool, ToolContext, ToolResult
from agent_tui.core.web_search import SearchFailed

#: The API's error codes, in words a model (and a person) can act on.
ERROR_WORDS = {
    "invalid_tool_input": "the query was not valid",
    "unavailable": "the search service is unavailable; try again later",
    "max_uses_exceeded": "the search was not run: one search per call",
    "too_many_requests": "too many searches for now; try again later",
    "query_too_long": "the query is too long; shorten it",
    "request_too_large": "the request was too large",
}


class WebSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=2, description="What to search the web for")
    allowed_domains: list[str] | None = Field(
        default=None, description="Only include results from these domains")
    blocked_domains: list[str] | None = Field(
        default=None, description="Never include results from these domains")

    @model_validator(mode="after")
    def _one_filter(self) -> WebSearchInput:
        if self.allowed_domains and self.blocked_domains:
            raise ValueError("give allowed_domains or blocked_domains, not both")
        return self


class WebSearchTool(Tool):
    name = "web_search"
    description = (
        "Search the web and get back the results' titles and links, with a short summary "
        "that cites them. Use it for what is newer than your knowledge or not in the "
        "workspace: a library's latest release, an error message's known cause, current "
        "documentation. The user is asked before each search unless they allowed it.\n"
        "- One search per call; each search is billed.\n"
        "- allowed_domains or blocked_domains narrow the results (not both).\n"
        "- To read a page the search found, use web_fetch with its URL."
    )
    Input = WebSearchInput
    read_only = False  # the permission policy asks per call
    reports_own_writes = True  # it writes no file: no workspace snapshot around it
    concurrent = True  # searches are independent of each other

    def summary(self, args: WebSearchInput) -> str:  # type: ignore[override]
        text = f"web_search {args.query}"
        if args.allowed_domains:
            text += f" (only {', '.join(args.allowed_domains)})"
        if args.blocked_domains:
            text += f" (not {', '.join(args.blocked_domains)})"
        return text

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        return None  # a search changes nothing here

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        if ctx.web_search is None:
            return ToolResult.error("web_search is not available here.")
        try:
            outcome = await ctx.web_search.search(args.query, args.allowed_domains,
                                                  args.blocked_domains, ctx.emit_output)
        except SearchFailed as exc:
            return ToolResult.error(f"The web search request failed: {exc}")
        return search_result(args.query, outcome.content, searches=outcome.searches,
                             stop_reason=outcome.stop_reason)


def search_result(query: str, content: list[dict[str, Any]], *, searches: int,
                  stop_reason: str) -> ToolResult:
    """The call's result from the search request's content (kept whole in details)."""
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
    result = ToolResult.error(text) if errors and not found else ToolResult.ok(text)
    result.details = details
    return result


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
