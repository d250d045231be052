"""What the server sends for one reply: the final message and its SSE event plan.

:func:`materialize` turns a scripted :class:`~tests.fake_api.replies.Reply` into an
:class:`Emission` for one request: thinking blocks signed for the request's model (text
emptied under ``display: "omitted"``), redacted blocks given ``data``, cut tool calls
given their partially parsed input, and the usage figures. :func:`message_json` is the
non-streaming body; :func:`stream_plan` is the event sequence of the real API::

    message_start, content_block_start, ping, content_block_delta..., content_block_stop,
    ..., message_delta (stop_reason, cumulative usage), message_stop

with ``text_delta``, ``citations_delta`` (a cited text's citations, before its text),
``input_json_delta``, ``thinking_delta`` and ``signature_delta`` deltas. Plan items are ``("event", name, payload)`` or ``("stall",)``; the returned tail
holds what a ``"finish"`` stall sends afterwards.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from .cache import CacheUsage
from .errors import error_body
from .ids import rand_id
from .replies import Reply
from .thinking import ThinkingSigner
from .tokens import output_tokens
from .usage import delta_usage, message_usage, start_usage

__all__ = ["Emission", "materialize", "message_json", "stream_plan", "dumps"]


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _split(s: str, n: int) -> list[str]:
    n = max(1, int(n))
    return [s[i: i + n] for i in range(0, len(s), n)]


def _partial_input(raw: str) -> dict:
    from jiter import from_json  # the SDK's own partial-JSON parser

    try:
        value = from_json(raw.encode(), partial_mode=True) if raw else {}
    except ValueError:
        value = {}
    return value if isinstance(value, dict) else {}


@dataclass
class Emission:
    """One reply as sent to one request."""

    msg_id: str
    model: str
    blocks: list[dict]  # complete content blocks, as in the final message
    partial: dict | None  # the unfinished last block (streaming only)
    finish_partial: dict | None  # that block completed, for a "finish" stall
    stop_reason: str | None
    stop_sequence: str | None
    stop_details: dict | None
    cache: CacheUsage
    output_tokens: int
    thinking_tokens: int
    display: str
    server_tool_use: dict | None = None  # usage.server_tool_use, when a server tool ran


def _sign(block: dict, model: str, display: str, signer: ThinkingSigner) -> dict:
    out = copy.deepcopy(block)
    if out.get("type") == "thinking":
        text = out.get("thinking", "")
        out.setdefault("signature", signer.sign(model, text, display))
        if display == "omitted":
            out["thinking"] = ""
    elif out.get("type") == "redacted_thinking":
        out.setdefault("data", signer.redacted_data(model))
    elif out.get("type") == "tool_use" and "partial_json" in out:
        out["input"] = _partial_input(out["partial_json"])
    return out


def materialize(reply: Reply, *, model: str, signed_for: str, display: str,
                signer: ThinkingSigner, cache: CacheUsage, max_tokens: int) -> Emission:
    """``model`` is the model the message names; ``signed_for`` the one its thinking
    signatures bind to (the request's model, which served it)."""
    scripted = reply._complete_blocks()
    out_tokens, thinking_tokens = output_tokens(scripted)
    if reply.stop_reason == "max_tokens":
        out_tokens = max_tokens
    if reply.output_tokens is not None:
        out_tokens = reply.output_tokens
    if reply.thinking_tokens is not None:
        thinking_tokens = reply.thinking_tokens
    partial = copy.deepcopy(reply.partial)
    finish = None
    if partial is not None and partial["type"] in ("text", "thinking"):
        finish = _sign(partial, signed_for, display, signer)
        if partial["type"] == "thinking" and display == "omitted":
            partial["thinking"] = ""
    return Emission(
        msg_id=rand_id("msg_"), model=model,
        blocks=[_sign(b, signed_for, display, signer) for b in reply.blocks],
        partial=partial, finish_partial=finish, stop_reason=reply.stop_reason,
        stop_sequence=reply.matched_stop_sequence, stop_details=reply.stop_details, cache=cache,
        output_tokens=out_tokens, thinking_tokens=thinking_tokens, display=display)


def _public(block: dict) -> dict:
    return {k: v for k, v in block.items() if k != "partial_json"}


def message_json(em: Emission) -> dict:
    """The non-streaming ``Message`` (a 'finish' partial counted as complete)."""
    blocks = [_public(b) for b in em.blocks]
    if em.finish_partial is not None:
        blocks.append(em.finish_partial)
    return {"id": em.msg_id, "type": "message", "role": "assistant", "model": em.model,
            "content": blocks, "stop_reason": em.stop_reason,
            "stop_sequence": em.stop_sequence, "stop_details": em.stop_details,
            "usage": message_usage(em.cache, em.output_tokens, em.thinking_tokens,
                                   em.server_tool_use)}


def _ev(name: str, payload: dict) -> tuple:
    return ("event", name, payload)


def _delta(index: int, delta: dict) -> tuple:
    return _ev("content_block_delta", {"type": "content_block_delta", "index": index,
                                       "delta": delta})


def _start(index: int, block: dict) -> tuple:
    return _ev("content_block_start", {"type": "content_block_start", "index": index,
                                       "content_block": block})


def _stop(index: int) -> tuple:
    return _ev("content_block_stop", {"type": "content_block_stop", "index": index})


def _block_events(index: int, block: dict, reply: Reply, *, finished: bool) -> list[tuple]:
    kind = block["type"]
    if kind == "text":
        ev = [_start(index, {"type": "text", "text": ""})]
        ev += [_delta(index, {"type": "citations_delta", "citation": c})
               for c in block.get("citations") or []]
        ev += [_delta(index, {"type": "text_delta", "text": p})
               for p in _split(block["text"], reply.chunk)]
    elif kind in ("tool_use", "server_tool_use"):
        ev = [_start(index, {"type": kind, "id": block["id"], "name": block["name"], "input": {}})]
        raw = block["partial_json"] if "partial_json" in block else dumps(block.get("input", {}))
        ev += [_delta(index, {"type": "input_json_delta", "partial_json": p})
               for p in _split(raw, reply.json_chunk)]
    elif kind == "thinking":
        ev = [_start(index, {"type": "thinking", "thinking": "", "signature": ""})]
        ev += [_delta(index, {"type": "thinking_delta", "thinking": p})
               for p in _split(block.get("thinking", ""), reply.chunk)]
        if finished:
            ev.append(_delta(index, {"type": "signature_delta", "signature": block["signature"]}))
    elif kind == "redacted_thinking":
        ev = [_start(index, {"type": "redacted_thinking", "data": block["data"]})]
    else:  # any other block the script names is sent whole
        ev = [_start(index, block)]
    if finished:
        ev.append(_stop(index))
    return ev


def _message_end(em: Emission) -> list[tuple]:
    delta: dict[str, Any] = {"stop_reason": em.stop_reason, "stop_sequence": em.stop_sequence}
    if em.stop_details is not None:
        delta["stop_details"] = em.stop_details
    return [_ev("message_delta", {"type": "message_delta", "delta": delta,
                                  "usage": delta_usage(em.cache, em.output_tokens,
                                                       em.thinking_tokens,
                                                       em.server_tool_use)}),
            _ev("message_stop", {"type": "message_stop"})]


def stream_plan(em: Emission, reply: Reply) -> tuple[list[tuple], list[tuple]]:
    """Return (events before the end behaviour, events after it: the tail for 'finish')."""
    plan: list[tuple] = [_ev("message_start", {"type": "message_start", "message": {
        "id": em.msg_id, "type": "message", "role": "assistant", "model": em.model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": start_usage(em.cache)}})]
    pinged = False

    def add(events: list[tuple]) -> None:
        nonlocal pinged
        plan.append(events[0])
        if not pinged:
            plan.append(_ev("ping", {"type": "ping"}))
            pinged = True
        plan.extend(events[1:])

    for index, block in enumerate(em.blocks):
        add(_block_events(index, block, reply, finished=True))
    tail: list[tuple] = []
    index = len(em.blocks)
    if em.partial is not None:
        add(_block_events(index, em.partial, reply, finished=False))
        if em.finish_partial is not None and em.finish_partial["type"] == "thinking":
            tail.append(_delta(index, {"type": "signature_delta",
                                       "signature": em.finish_partial["signature"]}))
        tail.append(_stop(index))
    if not pinged:
        plan.append(_ev("ping", {"type": "ping"}))
    if reply.end == "complete":
        plan.extend(_message_end(em))
    elif reply.end == "stall":
        plan.append(("stall",))
        tail.extend(_message_end(em))
    elif reply.end == "error_event":
        plan.append(_ev("error", error_body(reply.error_type or "api_error",
                                            reply.error_message or "error")))
        tail = []
    else:
        raise ValueError(f"unknown reply end {reply.end!r}")
    return plan, tail
