"""Validation of ``cache_control`` and where a request's cache breakpoints fall.

Rules (prompt caching page of the API docs, error texts as the API sends them where they
are known):

* ``cache_control`` is ``{"type": "ephemeral"}`` with an optional ``"ttl"``: ``"5m"``
  (the default) or ``"1h"``. It may sit on a tool definition, a system text block or a
  message content block, or at the top level of the request (automatic caching).
* Not on a ``thinking`` / ``redacted_thinking`` block:
  ``messages.1.content.0.thinking.cache_control: Extra inputs are not permitted``.
* Not on an empty (or whitespace-only) text block:
  ``messages.0.content.1.text: cache_control cannot be set for empty text blocks``
  (``system.0: ...`` in the system prompt).
* At most 4 breakpoints, the automatic one included:
  ``A maximum of 4 blocks with cache_control may be provided. Found 5.``
* A 1-hour breakpoint may not follow a 5-minute one in the order tools, system,
  messages: ``...cache_control.ttl: a ttl='1h' cache_control block must not come after a
  ttl='5m' cache_control block. ...`` (the first sentence as the API sends it; the
  sentence after it, on the order of blocks, paraphrases the API's).
* Automatic caching puts its breakpoint on the last cacheable block (walking back over
  thinking blocks and empty text; none found: no automatic breakpoint). When that block
  already has an explicit ``cache_control`` with the same TTL, automatic caching is a
  no-op; with a different TTL it is a 400 (the docs give no wording; the fake says
  ``cache_control.ttl: the last cacheable block already has cache_control with
  ttl='5m'``); when 4 explicit breakpoints exist it is the "maximum of 4" 400.
"""

from __future__ import annotations

from typing import Any, Sequence

from .cache import Breakpoint
from .tokens import PromptUnit, prompt_units

__all__ = ["cache_control_error", "breakpoints", "MAX_BREAKPOINTS"]

MAX_BREAKPOINTS = 4
TTL_ORDER_MSG = ("{where}.cache_control.ttl: a ttl='1h' cache_control block must not come "
                 "after a ttl='5m' cache_control block. Note that blocks are processed in the "
                 "following order: `tools`, `system`, `messages`.")


def _shape_error(cc: Any, where: str) -> str | None:
    if not isinstance(cc, dict):
        return f"{where}.cache_control: Input should be a valid dictionary"
    if cc.get("type") != "ephemeral":
        return f"{where}.cache_control.type: Input should be 'ephemeral'"
    for key in cc:
        if key not in ("type", "ttl"):
            return f"{where}.cache_control.{key}: Extra inputs are not permitted"
    if "ttl" in cc and cc["ttl"] not in ("5m", "1h"):
        return f"{where}.cache_control.ttl: Input should be '5m' or '1h'"
    return None


def _ttl(cc: dict) -> str:
    return cc.get("ttl") or "5m"


def _resolve(units: Sequence[PromptUnit], top: Any) -> tuple[list[Breakpoint], str | None]:
    found: list[Breakpoint] = []
    for i, u in enumerate(units):
        if u.cache_control is None:
            continue
        kind = u.block.get("type")
        if u.section == "messages" and kind in ("thinking", "redacted_thinking"):
            return [], f"{u.where}.{kind}.cache_control: Extra inputs are not permitted"
        err = _shape_error(u.cache_control, u.where)
        if err:
            return [], err
        if kind == "text" and not u.cacheable:
            where = u.where + (".text" if u.section == "messages" else "")
            return [], f"{where}: cache_control cannot be set for empty text blocks"
        found.append(Breakpoint(i, _ttl(u.cache_control)))
    if top is not None:
        err = _shape_error(top, "")
        if err:
            return [], err.lstrip(".")
        target = next((i for i in range(len(units) - 1, -1, -1) if units[i].cacheable), None)
        if target is not None:
            mine = next((bp for bp in found if bp.index == target), None)
            if mine is not None and mine.ttl != _ttl(top):
                return [], ("cache_control.ttl: the last cacheable block already has "
                            f"cache_control with ttl='{mine.ttl}'")
            if mine is None:
                if len(found) >= MAX_BREAKPOINTS:
                    return [], (f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may "
                                f"be provided. Found {len(found) + 1}.")
                found.append(Breakpoint(target, _ttl(top), automatic=True))
    if len(found) > MAX_BREAKPOINTS:
        return [], (f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be "
                    f"provided. Found {len(found)}.")
    seen_5m = False
    for bp in sorted(found, key=lambda b: b.index):
        if bp.ttl == "5m":
            seen_5m = True
        elif seen_5m:
            where = "" if bp.automatic else units[bp.index].where
            return [], TTL_ORDER_MSG.format(where=where).lstrip(".")
    return sorted(found, key=lambda b: b.index), None


def cache_control_error(body: dict) -> str | None:
    """The 400 message for the request's ``cache_control`` use, or None."""
    return _resolve(prompt_units(body), body.get("cache_control"))[1]


def breakpoints(units: Sequence[PromptUnit], top_level: Any) -> list[Breakpoint]:
    """The breakpoints of an already validated request, automatic one included."""
    return _resolve(units, top_level)[0]
