"""Thinking signatures the fake mints, and what it remembers of the replies it sent.

**Signatures.** Each thinking block the server sends gets a ``signature`` (streamed as
one ``signature_delta`` just before ``content_block_stop``): base64 of a small payload
(model id, display mode, SHA-256 of the thinking text, a nonce) followed by an HMAC-SHA256
tag under the server's secret. Each ``redacted_thinking`` block gets ``data`` made the
same way. :meth:`ThinkingSigner.check` tells a block sent back apart as

* ``VALID``: minted here for this model, text unchanged (text is not checked when the
  block was sent with ``display: "omitted"``: the docs say that text is ignored);
* ``MODIFIED``: minted here for this model, but the thinking text was changed;
* ``FOREIGN``: minted here for another model (the API binds blocks to their model);
* ``FORGED``: not minted by this secret at all (made up, truncated, altered).

The default secret is a fixed constant, so signatures survive a server restart (a resumed
session); pass ``FakeAnthropicServer(thinking_secret=b"...")`` to change it.

**Emitted turns.** For every reply the server sent with tool calls or ``pause_turn``, it
records the ids of the tool calls, the identities of its thinking blocks (signature or
data, in order) and, for ``pause_turn``, the whole content. Validation uses this to know
which assistant messages of a tool loop must carry which thinking blocks, and to accept a
``pause_turn`` continuation (a request ending with that assistant content).
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import json
import os
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .tokens import canonical
from .web_search import identity

__all__ = ["SignatureCheck", "ThinkingSigner", "EmittedTurn", "EmittedTurns", "block_identity",
           "DEFAULT_SECRET"]

DEFAULT_SECRET = b"fake-anthropic-thinking-secret-v1"
_SEP = b"|"


class SignatureCheck(enum.Enum):
    VALID = "valid"
    MODIFIED = "modified"
    FOREIGN = "foreign"
    FORGED = "forged"


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class ThinkingSigner:
    def __init__(self, secret: bytes = DEFAULT_SECRET) -> None:
        self._secret = bytes(secret)

    def _seal(self, payload: dict) -> str:
        raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        tag = hmac.new(self._secret, raw, hashlib.sha256).hexdigest().encode()
        return base64.b64encode(raw + _SEP + tag).decode()

    def _open(self, token: Any) -> dict | None:
        if not isinstance(token, str) or not token:
            return None
        try:
            raw = base64.b64decode(token.encode(), validate=True)
        except (ValueError, TypeError):
            return None
        body, sep, tag = raw.rpartition(_SEP)
        if not sep:
            return None
        want = hmac.new(self._secret, body, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(want, tag):
            return None
        try:
            payload = json.loads(body)
        except ValueError:
            return None
        return payload if isinstance(payload, dict) else None

    def sign(self, model: str, thinking: str, display: str) -> str:
        return self._seal({"k": "thinking", "m": model, "d": display, "h": _text_hash(thinking),
                           "n": os.urandom(8).hex()})

    def redacted_data(self, model: str) -> str:
        return self._seal({"k": "redacted", "m": model, "n": os.urandom(12).hex()})

    def check(self, model: str, block: dict) -> SignatureCheck:
        """Classify a ``thinking`` or ``redacted_thinking`` block sent back by a client."""
        is_thinking = block.get("type") == "thinking"
        payload = self._open(block.get("signature") if is_thinking else block.get("data"))
        if payload is None or payload.get("k") != ("thinking" if is_thinking else "redacted"):
            return SignatureCheck.FORGED
        if payload.get("m") != model:
            return SignatureCheck.FOREIGN
        if is_thinking and payload.get("d") != "omitted" and payload.get("h") != _text_hash(
                str(block.get("thinking", ""))):
            return SignatureCheck.MODIFIED
        return SignatureCheck.VALID


def block_identity(block: Any) -> Any:
    """What makes a content block the same block when a client sends it back."""
    if not isinstance(block, dict):
        return ("value", canonical(block))
    kind = block.get("type")
    if kind == "text":
        return ("text", block.get("text"))
    if kind in ("tool_use", "server_tool_use"):
        return (kind, block.get("id"), block.get("name"), canonical(block.get("input")))
    if kind == "thinking":
        return ("thinking", block.get("signature"))
    if kind == "redacted_thinking":
        return ("redacted_thinking", block.get("data"))
    if kind == "web_search_tool_result":
        return (kind, identity(block))
    return (kind, canonical({k: v for k, v in block.items() if v is not None}))


@dataclass(frozen=True)
class EmittedTurn:
    """What the server sent in one reply (only what validation needs to look up)."""

    model: str
    tool_ids: tuple[str, ...]
    thinking: tuple[Any, ...]  # block_identity of its thinking/redacted blocks, in order
    paused_content: tuple[Any, ...] | None  # block identities when it was a pause_turn


class EmittedTurns:
    """Thread-safe index of emitted turns by tool_use id and by paused content."""

    def __init__(self) -> None:
        self._by_tool: dict[str, EmittedTurn] = {}
        self._paused: set[tuple[Any, ...]] = set()
        self._lock = threading.Lock()

    def add(self, model: str, blocks: Sequence[dict], *, paused: bool) -> None:
        tool_ids = tuple(b["id"] for b in blocks if b.get("type") == "tool_use" and "id" in b)
        thinking = tuple(block_identity(b) for b in blocks
                         if b.get("type") in ("thinking", "redacted_thinking"))
        content = tuple(block_identity(b) for b in blocks) if paused else None
        turn = EmittedTurn(model, tool_ids, thinking, content)
        with self._lock:
            for tid in tool_ids:
                self._by_tool[tid] = turn
            if content is not None:
                self._paused.add(content)

    def for_tools(self, tool_ids: Iterable[str]) -> EmittedTurn | None:
        with self._lock:
            for tid in tool_ids:
                if tid in self._by_tool:
                    return self._by_tool[tid]
        return None

    def is_paused_content(self, blocks: Sequence[Any]) -> bool:
        key = tuple(block_identity(b) for b in blocks)
        with self._lock:
            return key in self._paused
