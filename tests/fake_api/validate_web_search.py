"""The shape rules of the web search tool in a request (stateless; 400s).

* the tool: ``type`` one of the documented versions, ``name`` exactly ``web_search``,
  only the documented keys, ``allowed_domains`` and ``blocked_domains`` not together,
  ``max_uses`` a positive integer, ``user_location`` of type ``approximate``;
* ``server_tool_use`` and ``web_search_tool_result`` only in assistant messages, with
  their fields; a ``web_search_tool_result`` must follow its ``server_tool_use`` in the
  same message; a ``server_tool_use`` without its result may only end the final
  message (a ``pause_turn`` continuation);
* a text block's ``web_search_result_location`` citations carry ``url``,
  ``cited_text`` and ``encrypted_index``.

Whether a block sent back is the one the API sent is :mod:`tests.fake_api.web_search`'s
(``altered_error``).
"""

from __future__ import annotations

import re
from typing import Any

from .web_search import WEB_SEARCH_TYPES

__all__ = ["tool_error", "block_error", "message_error"]

_SERVER_ID_RE = re.compile(r"^srvtoolu_[a-zA-Z0-9_]+$")
_TOOL_KEYS = {"type", "name", "allowed_domains", "blocked_domains", "max_uses",
              "user_location", "cache_control", "allowed_callers", "defer_loading", "strict"}
_LOCATION_KEYS = {"type", "city", "region", "country", "timezone"}
_ERROR_CODES = ("invalid_tool_input", "unavailable", "max_uses_exceeded", "too_many_requests",
                "query_too_long", "request_too_large")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def tool_error(i: int, tool: dict) -> str | None:
    """The 400 for a web search tool declared wrongly, or None (``tools.i``)."""
    ttype = tool.get("type")
    if not (isinstance(ttype, str) and ttype.startswith("web_search")):
        return None
    if ttype not in WEB_SEARCH_TYPES:
        return (f"tools.{i}: Input tag '{ttype}' found using 'type' does not match any of "
                "the expected tags")
    where = f"tools.{i}.{ttype}"
    if tool.get("name") != "web_search":
        return f"{where}.name: Input should be 'web_search'"
    extra = sorted(set(tool) - _TOOL_KEYS)
    if extra:
        return f"{where}.{extra[0]}: Extra inputs are not permitted"
    for key in ("allowed_domains", "blocked_domains"):
        if tool.get(key) is not None and not _strings(tool[key]):
            return f"{where}.{key}: Input should be a valid list of non-empty strings"
    if tool.get("allowed_domains") is not None and tool.get("blocked_domains") is not None:
        return f"{where}: allowed_domains and blocked_domains cannot be used together"
    uses = tool.get("max_uses")
    if uses is not None and (not isinstance(uses, int) or isinstance(uses, bool) or uses < 1):
        return f"{where}.max_uses: Input should be greater than 0"
    place = tool.get("user_location")
    if place is not None:
        if not isinstance(place, dict) or place.get("type") != "approximate":
            return f"{where}.user_location.type: Input should be 'approximate'"
        extra = sorted(set(place) - _LOCATION_KEYS)
        if extra:
            return f"{where}.user_location.{extra[0]}: Extra inputs are not permitted"
    return None


def _result_error(block: dict, where: str) -> str | None:
    if not isinstance(block.get("tool_use_id"), str):
        return f"{where}.web_search_tool_result.tool_use_id: Field required"
    content = block.get("content")
    if isinstance(content, dict):
        at = f"{where}.web_search_tool_result.content"
        if content.get("type") != "web_search_tool_result_error":
            return f"{at}.type: Input should be 'web_search_tool_result_error'"
        if content.get("error_code") not in _ERROR_CODES:
            return f"{at}.error_code: Input should be one of {', '.join(_ERROR_CODES)}"
        return None
    if not isinstance(content, list):
        return f"{where}.web_search_tool_result.content: Input should be a valid list"
    for k, result in enumerate(content):
        at = f"{where}.web_search_tool_result.content.{k}"
        if not isinstance(result, dict) or result.get("type") != "web_search_result":
            return f"{at}.type: Input should be 'web_search_result'"
        for key in ("encrypted_content", "title", "url"):
            if not isinstance(result.get(key), str):
                return f"{at}.{key}: Field required"
        if result.get("page_age") is not None and not isinstance(result["page_age"], str):
            return f"{at}.page_age: Input should be a valid string"
    return None


def block_error(block: dict, role: str, where: str) -> str | None:
    """The 400 for one content block's web search parts, or None."""
    kind = block.get("type")
    if kind in ("server_tool_use", "web_search_tool_result"):
        if role != "assistant":
            return f"{where}: `{kind}` blocks can only be in `assistant` messages"
        if kind == "web_search_tool_result":
            return _result_error(block, where)
        if not isinstance(block.get("id"), str) or not _SERVER_ID_RE.match(block["id"]):
            return f"{where}.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'"
        if not isinstance(block.get("name"), str):
            return f"{where}.server_tool_use.name: Field required"
        if not isinstance(block.get("input"), dict):
            return f"{where}.server_tool_use.input: Input should be a valid dictionary"
    if kind == "text" and block.get("citations") is not None:
        cites = block["citations"]
        if not isinstance(cites, list):
            return f"{where}.text.citations: Input should be a valid list"
        for k, cite in enumerate(cites):
            if isinstance(cite, dict) and cite.get("type") == "web_search_result_location":
                for key in ("url", "cited_text", "encrypted_index"):
                    if not isinstance(cite.get(key), str):
                        return f"{where}.text.citations.{k}.web_search_result_location.{key}: Field required"
    return None


def message_error(i: int, blocks: list[dict], *, final: bool) -> str | None:
    """The 400 for an assistant message whose web search blocks do not pair, or None."""
    open_ids: dict[str, int] = {}
    for j, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "server_tool_use" and block.get("name") == "web_search":
            open_ids[block["id"]] = j
        elif kind == "web_search_tool_result":
            if open_ids.pop(block["tool_use_id"], None) is None:
                return (f"messages.{i}.content.{j}: `web_search_tool_result` block has no "
                        f"`server_tool_use` block with id {block['tool_use_id']} before it "
                        "in the same message")
    for sid, j in open_ids.items():
        if not (final and j == len(blocks) - 1):
            return (f"messages.{i}.content.{j}: `server_tool_use` {sid} has no result block "
                    "after it (only a paused final message may end with one)")
    return None
