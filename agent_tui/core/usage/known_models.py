"""What known Claude models offer (thinking types, effort levels, image input), used
until the Models API answers for the model.

A model's first request is built before ``GET /v1/models/{id}`` has answered (it is
asked in the background); for a model in this table the request needs no answer: it
sends what the model offers, as Claude Code does for its own models. The Models API's
answer wins once it is there. A model not in the table is unknown: its first request
waits for the lookup (``core/turn/turn.py``).

Each row is what Anthropic's documentation says of the model (the adaptive thinking,
extended thinking and effort pages, and the model overviews). A model whose
documentation leaves one of these open, or says it two ways (Claude Opus 4.7 and 4.8),
is left out rather than guessed: an unknown model costs one short wait, a wrong row a
rejected request. Where only ``disabled`` is left open, the row keeps what an unknown
model gets (``off`` sends it). An id matches its row
exactly, or with a date (``-20251001``), a Bedrock version (``-v1:0``), a Bedrock or
Vertex form or a route (``anthropic/``) around it; a newer model of the same family
is not assumed to offer what the older one does.
"""

from __future__ import annotations

import re

from agent_tui.core.usage.pricing import ANTHROPIC_ROUTES
from agent_tui.providers.base import ModelInfo

ALL_EFFORT = ["low", "medium", "high", "xhigh", "max"]
TO_MAX = ["low", "medium", "high", "max"]  # before xhigh


def _row(model_id: str, *, adaptive: bool, budget: bool, disabled: bool = True,
         effort: list[str] | None = None) -> ModelInfo:
    return ModelInfo(id=model_id, thinking_adaptive=adaptive, thinking_enabled=budget,
                     thinking_disabled=disabled, effort_levels=list(effort or []),
                     image_input=True)


_ROWS = [
    # The 5.5 models think adaptively and take no budget; Opus 5.5 cannot be turned off.
    _row("claude-opus-5-5", adaptive=True, budget=False, disabled=False, effort=ALL_EFFORT),
    _row("claude-sonnet-5-5", adaptive=True, budget=False, effort=ALL_EFFORT),
    _row("claude-haiku-5-5", adaptive=True, budget=False, effort=ALL_EFFORT),
    # Adaptive thinking only: a budget or "disabled" is a 400.
    _row("claude-fable-5", adaptive=True, budget=False, disabled=False, effort=ALL_EFFORT),
    _row("claude-mythos-5", adaptive=True, budget=False, disabled=False, effort=ALL_EFFORT),
    _row("claude-mythos-preview", adaptive=True, budget=False, disabled=False, effort=TO_MAX),
    # Adaptive thinking, and a budget still taken (deprecated).
    _row("claude-opus-5", adaptive=True, budget=True, effort=ALL_EFFORT),
    _row("claude-opus-4-6", adaptive=True, budget=True, effort=TO_MAX),
    _row("claude-sonnet-4-6", adaptive=True, budget=True, effort=TO_MAX),
    # Extended thinking with a budget only.
    _row("claude-opus-4-5", adaptive=False, budget=True, effort=["low", "medium", "high"]),
    _row("claude-sonnet-4-5", adaptive=False, budget=True),
    _row("claude-haiku-4-5", adaptive=False, budget=True),
    _row("claude-opus-4-1", adaptive=False, budget=True),
    _row("claude-opus-4-0", adaptive=False, budget=True),
    _row("claude-sonnet-4-0", adaptive=False, budget=True),
]
KNOWN: dict[str, ModelInfo] = {row.id: row for row in _ROWS}

# A cloud's forms of a model id: Bedrock's ``us.anthropic.claude-x-v1:0`` (or an ARN
# ending in it), Vertex's ``claude-x@20250929``.
_CLOUD_FORM = re.compile(r"^(?:.*/)?(?:[a-z-]+\.)?anthropic\.|@.*$")
# What follows the name in a dated id or a Bedrock id: ``-20250929``, ``-v1:0``.
_SUFFIX = re.compile(r"(?:-\d{8})?(?:-v\d+(?::\d+)?)?$")
# The older Claude 4 models' dated ids carry no minor version.
_DATED_AS = {"claude-opus-4": "claude-opus-4-0", "claude-sonnet-4": "claude-sonnet-4-0"}


def bare_id(model_id: str) -> str:
    """The model's own name without a route (``anthropic/``) or a cloud's form."""
    for route in ANTHROPIC_ROUTES:
        model_id = model_id.removeprefix(route)
    return _CLOUD_FORM.sub("", model_id)


def known_model(model_id: str) -> ModelInfo | None:
    """What the table says ``model_id`` offers (its row under the asked id), or None
    when the model is not in it."""
    name = _SUFFIX.sub("", bare_id(model_id))
    row = KNOWN.get(_DATED_AS.get(name, name))
    return row.model_copy(update={"id": model_id}) if row is not None else None
