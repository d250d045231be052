"""A ``web_search`` call's own request to the API's server-side web search tool.

The search runs on the API's servers, inside a model request: once a request declares
the tool, the model may search without asking anyone. So the conversation's requests
never declare it. ``web_search`` is a client tool like any other, decided by the
permission policy before it runs (asked in ``ask`` mode, refused by a ``WebSearch``
deny rule); only a call that was allowed gets here, and :class:`Searcher` then makes
a separate request that declares ``web_search_20250305`` with ``max_uses: 1``: one
allowed call, at most one search.

The reply's content (``server_tool_use``, ``web_search_tool_result`` with its
``encrypted_content``, text with ``web_search_result_location`` citations) is kept
verbatim: a ``pause_turn`` sends it back as it came, as the last assistant message,
and the request goes on (at most :data:`MAX_CONTINUATIONS` times); the call's journal
record keeps it whole (``details["search"]["content"]``). Each request's usage is
reported with purpose ``web_search`` (its searches are billed per use, in the cost).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, assert_never


from agent_tui.protocol.model_base import DeferredModel
from agent_tui.cancel import CancelScope
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.services.model_call import ModelCall
from agent_tui.protocol import Event, RequestPurpose
from agent_tui.providers import base as model

TOOL_TYPE = "web_search_20250305"
MAX_CONTINUATIONS = 3  # pause_turn continuations of one search request
MAX_TOKENS = 2048
SYSTEM = (
    "You search the web for a coding agent. Search once for the query you are given, "
    "with the web_search tool, then say in a few sentences what the results say that "
    "answers it, citing them. Do not answer from memory."
)


class SearchFailed(Exception):
    """The search request failed (the provider's words)."""


class SearchOutcome(DeferredModel):
    """What the search request answered: its assistant content, verbatim."""

    content: list[dict[str, Any]]
    stop_reason: str
    requests: int  # model requests made (1 + pause_turn continuations)
    searches: int  # usage.server_tool_use.web_search_requests, summed


def search_tool(allowed_domains: list[str] | None, blocked_domains: list[str] | None) -> dict[str, Any]:
    """The server tool as the request declares it."""
    tool: dict[str, Any] = {"type": TOOL_TYPE, "name": "web_search", "max_uses": 1}
    if allowed_domains:
        tool["allowed_domains"] = list(allowed_domains)
    if blocked_domains:
        tool["blocked_domains"] = list(blocked_domains)
    return tool


class Searcher:
    """Web searches for one ``web_search`` call (``ToolContext.web_search``)."""

    def __init__(self, deps: SessionDeps, record: Callable[[Any], bool],
                 emit: Callable[[Event], None], *, turn_id: str, tool_use_id: str,
                 scope: CancelScope) -> None:
        self.deps = deps
        self.record = record
        self.emit = emit
        self.turn_id = turn_id
        self.tool_use_id = tool_use_id
        self.scope = scope

    async def search(self, query: str, allowed_domains: list[str] | None = None,
                     blocked_domains: list[str] | None = None,
                     on_progress: Callable[[str], None] = lambda _text: None) -> SearchOutcome:
        """``on_progress`` hears each search as it is made and how many results it got
        (the call's live output)."""
        cfg = self.deps.config
        info = self.deps.limits.info(cfg.model)
        question = {"role": "user", "content": f"Perform a web search for the query: {query}"}
        content: list[dict[str, Any]] = []
        searches = requests = 0
        stop = "end_turn"
        for _ in range(1 + MAX_CONTINUATIONS):
            messages = [question] + ([{"role": "assistant", "content": content}] if content else [])
            request = model.ModelRequest(
                model=cfg.model, system=SYSTEM, messages=messages, max_tokens=MAX_TOKENS,
                tools=[search_tool(allowed_domains, blocked_domains)],
                thinking={"type": "disabled"} if info is None or info.thinking_disabled else None,
            )
            fold, tries, searched = await self._request(request, on_progress)
            requests += tries
            content.extend(fold.content())
            searches += searched
            stop = fold.stop_reason or "end_turn"
            if stop != "pause_turn":
                break
        return SearchOutcome(content=content, stop_reason=stop, requests=requests,
                             searches=searches)

    async def _request(self, request: model.ModelRequest,
                       on_progress: Callable[[str], None]) -> tuple[_Fold, int, int]:
        """One search request, tried again as a turn's model request is when the API is
        overloaded or rate-limited before anything came (529, 429, 5xx, a dropped
        connection); returns its folded reply, how many requests it took and how many
        searches the API counted."""
        asking = ModelCall(self.deps, self.scope, turn_id=self.turn_id,
                           purpose=RequestPurpose.WEB_SEARCH, record=self.record,
                           emit=self.emit, parent_tool_use_id=self.tool_use_id,
                           label="web search: ")
        folds: list[_Fold] = []

        def fresh() -> Callable[[model.StreamEvent], None]:
            folds.append(_Fold(on_progress))
            return folds[-1].on_event

        # cancel points inside: while the search streams, and during a retry's back-off
        streamed, tries = await asking.ask(request, fresh, shown=lambda: bool(folds[-1].blocks))
        if streamed.error is not None:
            raise SearchFailed(str(streamed.error))
        usage = streamed.usage
        return folds[-1], tries, usage.web_search_requests if usage else 0


class _Fold:
    """One search reply's stream folded into its content blocks, kept as they came."""

    def __init__(self, on_progress: Callable[[str], None]) -> None:
        self.on_progress = on_progress
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial: dict[int, str] = {}
        self.stop_reason: str | None = None

    def on_event(self, event: model.StreamEvent) -> None:
        match event:
            case model.MessageEnded():
                self.stop_reason = event.stop_reason
            case model.TextStarted():
                self.blocks[event.index] = {"type": "text", "text": ""}
            case model.TextDelta() if event.index in self.blocks:
                block = self.blocks[event.index]
                block["text"] = block.get("text", "") + event.text
            case model.CitationDelta() if event.index in self.blocks:
                self.blocks[event.index].setdefault("citations", []).append(event.citation)
            case model.ThinkingStarted():
                self.blocks[event.index] = {"type": "thinking", "thinking": "", "signature": ""}
            case model.ThinkingDelta() if event.index in self.blocks:
                self.blocks[event.index]["thinking"] += event.text
            case model.SignatureDelta() if event.index in self.blocks:
                self.blocks[event.index]["signature"] += event.signature
            case model.RedactedThinking():
                self.blocks[event.index] = {"type": "redacted_thinking", "data": event.data}
            case model.OtherBlockStarted():
                self._other_block(event)
            case model.ToolInputDelta() if event.index in self.partial:
                self.partial[event.index] += event.partial_json
            case model.BlockStopped() if event.index in self.partial:
                self._input_complete(event.index)
            case (model.TextDelta() | model.CitationDelta() | model.ThinkingDelta()
                  | model.SignatureDelta() | model.ToolInputDelta() | model.BlockStopped()
                  | model.ToolUseStarted() | model.MessageStarted()):
                pass  # usage is the request path's; a search reply has no tool_use of ours
            case _:
                assert_never(event)

    def _other_block(self, event: model.OtherBlockStarted) -> None:
        self.blocks[event.index] = dict(event.block)
        if event.block.get("type") == "server_tool_use":
            self.partial[event.index] = ""
        elif event.block.get("type") == "web_search_tool_result":
            self.on_progress(_told(event.block))

    def _input_complete(self, index: int) -> None:
        raw = self.partial.pop(index)
        try:
            self.blocks[index]["input"] = json.loads(raw) if raw.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            self.partial[index] = raw  # stays incomplete: never sent back
            return
        asked = self.blocks[index]["input"]
        query = asked.get("query") if isinstance(asked, dict) else None
        self.on_progress(f"searching: {' '.join(str(query or '').split())}\n")

    def content(self) -> list[dict[str, Any]]:
        """The complete blocks, in order (a cut server_tool_use, or text or thinking
        that never got its content, is left out)."""
        out = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.partial:
                continue
            if block["type"] == "text" and not block["text"].strip():
                continue
            if block["type"] == "thinking" and not block["signature"]:
                continue
            out.append(block)
        return out



def _told(result: dict[str, Any]) -> str:
    """A search's result in a line of the call's output."""
    content = result.get("content")
    if isinstance(content, dict):
        return f"the search failed: {content.get('error_code')}\n"
    count = len(content) if isinstance(content, list) else 0
    return f"{count} result{'s' if count != 1 else ''}\n"
