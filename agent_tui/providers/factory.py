"""Makes a provider from its name: a built-in one, a preset, or a ``providers`` entry.

The SDKs are imported only for the wire format chosen (each takes about a second).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agent_tui.providers import base
from agent_tui.providers.config import Api, ProviderConfig, ProviderConfigError
from agent_tui.providers.presets import PRESETS, resolve
from agent_tui.providers.router import ProviderRouter


def make_configured(name: str, configured: Mapping[str, Mapping[str, Any]] | None = None,
                    ) -> base.Provider:
    """The provider ``name`` (a preset or an entry); raises ProviderConfigError for an
    unknown name and ProviderError for a missing key."""
    return from_config(name, resolve(name, configured))


def from_config(name: str, cfg: ProviderConfig) -> base.Provider:
    match cfg.api:
        case Api.OPENAI_CHAT:
            from agent_tui.providers.openai_wire.chat import OpenAIChatProvider

            return OpenAIChatProvider(name, cfg)
        case Api.OPENAI_RESPONSES:
            from agent_tui.providers.openai_wire.responses import OpenAIResponsesProvider

            return OpenAIResponsesProvider(name, cfg)
        case Api.ANTHROPIC:
            from agent_tui.providers.compatible import CompatibleAnthropicProvider

            return CompatibleAnthropicProvider(name, cfg)


def routed(default_name: str, default: base.Provider,
           make_builtin: Callable[[str], base.Provider],
           configured: Mapping[str, Mapping[str, Any]] | None = None) -> ProviderRouter:
    """``default`` behind a router that knows every built-in name, preset and entry."""
    from agent_tui.providers.presets import BUILTIN_NAMES

    entries = dict(configured or {})

    def make(name: str) -> base.Provider:
        if name in BUILTIN_NAMES and name not in entries:
            return make_builtin(name)
        return make_configured(name, entries)

    listed: dict[str, list[str]] = {}
    for name in [*PRESETS, *entries]:
        if _listed(name, entries):
            try:
                listed[name] = list(resolve(name, entries).models)
            except (ProviderConfigError, ValueError):
                continue  # said when the settings were read, and again when it is used
    return ProviderRouter(default_name, default, make,
                          [*BUILTIN_NAMES, *PRESETS, *entries], listed)


def _listed(name: str, entries: Mapping[str, Any]) -> bool:
    """Another provider's models are offered in /model when the user set it up: an
    entry of theirs, or the preset's key in the environment."""
    import os

    if name in entries:
        return True
    key_env = PRESETS[name].get("apiKeyEnv")
    return bool(key_env and os.environ.get(key_env))
