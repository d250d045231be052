"""What each endpoint of the fake answers, apart from HTTP (the handler does the bytes).

* ``POST /v1/messages`` -> :func:`prepare_messages`: validation (see
  :mod:`tests.fake_api.validate` for the order), then the next scripted reply, the cache
  accounting, the emission and the usage record. A rejection never takes a reply from the
  queue. ``max_tokens: 0`` (cache pre-warming) takes none either: it answers an empty
  message with ``stop_reason: "max_tokens"`` and writes the cache.
* ``POST /v1/messages/count_tokens`` -> :func:`count_tokens`: the same validation (no
  ``max_tokens`` needed), ``{"input_tokens": N}`` for the whole prompt.
* ``GET /v1/models`` and ``GET /v1/models/{id}`` -> :func:`models`.

The functions take the :class:`~tests.fake_api.server.FakeAnthropicServer` and use its
internal state (catalogue, queue, cache, signer, emitted turns, usage list), named by the
:class:`ServerState` protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import unquote

from .cache import CacheUsage, PromptCache
from .models import ModelSpec, PageError, list_page, model_info
from .replies import Reply
from .sse import Emission, materialize
from .thinking import EmittedTurns, ThinkingSigner
from .tokens import prompt_units
from .usage import START_OUTPUT_TOKENS, UsageRecord
from .validate import model_rules_error, unknown_model_message, validate_messages, window_error
from .validate_images import MAX_REQUEST_BYTES, media_error
from .validate_cache import breakpoints
from .validate_thinking import config_error, display_mode
from .web_search import EmittedSearches, ScriptError, altered_error, resolve

__all__ = ["Rejection", "Prepared", "ServerState", "prepare_messages", "count_tokens", "models"]


class ServerState(Protocol):
    """The parts of the server the endpoints read and update."""

    validate: bool
    allow_assistant_last: bool
    _cache: PromptCache
    _signer: ThinkingSigner
    _emitted: EmittedTurns
    _searches: EmittedSearches

    @property
    def models(self) -> dict[str, ModelSpec]: ...

    def _model_spec(self, model_id: Any) -> ModelSpec | None: ...

    def _next_reply(self, body: dict) -> Reply: ...

    def _record_usage(self, record: UsageRecord) -> int: ...

    def _record_error(self, text: str) -> None: ...


@dataclass(frozen=True)
class Rejection:
    status: int
    error_type: str
    message: str

    @classmethod
    def bad(cls, message: str) -> "Rejection":
        return cls(400, "invalid_request_error", message)


@dataclass
class Prepared:
    reply: Reply
    emission: Emission | None  # None: the reply is a scripted HTTP error
    usage_index: int | None


def _is_pause_continuation(fake: ServerState, body: Any) -> bool:
    try:
        last = body["messages"][-1]
    except (TypeError, KeyError, IndexError):
        return False
    return (isinstance(last, dict) and last.get("role") == "assistant"
            and isinstance(last.get("content"), list)
            and fake._emitted.is_paused_content(last["content"]))


def _common(fake: ServerState, body: Any, *, for_count: bool):
    """Validation shared by both message endpoints: (spec, units) or a Rejection."""
    if fake.validate:
        allow_last = fake.allow_assistant_last or _is_pause_continuation(fake, body)
        err = validate_messages(body, allow_assistant_last=allow_last or for_count,
                                require_max_tokens=not for_count) or media_error(body)
        if err:
            return Rejection.bad(err)
    elif not isinstance(body, dict):
        return Rejection.bad("Request body must be a JSON object")
    spec = fake._model_spec(body.get("model"))
    if spec is None:
        return Rejection(404, "not_found_error", unknown_model_message(str(body.get("model"))))
    if fake.validate:
        err = (config_error(body, spec) if for_count
               else model_rules_error(body, spec, fake._signer, fake._emitted))
        err = err or altered_error(body, fake._searches)
        if err:
            return Rejection.bad(err)
    try:
        units = prompt_units(body, keeps_prior_thinking=spec.keeps_prior_thinking)
    except (AttributeError, TypeError, KeyError):  # validation off and a malformed body
        units = []
    return spec, units


def prepare_messages(fake: ServerState, idx: int, body: Any) -> Rejection | Prepared:
    checked = _common(fake, body, for_count=False)
    if isinstance(checked, Rejection):
        return checked
    spec, units = checked
    total = sum(u.tokens for u in units)
    if fake.validate:
        err = window_error(body, spec, total)
        if err:
            return Rejection.bad(err)
    max_tokens = body.get("max_tokens") or 0
    if body.get("max_tokens") == 0:
        reply = Reply(blocks=[], stop_reason="max_tokens", output_tokens=0)
    else:
        reply = fake._next_reply(body)
    if reply.kind == "error":
        return Prepared(reply, None, None)
    try:
        searched, searches = resolve(reply.blocks, body)
    except ScriptError as exc:
        fake._record_error(f"fake API script: {exc}")
        return Rejection(500, "api_error", f"fake API script: {exc}")
    reply = replace(reply, blocks=searched)
    try:
        bps = breakpoints(units, body.get("cache_control"))
    except (AttributeError, TypeError):
        bps = []
    usage = fake._cache.account(units, bps, spec.min_cacheable_tokens) if units \
        else CacheUsage.uncached(1)
    em = materialize(reply, model=reply.model or str(body.get("model")),
                     signed_for=str(body.get("model")), display=display_mode(body, spec),
                     signer=fake._signer, cache=usage, max_tokens=max_tokens)
    if searches or any(b.get("type") == "web_search_tool_result" for b in em.blocks):
        em.server_tool_use = {"web_search_requests": searches, "web_fetch_requests": 0}
    fake._emitted.add(str(body.get("model")), em.blocks, paused=em.stop_reason == "pause_turn")
    fake._searches.add(em.blocks)
    record = UsageRecord(
        request_index=idx, model=str(body.get("model")), stream=bool(body.get("stream")),
        input_tokens=usage.input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cache_creation_5m=usage.cache_creation_5m, cache_creation_1h=usage.cache_creation_1h,
        output_tokens=START_OUTPUT_TOKENS if body.get("stream") else 0,  # nothing sent yet
        planned_output_tokens=em.output_tokens, thinking_tokens=em.thinking_tokens,
        stop_reason=em.stop_reason, web_search_requests=searches)
    return Prepared(reply, em, fake._record_usage(record))


def count_tokens(fake: ServerState, body: Any) -> tuple[int, dict]:
    checked = _common(fake, body, for_count=True)
    if isinstance(checked, Rejection):
        return checked.status, {"type": checked.error_type, "message": checked.message}
    _spec, units = checked
    return 200, {"input_tokens": max(1, sum(u.tokens for u in units))}


def models(fake: ServerState, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
    """``(status, body or error dict)`` for ``/v1/models`` and ``/v1/models/{id}``."""
    if path == "/v1/models":
        try:
            return 200, list_page(list(fake.models.values()), query)
        except PageError as exc:
            return 400, {"type": "invalid_request_error", "message": str(exc)}
    model_id = unquote(path[len("/v1/models/"):])
    spec = fake.models.get(model_id)
    if spec is None:
        return 404, {"type": "not_found_error", "message": unknown_model_message(model_id)}
    return 200, model_info(spec)
