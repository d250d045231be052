"""One Messages request of a turn, built from the model view and the session's
settings: system prompt and cache breakpoints (``core/usage/cache.py``), tools in their
stable order, thinking (``core/usage/thinking.py``), effort, ``max_tokens``.
"""

from __future__ import annotations

from typing import Any

from agent_tui.core.usage.cache import mark_messages, system_blocks
from agent_tui.core.services.deps import SessionDeps
from agent_tui.core.history.history import View
from agent_tui.core.usage.thinking import ThinkingParams, request_params
from agent_tui.providers import base as model


def thinking_params(deps: SessionDeps) -> ThinkingParams:
    cfg = deps.config
    info = deps.limits.info(cfg.model)
    max_out = deps.limits.max_output(cfg.model)
    max_tokens = min(cfg.max_tokens, max_out) if max_out else cfg.max_tokens
    return request_params(cfg.thinking, info, max_tokens, max_out)


def in_tool_loop(messages: list[dict[str, Any]]) -> bool:
    """The request goes back with tool results for the newest assistant message."""
    return bool(messages) and messages[-1]["role"] == "user" and any(
        b.get("type") == "tool_result" for b in messages[-1]["content"]
    )


def build_request(deps: SessionDeps, view: View) -> model.ModelRequest:
    cfg = deps.config
    params = thinking_params(deps)
    thinking = params.thinking
    if view.stripped_in_last and in_tool_loop(view.messages) and thinking is not None:
        # The loop's assistant message lost the other model's thinking: with thinking
        # on, the API would want it back. This one request goes without.
        info = deps.limits.info(cfg.model)
        thinking = {"type": "disabled"} if info is None or info.thinking_disabled else None
    output_config = None
    info = deps.limits.info(cfg.model)
    if cfg.effort and info is not None and cfg.effort in info.effort_levels:
        output_config = {"effort": cfg.effort}
    cached = cfg.prompt_cache
    return model.ModelRequest(
        model=cfg.model,
        system=system_blocks(cfg.system) if cached else cfg.system,
        messages=mark_messages(view.messages) if cached else view.messages,
        tools=deps.tools.specs(),
        max_tokens=params.max_tokens,
        thinking=thinking,
        output_config=output_config,
    )
