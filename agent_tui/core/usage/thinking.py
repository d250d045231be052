"""The thinking setting (``--thinking off|adaptive|BUDGET``) and what a request sends.

``auto`` (the default) follows what the model offers (the Models API's answer, or
until it is there the table of known models, ``core/usage/known_models.py``):
adaptive thinking where the model offers it, otherwise none. For a model known to
neither, the first request waits for the Models API (:func:`depends_on_model`). ``off`` sends
``{"type": "disabled"}`` where the model accepts it (newer models think unless told
not to). A budget is extended thinking with ``budget_tokens`` (>= 1024, and below
``max_tokens``: the request's ``max_tokens`` is raised to make room when the model
allows it).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from agent_tui.providers.base import ModelInfo

MIN_BUDGET = 1024
# Some models omit thinking text unless asked: the user should see what it thinks.
DISPLAY = "summarized"


class ThinkingMode(StrEnum):
    AUTO = "auto"
    OFF = "off"
    ADAPTIVE = "adaptive"
    BUDGET = "budget"


class ThinkingSetting(BaseModel):
    mode: ThinkingMode = ThinkingMode.AUTO
    budget: int = 0

    def __str__(self) -> str:
        return str(self.budget) if self.mode is ThinkingMode.BUDGET else self.mode.value


class ThinkingError(ValueError):
    pass


def parse_thinking(value: str | int | None) -> ThinkingSetting:
    """``off``, ``adaptive``, ``auto`` or a budget in tokens; a clear error otherwise."""
    if value is None or value == "":
        return ThinkingSetting()
    text = str(value).strip().lower()
    if text in ("auto", "off", "adaptive"):
        return ThinkingSetting(mode=ThinkingMode(text))
    if text in ("on", "enabled"):
        return ThinkingSetting(mode=ThinkingMode.ADAPTIVE)
    try:
        budget = int(text.replace("_", ""))
    except ValueError:
        raise ThinkingError(
            f"thinking: {value!r} is not off, adaptive, auto or a budget in tokens"
        ) from None
    if budget < MIN_BUDGET:
        raise ThinkingError(f"thinking: a budget must be at least {MIN_BUDGET} tokens (got {budget})")
    return ThinkingSetting(mode=ThinkingMode.BUDGET, budget=budget)


def depends_on_model(setting: ThinkingSetting, effort: str | None) -> bool:
    """Whether what a request sends depends on what the model offers: ``auto`` thinking
    (adaptive or none) and an effort (sent only where offered). The other settings
    are sent as asked until the Models API says the model refuses them."""
    return setting.mode is ThinkingMode.AUTO or bool(effort)


class ThinkingParams(BaseModel):
    thinking: dict[str, Any] | None = None
    max_tokens: int
    problem: str = ""  # why the setting could not be followed as asked


def request_params(
    setting: ThinkingSetting, info: ModelInfo | None, max_tokens: int, model_max: int | None
) -> ThinkingParams:
    """The ``thinking`` parameter and ``max_tokens`` of a request."""
    mode = setting.mode
    if mode is ThinkingMode.AUTO:
        if info is not None and info.thinking_adaptive:
            return ThinkingParams(thinking={"type": "adaptive", "display": DISPLAY},
                                  max_tokens=max_tokens)
        return ThinkingParams(max_tokens=max_tokens)  # the model's own default
    if mode is ThinkingMode.OFF:
        if info is not None and not info.thinking_disabled:
            return ThinkingParams(max_tokens=max_tokens,
                                  problem="this model cannot turn thinking off")
        return ThinkingParams(thinking={"type": "disabled"}, max_tokens=max_tokens)
    if mode is ThinkingMode.ADAPTIVE:
        if info is not None and not info.thinking_adaptive:
            return ThinkingParams(max_tokens=max_tokens,
                                  problem="this model does not offer adaptive thinking")
        return ThinkingParams(thinking={"type": "adaptive", "display": DISPLAY},
                              max_tokens=max_tokens)
    budget = setting.budget
    if info is not None and not info.thinking_enabled:
        return ThinkingParams(max_tokens=max_tokens,
                              problem="this model does not take a thinking budget")
    needed = budget + max(1024, max_tokens // 4)
    if max_tokens <= budget:
        if model_max is not None and needed > model_max:
            budget = max(MIN_BUDGET, model_max - max(1024, model_max // 4))
            return ThinkingParams(
                thinking={"type": "enabled", "budget_tokens": budget, "display": DISPLAY},
                max_tokens=model_max,
                problem=f"thinking budget lowered to {budget} to stay below max_tokens",
            )
        max_tokens = needed
    return ThinkingParams(thinking={"type": "enabled", "budget_tokens": budget, "display": DISPLAY},
                          max_tokens=max_tokens)
