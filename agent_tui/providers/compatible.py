"""An Anthropic-compatible server (Ollama, llama.cpp, DeepSeek, Kimi, GLM) through the
Anthropic SDK with its base URL.

What such a server lacks is configured (``lacks`` in its config: ``models``,
``cacheControl``, ``thinking``) or detected, never assumed:

- no Models API: a 404 or 405 for ``GET /v1/models/{id}`` is remembered, and the
  configuration's models are what the session knows;
- ``cache_control`` or ``thinking`` refused: a 400 whose message names it is
  remembered, and the request is sent once more without it (``request_stripped``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agent_tui.providers import base
from agent_tui.providers.anthropic import AnthropicProvider
from agent_tui.providers.config import NO_KEY, ProviderConfig, info_from

_FEATURES = {"cache_control": "cacheControl", "thinking": "thinking"}


class CompatibleAnthropicProvider(AnthropicProvider):
    def __init__(self, name: str, cfg: ProviderConfig) -> None:
        key = cfg.key()
        if not key and cfg.api_key_env and not cfg.free:
            raise base.ProviderError(f"{name}: no API key: set {cfg.api_key_env}",
                                     kind=base.ErrorKind.AUTHENTICATION)
        super().__init__(api_key=key or NO_KEY, base_url=cfg.url())
        self.name = name
        self.cfg = cfg
        self.default_model = cfg.default_model or next(iter(cfg.models), "")
        self.lacks = set(cfg.lacks)

    def strip(self, request: base.ModelRequest) -> base.ModelRequest:
        """The request without what the server lacks."""
        update: dict[str, Any] = {}
        if "thinking" in self.lacks:
            update["thinking"] = None
            update["messages"] = [_without(m, thinking=True) for m in request.messages]
        if "cacheControl" in self.lacks:
            messages = update.get("messages", request.messages)
            update["messages"] = [_without(m, cache=True) for m in messages]
            update["tools"] = [{k: v for k, v in t.items() if k != "cache_control"}
                               for t in request.tools]
            if not isinstance(request.system, str):
                update["system"] = [{k: v for k, v in b.items() if k != "cache_control"}
                                    for b in request.system]
        return request.model_copy(update=update) if update else request

    async def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        sent = False
        while True:
            inner = super().stream(self.strip(request))
            try:
                async for event in inner:
                    sent = True
                    yield event
                return
            except base.ProviderError as exc:
                lacking = self._lacking(exc)
                if sent or lacking is None:
                    raise
                self.lacks.add(lacking)  # learnt: said in the error's words once more below
            finally:
                await base.close_stream(inner)

    def _lacking(self, exc: base.ProviderError) -> str | None:
        if exc.status != 400:
            return None
        text = str(exc).lower()
        return next((name for word, name in _FEATURES.items()
                     if word in text and name not in self.lacks), None)

    async def model_info(self, model: str) -> base.ModelInfo | None:
        entry = self.cfg.models.get(model)
        if "models" not in self.lacks:
            try:
                return await super().model_info(model)
            except base.ProviderError as exc:
                if exc.status not in (404, 405):
                    raise
                await self.list_models()  # a 404 there too: the server has no Models API
                if "models" not in self.lacks:
                    raise  # it has one, without this model
        return info_from(model, entry) if entry is not None else None

    async def list_models(self) -> list[base.ModelInfo]:
        if "models" not in self.lacks:
            try:
                return await super().list_models()
            except base.ProviderError as exc:
                if exc.status not in (404, 405):
                    raise
                self.lacks.add("models")
        return [info_from(m, e) for m, e in self.cfg.models.items()]


def _without(message: dict[str, Any], *, thinking: bool = False, cache: bool = False,
             ) -> dict[str, Any]:
    content = message["content"]
    if isinstance(content, str):
        return message
    blocks = [b for b in content
              if not (thinking and b.get("type") in ("thinking", "redacted_thinking"))]
    if cache:
        blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
    return {**message, "content": blocks}
