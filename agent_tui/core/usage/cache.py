"""Where a request marks its prompt-cache breakpoints.

The API caches prefixes in the order tools -> system -> messages, at blocks marked
``cache_control``, at most 4 per request; a later request finds a cached prefix again
by looking back at most 20 blocks from each of its breakpoints. Three breakpoints
are placed:

1. the system prompt (with the tools before it: both fixed for the session);
2. the end of the previous request's conversation (the user message before the
   newest assistant reply), where the last request wrote its cache, so a long batch
   of tool calls in between cannot put it out of the 20-block reach;
3. the end of this request's conversation, to be read by the next one.

The marks are put on copies: the model view itself is never changed, so the prefix
stays byte-identical from one request to the next.
"""

from __future__ import annotations

import copy
from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# Blocks that cannot carry a cache mark themselves.
_UNMARKABLE = {"thinking", "redacted_thinking"}


def system_blocks(system: str) -> list[dict[str, Any]]:
    """The system prompt as one text block marked for caching."""
    if not system.strip():
        return []
    return [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]


def _mark_last_block(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if not isinstance(content, list):
        return False
    for block in reversed(content):
        if block.get("type") not in _UNMARKABLE:
            block["cache_control"] = dict(EPHEMERAL)
            return True
    return False


def mark_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` with breakpoints at the ends of the last two user turns."""
    marked = copy.deepcopy(messages)
    users = [i for i, m in enumerate(marked) if m.get("role") == "user"]
    for i in users[-2:]:
        _mark_last_block(marked[i])
    return marked


def breakpoints(system: list[dict[str, Any]], tools: list[dict[str, Any]],
                messages: list[dict[str, Any]]) -> int:
    """How many blocks of a request carry ``cache_control`` (the API allows 4)."""
    count = sum(1 for b in system if "cache_control" in b)
    count += sum(1 for t in tools if "cache_control" in t)
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            count += sum(1 for b in content if "cache_control" in b)
    return count
