"""Token counts of the fake API: one deterministic estimator for every figure it reports.

The rule (about 4 characters per token)::

    tokens(unit) = max(1, ceil(len(canonical(unit)) / 4))

``canonical(unit)`` is ``json.dumps(unit, ensure_ascii=False, separators=(",", ":"))``
of the unit as it was sent, key order kept (the real prompt cache is byte-exact, so a
client that reorders keys misses it), with the unit's own ``cache_control`` key left out
(moving a breakpoint changes neither the count nor the cache key).

Input units, in the prompt's cache order ``tools -> system -> messages``:

* each tool definition in ``tools``;
* each block of ``system`` (a string ``system`` counts as one ``{"type":"text","text":s}``);
* each content block of each message (a string ``content`` counts as one text block);
  an image counts as the API counts it, from its pixel size: ``width * height / 750``
  after a long edge over 1568 pixels is scaled down to it, at most 1600 (the vision
  guide's formula; 1600 when its header cannot be read), whether it stands in the
  message or in a ``tool_result``.

On a model whose :class:`~tests.fake_api.models.ModelSpec` has
``keeps_prior_thinking=False`` (Claude Haiku 4.5 and older), thinking and
redacted_thinking blocks of assistant messages before the current turn are dropped from
the prompt, as the API documents: they count for nothing and are not part of the prefix.

Output tokens of a reply are counted over what the model generated: the ``text`` of a
text block, the ``thinking`` of a thinking block (also when ``display: "omitted"``
sends it empty), and ``name`` + canonical ``input`` of a tool call, each with the same
``ceil(chars / 4)`` (minimum 1 per block, and at least 1 for a reply).

``/v1/messages/count_tokens``, the ``usage`` figures and ``FakeAnthropicServer.count_tokens``
all use :func:`prompt_units`; tests can call :func:`text_tokens` to size a prompt
("4,000 characters of text are 1,000 tokens, plus the block's JSON framing").

Each :class:`PromptUnit` also carries the cumulative prefix key that the prompt cache
looks up (:mod:`tests.fake_api.cache`): a SHA-256 chain seeded with the model id, into
which, where the messages start, the request's ``thinking`` and ``tool_choice`` are
mixed (changing either invalidates the message cache but not tools and system, as the
caching docs' invalidation table says).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable

from .validate_images import dimensions

__all__ = ["PromptUnit", "canonical", "text_tokens", "unit_tokens", "prompt_units",
           "count_prompt_tokens", "output_tokens", "content_blocks", "current_turn_start"]

CHARS_PER_TOKEN = 4
_UNCACHEABLE = {"thinking", "redacted_thinking"}


def canonical(value: Any) -> str:
    """The unit's bytes as the fake counts and keys them (key order as sent)."""
    if isinstance(value, dict) and "cache_control" in value:
        value = {k: v for k, v in value.items() if k != "cache_control"}
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def text_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``, at least 1: the estimate for a run of characters."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def unit_tokens(unit: Any) -> int:
    return text_tokens(canonical(unit))


@dataclass(frozen=True)
class PromptUnit:
    """One block of the prompt in cache order, with its count and prefix key."""

    where: str  # the request path: "tools.0", "system.1", "messages.3.content.0"
    section: str  # "tools" | "system" | "messages"
    block: dict
    tokens: int
    key: str  # SHA-256 of the whole prefix that ends with this unit
    cache_control: Any  # the unit's own cache_control value, None when absent

    @property
    def cacheable(self) -> bool:
        """May this unit carry a breakpoint? Not thinking blocks, not empty text."""
        if self.section == "messages" and self.block.get("type") in _UNCACHEABLE:
            return False
        if self.block.get("type") == "text":
            text = self.block.get("text")
            return isinstance(text, str) and bool(text.strip())
        return True


def content_blocks(content: Any) -> list:
    """A message's ``content`` as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def current_turn_start(messages: list) -> int:
    """Index after the last user message that carries no tool_result (a real prompt):
    the current turn is that message's answer, tool loop included."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        if not any(isinstance(b, dict) and b.get("type") == "tool_result"
                   for b in content_blocks(msg.get("content"))):
            return i + 1
    return 0


def _raw_units(body: dict, keeps_prior_thinking: bool) -> Iterable[tuple[str, str, Any]]:
    """``(where, tag, block)``; the tag is the section, or the role inside messages."""
    tools = body.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        yield f"tools.{i}", "tools", tool
    system = body.get("system")
    for i, block in enumerate(content_blocks(system) if system is not None else []):
        yield f"system.{i}", "system", block
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    turn_start = current_turn_start(messages)
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        for j, block in enumerate(content_blocks(msg.get("content"))):
            if (not keeps_prior_thinking and i < turn_start and msg.get("role") == "assistant"
                    and isinstance(block, dict) and block.get("type") in _UNCACHEABLE):
                continue  # the API strips earlier turns' thinking on these models
            yield f"messages.{i}.content.{j}", str(msg.get("role")), block


def image_tokens(block: dict) -> int:
    """An image block's tokens, from its pixel size (see the module docstring)."""
    source = block.get("source")
    size = None
    if isinstance(source, dict) and isinstance(source.get("data"), str):
        try:
            size = dimensions(base64.b64decode(source["data"]))
        except (binascii.Error, ValueError):
            size = None
    if size is None:
        return 1600
    w, h = size
    if max(w, h) > 1568:
        w, h = w * 1568 / max(w, h), h * 1568 / max(w, h)
    return max(1, min(1600, math.ceil(w * h / 750)))


def _unit_count(block: Any, data: str) -> int:
    if isinstance(block, dict):
        if block.get("type") == "image":
            return image_tokens(block)
        inner = block.get("content")
        if block.get("type") == "tool_result" and isinstance(inner, list):
            images = [b for b in inner if isinstance(b, dict) and b.get("type") == "image"]
            if images:
                rest = dict(block, content=[b for b in inner if b not in images])
                return text_tokens(canonical(rest)) + sum(image_tokens(b) for b in images)
    return text_tokens(data)


def prompt_units(body: dict, *, keeps_prior_thinking: bool = True) -> list[PromptUnit]:
    """The request's prompt as units in cache order (see the module docstring)."""
    model = body.get("model")
    chain = hashlib.sha256(canonical(["model", model]).encode())
    context = canonical(["context", body.get("thinking"), body.get("tool_choice")])
    units: list[PromptUnit] = []
    in_messages = False
    for where, tag, block in _raw_units(body, keeps_prior_thinking):
        section = tag if tag in ("tools", "system") else "messages"
        if section == "messages" and not in_messages:
            chain.update(context.encode())
            in_messages = True
        data = canonical(block)
        chain.update(f"\x1e{tag}\x1f".encode() + data.encode())
        cc = block.get("cache_control") if isinstance(block, dict) else None
        units.append(PromptUnit(where, section, block if isinstance(block, dict) else {},
                                _unit_count(block, data), chain.copy().hexdigest(), cc))
    return units


def count_prompt_tokens(body: dict, *, keeps_prior_thinking: bool = True) -> int:
    return sum(u.tokens for u in prompt_units(body, keeps_prior_thinking=keeps_prior_thinking))


def output_tokens(blocks: Iterable[dict]) -> tuple[int, int]:
    """``(output_tokens, thinking_tokens)`` of generated content blocks."""
    total = thinking = 0
    for b in blocks:
        kind = b.get("type")
        if kind == "text":
            total += text_tokens(b.get("text", ""))
        elif kind == "thinking":
            n = text_tokens(b.get("thinking", ""))
            total += n
            thinking += n
        elif kind == "redacted_thinking":
            n = text_tokens(b.get("data", ""))
            total += n
            thinking += n
        elif kind in ("tool_use", "server_tool_use"):
            raw = b.get("partial_json")
            args = raw if isinstance(raw, str) else canonical(b.get("input", {}))
            total += text_tokens(b.get("name", "") + args)
    return max(1, total), thinking
