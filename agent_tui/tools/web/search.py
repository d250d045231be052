"""The ``web_search`` tool: a web search by the API's server-side search, asked per use.

Offered only when settings say ``"webSearch": {"enabled": true}``. Not read-only for
the permission policy: ``ask`` and ``accept-edits`` ask before each call (Claude
Code's rule name is ``WebSearch``: ``"allow": ["WebSearch"]`` stops the asking,
``"deny": ["WebSearch"]`` refuses every search), ``auto`` allows. The search itself is
``ToolContext.web_search`` (``core/turn/web_search.py``): a separate request that declares
the server tool, made only once the call is allowed. The result the model gets, and
the transcript shows, lists each result's title and link, then what the search said
of them with its sources; the search's blocks are kept verbatim in the call's details.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.core.calls.search_listing import search_result
from agent_tui.core.turn.web_search import SearchFailed
from agent_tui.protocol.tool_names import ResultShown


class WebSearchInput(DeferredModel):
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


class WebSearchTool(Tool[WebSearchInput]):
    name = "web_search"
    claude_name = "WebSearch"
    plans = True
    asks_because = "sends the query to a web search (billed per search)"
    prompt_title = "Web search"
    acp_kind = "fetch"  # it reads from the web, as web_fetch does
    result_shown = ResultShown.SOURCES
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

    def summary(self, args: WebSearchInput) -> str:
        text = f"web_search {args.query}"
        if args.allowed_domains:
            text += f" (only {', '.join(args.allowed_domains)})"
        if args.blocked_domains:
            text += f" (not {', '.join(args.blocked_domains)})"
        return text

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        return None  # a search changes nothing here

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolResult:
        if ctx.web_search is None:
            return ToolResult.error("web_search is not available here.")
        try:
            outcome = await ctx.web_search.search(args.query, args.allowed_domains,
                                                  args.blocked_domains, ctx.emit_output)
        except SearchFailed as exc:
            return ToolResult.error(f"The web search request failed: {exc}")
        return search_result(args.query, outcome.content, searches=outcome.searches,
                             stop_reason=outcome.stop_reason)
