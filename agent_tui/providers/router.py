"""One provider for the session, many behind it: ``PROVIDER/MODEL`` picks which.

A model id whose first part names a provider (a preset, a ``providers`` entry or a
built-in one) goes to that provider, the rest being its model id
(``openrouter/anthropic/claude-sonnet-4.5``); any other id goes to the session's
default provider unchanged. So ``/model ollama/qwen3-coder`` switches provider and
model mid-session: the model view travels along, in whichever wire format the next
provider speaks. Providers are made when first used (a missing key is then a
clear error for that request, and the session goes on).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from agent_tui.providers import base


class ProviderRouter(base.Provider):
    def __init__(self, default_name: str, default: base.Provider,
                 make: Callable[[str], base.Provider], names: list[str],
                 listed: dict[str, list[str]] | None = None) -> None:
        self.name = default.name
        self.default_name = default_name
        self.default_model = default.default_model
        self.model_aliases = default.model_aliases  # a cloud's ids for sonnet, opus, haiku
        self._made: dict[str, base.Provider] = {default_name: default}
        self._make = make
        self._names = set(names)
        self._listed = listed or {}  # other providers' configured models, by provider

    def route(self, model: str) -> tuple[str, str]:
        """The provider name and its own model id for ``model``."""
        head, sep, rest = model.partition("/")
        if sep and rest and head in self._names:
            return head, rest
        return self.default_name, model

    def provider(self, name: str) -> base.Provider:
        made = self._made.get(name)
        if made is None:
            try:
                made = self._make(name)
            except base.ProviderError:
                raise
            except Exception as exc:  # a missing key, a bad entry: this request fails
                raise base.ProviderError(f"{name}: {exc}",
                                         kind=base.ErrorKind.AUTHENTICATION) from None
            self._made[name] = made
        return made

    async def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
        name, model = self.route(request.model)
        inner = self.provider(name).stream(request.model_copy(update={"model": model}))
        try:
            async for event in inner:
                yield event
        finally:
            await base.close_stream(inner)  # the connection goes with the stream, at once

    async def model_info(self, model: str) -> base.ModelInfo | None:
        name, inner_model = self.route(model)
        info = await self.provider(name).model_info(inner_model)
        return info.model_copy(update={"id": model}) if info is not None else None

    async def list_models(self) -> list[base.ModelInfo]:
        found = list(await self._made[self.default_name].list_models())
        for name, models in self._listed.items():
            if name != self.default_name:
                found += [base.ModelInfo(id=f"{name}/{m}") for m in models]
        return found

    async def aclose(self) -> None:
        for made in self._made.values():
            await made.aclose()

