"""The server-side web search tool (``web_search_20250305``), as the API documents it.

A request that declares the tool (``{"type": "web_search_20250305", "name":
"web_search", ...}``) lets a scripted reply search. The script names what "the model"
searched and what came back; the server fills in what the API would:

=============================================  ==============================================
``Reply.web_search(q, results, text, cite=)``  ``server_tool_use`` (``srvtoolu_...``, its input
                                               streamed as ``input_json_delta``), then
                                               ``web_search_tool_result`` (one block, sent
                                               whole: ``encrypted_content``, ``page_age``,
                                               ``title``, ``url`` per result), then ``text``
                                               whose ``citations`` (``citations_delta``) are
                                               ``web_search_result_location``s of the results
                                               numbered in ``cite``
``Reply.web_search(q, error="unavailable")``   the error form (``web_search_tool_result_error``)
``Reply.web_search(..., pause=True)``          no text: ``stop_reason: "pause_turn"``
=============================================  ==============================================

``results`` are ``(title, url)`` or ``(title, url, page_age)``. Several searches are
``Reply.message(Reply.web_search(...).blocks + Reply.web_search(...).blocks)``.

What the server enforces, as documented:

* a scripted search needs the tool declared in the request (else the fake's script is
  wrong: a 500 naming it, recorded in ``errors``);
* ``max_uses``: searches past it get the error ``max_uses_exceeded`` instead of results;
* ``usage.server_tool_use.web_search_requests`` counts the searches that ran (an error
  is not billed), in ``message_delta`` and the final message;
* blocks sent back (a ``pause_turn`` continuation, or any later request whose history
  holds them) must be exactly as sent: :class:`EmittedSearches` remembers each
  ``server_tool_use``, ``web_search_tool_result`` and citation, and
  :func:`altered_error` is the 400 for one that changed. The shape rules (a result
  without its ``server_tool_use``, a tool declared wrongly) are in
  :mod:`tests.fake_api.validate_web_search`.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import threading
from typing import Any, Iterable, Sequence

from .ids import new_server_tool_use_id

__all__ = ["SearchReplies", "EmittedSearches", "resolve", "altered_error", "declared_tool",
           "ScriptError", "identity", "WEB_SEARCH_TYPES", "COST_PER_SEARCH_USD"]

WEB_SEARCH_TYPES = ("web_search_20250305", "web_search_20260209")
COST_PER_SEARCH_USD = 10 / 1000  # the published price: $10 per 1,000 searches


class ScriptError(Exception):
    """The test scripted something the real model could not do."""


class SearchReplies:
    """The factory ``Reply`` inherits (``cls`` is ``Reply``)."""

    @classmethod
    def web_search(cls, query: str, results: Sequence[tuple] = (), text: str | None = None,
                   *, cite: Iterable[int] = (), error: str | None = None,
                   pause: bool = False, chunk: int = 5, json_chunk: int = 8) -> Any:
        blocks: list[dict] = [{"type": "server_tool_use", "name": "web_search",
                               "input": {"query": query}}]
        found = [{"title": r[0], "url": r[1], "page_age": r[2] if len(r) > 2 else None}
                 for r in results]
        blocks.append({"type": "web_search_tool_result", "error_code": error} if error
                      else {"type": "web_search_tool_result", "results": found})
        if text and not pause:
            blocks.append({"type": "text", "text": text, "cite": list(cite)})
        return cls(blocks=blocks, stop_reason="pause_turn" if pause else "end_turn",  # type: ignore[call-arg]
                   chunk=chunk, json_chunk=json_chunk)


def declared_tool(body: Any) -> dict | None:
    """The request's web search tool, if it declares one."""
    tools = body.get("tools") if isinstance(body, dict) else None
    for tool in tools or []:
        if isinstance(tool, dict) and tool.get("type") in WEB_SEARCH_TYPES:
            return tool
    return None


def _encrypted(url: str) -> str:
    return base64.b64encode(os.urandom(24) + url.encode()).decode()


def resolve(blocks: list[dict], body: Any) -> tuple[list[dict], int]:
    """The scripted blocks as the API sends them, and how many searches ran."""
    if not any(b.get("type") == "web_search_tool_result" for b in blocks):
        return blocks, 0
    tool = declared_tool(body)
    if tool is None:
        raise ScriptError("the reply searches the web, but the request declares no "
                          "web_search tool")
    max_uses = tool.get("max_uses")
    out: list[dict] = []
    ran = 0
    uses = 0
    last_id: str | None = None
    last_results: list[dict] = []
    for scripted in blocks:
        block = copy.deepcopy(scripted)
        kind = block.get("type")
        if kind == "server_tool_use":
            block.setdefault("id", new_server_tool_use_id())
            last_id = block["id"]
            out.append(block)
        elif kind == "web_search_tool_result" and "tool_use_id" not in block:
            if last_id is None:
                raise ScriptError("a web_search_tool_result needs a server_tool_use before it")
            uses += 1
            code = block.get("error_code")
            if code is None and max_uses is not None and uses > max_uses:
                code = "max_uses_exceeded"
            if code is not None:
                content: Any = {"type": "web_search_tool_result_error", "error_code": code}
                last_results = []
            else:
                ran += 1
                last_results = content = [
                    {"type": "web_search_result", "title": r["title"], "url": r["url"],
                     "encrypted_content": _encrypted(r["url"]), "page_age": r.get("page_age")}
                    for r in block.get("results", [])]
            out.append({"type": "web_search_tool_result", "tool_use_id": last_id,
                        "content": content})
        elif kind == "text" and "cite" in block:
            cites = block.pop("cite")
            if cites:
                block["citations"] = [
                    {"type": "web_search_result_location", "url": last_results[n]["url"],
                     "title": last_results[n]["title"], "cited_text": block["text"][:150],
                     "encrypted_index": base64.b64encode(os.urandom(12)).decode()}
                    for n in cites if n < len(last_results)] or None
                if block["citations"] is None:
                    del block["citations"]
            out.append(block)
        else:
            out.append(block)
    return out, ran


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _key(block: dict) -> str:
    """A block as compared: keys in any order, a ``null`` the same as a key left out
    (the SDK sends ``page_age: null`` back as it got it; another client leaves it out)."""
    return json.dumps(_without_none(block), sort_keys=True, separators=(",", ":"))


def identity(block: dict) -> str:
    """What makes a web search block the same one when sent back (``cache_control`` aside)."""
    return _key(_sent_shape(block))


class EmittedSearches:
    """Every web search block and citation the server sent, to tell one sent back changed."""

    def __init__(self) -> None:
        self._blocks: dict[tuple[str, str], str] = {}
        self._citations: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, blocks: Iterable[dict]) -> None:
        with self._lock:
            for block in blocks:
                kind = block.get("type")
                if kind == "server_tool_use" and block.get("name") == "web_search":
                    self._blocks[(kind, block["id"])] = _key(block)
                elif kind == "web_search_tool_result":
                    self._blocks[(kind, block["tool_use_id"])] = _key(block)
                for cite in block.get("citations") or []:
                    if cite.get("type") == "web_search_result_location":
                        self._citations[cite["encrypted_index"]] = _key(cite)

    def check(self, block: dict) -> str | None:
        """What of this block differs from what was sent, or None."""
        kind = block.get("type")
        with self._lock:
            if kind == "server_tool_use" and block.get("name") == "web_search":
                sent = self._blocks.get((kind, str(block.get("id"))))
                if sent is not None and sent != _key(_sent_shape(block)):
                    return "this server_tool_use differs from the one the API sent"
            elif kind == "web_search_tool_result":
                sent = self._blocks.get((kind, str(block.get("tool_use_id"))))
                if sent is None:
                    return "this web_search_tool_result was not sent by the API"
                if sent != _key(_sent_shape(block)):
                    return ("this web_search_tool_result differs from the one the API sent "
                            "(send it back exactly as received)")
            for cite in block.get("citations") or []:
                if isinstance(cite, dict) and cite.get("type") == "web_search_result_location":
                    sent = self._citations.get(str(cite.get("encrypted_index")))
                    if sent is None or sent != _key(cite):
                        return "a web_search_result_location citation was altered"
        return None


def _sent_shape(block: dict) -> dict:
    """A block as compared: ``cache_control`` is the client's own, not part of it."""
    return {k: v for k, v in block.items() if k != "cache_control"}


def altered_error(body: Any, sent: EmittedSearches) -> str | None:
    """The 400 message for a web search block sent back changed, or None."""
    for i, msg in enumerate(body.get("messages") or []):
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if isinstance(block, dict):
                problem = sent.check(block)
                if problem:
                    return f"messages.{i}.content.{j}: {problem}"
    return None
