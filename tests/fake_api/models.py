"""The fake's model catalogue: what each model accepts, and the Models API over it.

A :class:`ModelSpec` describes one model. The server serves its catalogue as the
Models API (``GET /v1/models``, ``GET /v1/models/{id}``, the SDK's ``ModelInfo``) and
applies it to every Messages request:

* ``max_input_tokens`` is the context window: a prompt above it is the 400
  ``prompt is too long: N tokens > M maximum``;
* ``max_tokens`` is the output ceiling: above it, the 400 ``max_tokens: N > M, which is
  the maximum allowed number of output tokens for MODEL``;
* ``overflow_is_error=True`` (models before Claude 4.5) also rejects ``input + max_tokens``
  above the window (``input length and `max_tokens` exceed context limit: ...``); on
  newer models that is accepted and a reply that runs into the window stops with
  ``model_context_window_exceeded`` (script it with ``Reply.context_window_exceeded``);
* ``thinking_types`` are the ``thinking.type`` values accepted (others are the 400s of
  the thinking troubleshooting page); ``thinking_default_on`` says whether the model thinks
  when ``thinking`` is omitted (adaptive); ``display_default`` is what an unset
  ``display`` means (``"omitted"`` sends thinking blocks with empty text);
* ``effort_levels`` are the accepted ``output_config.effort`` values (empty: the model
  does not take effort); ``effort_cap_thinking_disabled`` caps effort when thinking is
  explicitly disabled (Claude Opus 5);
* ``min_cacheable_tokens`` is the minimum cacheable prompt length (default 1024);
* ``keeps_prior_thinking=False`` strips earlier turns' thinking from the prompt;
* ``forced_tool_use_with_thinking`` says whether ``tool_choice`` any/tool is accepted
  while adaptive thinking is on (``enabled`` thinking never accepts it).

:data:`DEFAULT_MODELS` (newest first, the order the Models API lists them) holds
``claude-opus-5-5``, ``claude-sonnet-5-5`` (the agent's default model),
``claude-haiku-4-5`` and three test models that existing tests and benches name:
``claude-test``, ``claude-bench``, ``claude-chaos`` (200k window, 64k output, thinking
off unless asked, every thinking type and effort level accepted). A test with its own
small window::

    FakeAnthropicServer(models=[ModelSpec("claude-test", max_input_tokens=4000)])
    srv.configure_model("claude-sonnet-5-5", max_input_tokens=4000)   # or at run time
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

__all__ = ["ModelSpec", "DEFAULT_MODELS", "TEST_MODEL_IDS", "EFFORT_LEVELS", "PageError",
           "model_info", "list_page", "generic_model", "catalogue"]

EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
THINKING_TYPES = ("adaptive", "between_tools", "disabled", "enabled")


@dataclass(frozen=True)
class ModelSpec:
    """One model of the catalogue (see the module docstring for what each field does)."""

    id: str
    display_name: str = ""
    created_at: str = "2026-01-01T00:00:00Z"
    lifecycle: str = "active"  # "active" | "deprecated" | "retired"
    line: str | None = None
    max_input_tokens: int = 200_000
    max_tokens: int = 64_000
    overflow_is_error: bool = False
    thinking_types: frozenset[str] = frozenset({"enabled", "adaptive", "disabled"})
    thinking_default_on: bool = False
    display_default: str = "summarized"
    effort_levels: tuple[str, ...] = EFFORT_LEVELS
    effort_cap_thinking_disabled: str | None = None
    min_cacheable_tokens: int = 1024
    keeps_prior_thinking: bool = True
    forced_tool_use_with_thinking: bool = True
    image_input: bool = True
    pdf_input: bool = True
    extra_capabilities: dict[str, Any] = field(default_factory=dict)

    def with_changes(self, **changes: Any) -> "ModelSpec":
        if "thinking_types" in changes:
            changes["thinking_types"] = frozenset(changes["thinking_types"])
        return replace(self, **changes)


def _supported(flag: bool) -> dict:
    return {"supported": bool(flag)}


def model_info(spec: ModelSpec) -> dict:
    """The ``ModelInfo`` JSON of a model (every capability key present, as documented)."""
    thinking_on = bool(spec.thinking_types - {"disabled"})
    effort = {level: _supported(level in spec.effort_levels) for level in EFFORT_LEVELS}
    effort["supported"] = bool(spec.effort_levels)
    caps: dict[str, Any] = {
        "batch": _supported(True),
        "citations": _supported(True),
        "code_execution": _supported(True),
        "context_management": {"clear_thinking_20251015": _supported(True),
                               "clear_tool_uses_20250919": _supported(True),
                               "compact_20260112": _supported(True), "supported": True},
        "effort": effort,
        "image_input": _supported(spec.image_input),
        "pdf_input": _supported(spec.pdf_input),
        "server_tools": {"code_execution": _supported(True), "supported": True,
                         "web_search": _supported(True)},
        "structured_outputs": _supported(True),
        "thinking": {"supported": thinking_on,
                     "types": {t: _supported(t in spec.thinking_types or (
                         t == "disabled" and not thinking_on)) for t in THINKING_TYPES}},
    }
    caps.update(spec.extra_capabilities)
    return {
        "type": "model", "id": spec.id, "display_name": spec.display_name or spec.id,
        "created_at": spec.created_at, "lifecycle": spec.lifecycle, "line": spec.line,
        "deprecated_at": None, "retires_at": None,
        "max_input_tokens": spec.max_input_tokens, "max_tokens": spec.max_tokens,
        "capabilities": caps,
    }


def generic_model(model_id: str) -> ModelSpec:
    """What an unknown id gets when the server accepts unknown models."""
    return ModelSpec(model_id, display_name=model_id)


class PageError(ValueError):
    """A ``GET /v1/models`` query the API would refuse (400 with this message)."""


def list_page(specs: Sequence[ModelSpec], query: dict[str, list[str]]) -> dict:
    """One page of ``GET /v1/models``: ``data``, ``has_more``, ``first_id``, ``last_id``.

    ``limit`` (1..1000, default 20), ``after_id`` / ``before_id`` cursors and
    ``lifecycle[]`` (default: active and deprecated; retired only when asked) as the SDK
    sends them.
    """
    raw_limit = (query.get("limit") or ["20"])[-1]
    try:
        limit = int(raw_limit)
    except ValueError:
        raise PageError("limit: Input should be a valid integer") from None
    if limit < 1:
        raise PageError("limit: Input should be greater than or equal to 1")
    if limit > 1000:
        raise PageError("limit: Input should be less than or equal to 1000")
    stages = query.get("lifecycle[]") or query.get("lifecycle") or ["active", "deprecated"]
    items = [s for s in specs if s.lifecycle in stages]
    ids = [s.id for s in items]
    after = (query.get("after_id") or [None])[-1]
    before = (query.get("before_id") or [None])[-1]
    for name, cursor in (("after_id", after), ("before_id", before)):
        if cursor is not None and cursor not in ids:
            raise PageError(f"{name}: no model with id {cursor!r} in this list")
    if before is not None:
        end = ids.index(before)
        start = max(0, end - limit)
        page, has_more = items[start:end], start > 0
    else:
        start = ids.index(after) + 1 if after is not None else 0
        page, has_more = items[start:start + limit], start + limit < len(items)
    data = [model_info(s) for s in page]
    return {"data": data, "has_more": has_more,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}


_FIVE_FIVE = dict(max_input_tokens=1_000_000, max_tokens=128_000, thinking_default_on=True,
                  display_default="omitted", min_cacheable_tokens=512)

TEST_MODEL_IDS = ("claude-test", "claude-bench", "claude-chaos")

DEFAULT_MODELS: tuple[ModelSpec, ...] = (
    # Claude Opus 5.5: adaptive thinking always on ("enabled" and "disabled" are 400s).
    ModelSpec("claude-opus-5-5", "Claude Opus 5.5", "2026-09-10T00:00:00Z", line="opus",
              thinking_types=frozenset({"adaptive"}), **_FIVE_FIVE),
    # Claude Sonnet 5.5: adaptive by default; "between_tools" turns up-front thinking off;
    # forced tool use is an error.
    ModelSpec("claude-sonnet-5-5", "Claude Sonnet 5.5", "2026-09-10T00:00:00Z", line="sonnet",
              thinking_types=frozenset({"adaptive", "disabled", "between_tools"}),
              forced_tool_use_with_thinking=False, **_FIVE_FIVE),
    # Claude Haiku 4.5: extended thinking only, no effort, 4,096-token cache minimum.
    ModelSpec("claude-haiku-4-5", "Claude Haiku 4.5", "2025-10-01T00:00:00Z", line="haiku",
              max_input_tokens=200_000, max_tokens=64_000,
              thinking_types=frozenset({"enabled", "disabled"}), effort_levels=(),
              min_cacheable_tokens=4096, keeps_prior_thinking=False),
    *(ModelSpec(mid, f"Test model {mid}", "2025-01-01T00:00:00Z") for mid in TEST_MODEL_IDS),
)


def catalogue(models: Iterable[ModelSpec | dict | str] | None) -> dict[str, ModelSpec]:
    """``{id: spec}`` from ``FakeAnthropicServer(models=...)`` (specs, dicts or bare ids)."""
    out: dict[str, ModelSpec] = {}
    for m in DEFAULT_MODELS if models is None else models:
        if isinstance(m, str):
            m = generic_model(m)
        elif isinstance(m, dict):
            m = ModelSpec(**m)
        if m.thinking_types.__class__ is not frozenset:
            m = m.with_changes(thinking_types=m.thinking_types)
        out[m.id] = m
    return out
