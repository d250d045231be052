"""The well-known services by name: wire format, default URL, key variable, models.

A preset is a :class:`~agent_tui.providers.config.ProviderConfig` like any the user
writes; a settings entry of the same name changes it (``"ollama": {"baseURL":
"http://gpu-box:11434/v1"}``). Servers that run on this machine (Ollama, LM Studio,
llama.cpp, vLLM) need no key and cost nothing.

Model lists name models the service is known to offer; any other id the service
has works too (``--model openrouter/any/model``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic is loaded only when a provider is made: the command line
    from agent_tui.providers.config import ProviderConfig  # reads the names first

_M = dict[str, Any]


def _p(inp: float, out: float, read: float) -> _M:
    return {"price": {"input": inp, "output": out, "cacheRead": read, "cacheWrite": inp}}


# OpenAI's published prices (USD per MTok: input, output, cached input).
_OPENAI_MODELS: dict[str, _M] = {
    "gpt-5": {"contextWindow": 400_000, "maxOutput": 128_000, "images": True,
              "reasoning": True, **_p(1.25, 10, 0.125)},
    "gpt-5-mini": {"contextWindow": 400_000, "maxOutput": 128_000, "images": True,
                   "reasoning": True, **_p(0.25, 2, 0.025)},
    "gpt-5-nano": {"contextWindow": 400_000, "maxOutput": 128_000, "images": True,
                   "reasoning": True, **_p(0.05, 0.40, 0.005)},
    "gpt-4.1": {"contextWindow": 1_047_576, "maxOutput": 32_768, "images": True,
                **_p(2, 8, 0.5)},
    "gpt-4.1-mini": {"contextWindow": 1_047_576, "maxOutput": 32_768, "images": True,
                     **_p(0.4, 1.6, 0.1)},
    "gpt-4o": {"contextWindow": 128_000, "maxOutput": 16_384, "images": True,
               **_p(2.5, 10, 1.25)},
    "gpt-4o-mini": {"contextWindow": 128_000, "maxOutput": 16_384, "images": True,
                    **_p(0.15, 0.6, 0.075)},
    "o3": {"contextWindow": 200_000, "maxOutput": 100_000, "images": True, "reasoning": True,
           **_p(2, 8, 0.5)},
    "o4-mini": {"contextWindow": 200_000, "maxOutput": 100_000, "images": True,
                "reasoning": True, **_p(1.1, 4.4, 0.275)},
}

_LOCAL = {"free": True}

PRESETS: dict[str, _M] = {
    "openai": {"api": "openai-responses", "baseURL": "https://api.openai.com/v1",
               "apiKeyEnv": "OPENAI_API_KEY", "baseURLEnv": "OPENAI_BASE_URL",
               "defaultModel": "gpt-5", "models": _OPENAI_MODELS},
    "openai-chat": {"api": "openai-chat", "baseURL": "https://api.openai.com/v1",
                    "apiKeyEnv": "OPENAI_API_KEY", "baseURLEnv": "OPENAI_BASE_URL",
                    "maxTokensParam": "max_completion_tokens",
                    "defaultModel": "gpt-5", "models": _OPENAI_MODELS},
    "openrouter": {"api": "openai-chat", "baseURL": "https://openrouter.ai/api/v1",
                   "apiKeyEnv": "OPENROUTER_API_KEY"},
    "deepseek": {"api": "openai-chat", "baseURL": "https://api.deepseek.com/v1",
                 "apiKeyEnv": "DEEPSEEK_API_KEY", "defaultModel": "deepseek-chat",
                 "models": {"deepseek-chat": {"contextWindow": 128_000, **_p(0.28, 0.42, 0.028)},
                            "deepseek-reasoner": {"contextWindow": 128_000, "reasoning": True,
                                                  **_p(0.28, 0.42, 0.028)}}},
    "groq": {"api": "openai-chat", "baseURL": "https://api.groq.com/openai/v1",
             "apiKeyEnv": "GROQ_API_KEY"},
    "mistral": {"api": "openai-chat", "baseURL": "https://api.mistral.ai/v1",
                "apiKeyEnv": "MISTRAL_API_KEY"},
    "xai": {"api": "openai-chat", "baseURL": "https://api.x.ai/v1", "apiKeyEnv": "XAI_API_KEY"},
    "together": {"api": "openai-chat", "baseURL": "https://api.together.xyz/v1",
                 "apiKeyEnv": "TOGETHER_API_KEY"},
    "ollama": {"api": "openai-chat", "baseURL": "http://127.0.0.1:11434/v1", **_LOCAL},
    "lmstudio": {"api": "openai-chat", "baseURL": "http://127.0.0.1:1234/v1", **_LOCAL},
    "llamacpp": {"api": "openai-chat", "baseURL": "http://127.0.0.1:8080/v1", **_LOCAL},
    "vllm": {"api": "openai-chat", "baseURL": "http://127.0.0.1:8000/v1", **_LOCAL},
    # Anthropic-compatible servers: what they lack is said here, not assumed away.
    "kimi": {"api": "anthropic", "baseURL": "https://api.moonshot.ai/anthropic",
             "apiKeyEnv": "MOONSHOT_API_KEY", "lacks": ["models", "cacheControl"]},
    "glm": {"api": "anthropic", "baseURL": "https://api.z.ai/api/anthropic",
            "apiKeyEnv": "ZAI_API_KEY", "lacks": ["models"]},
}

#: The names built in besides the presets (the Anthropic SDK's own providers).
BUILTIN_NAMES = ("anthropic", "bedrock", "vertex", "scripted")


def known_names(configured: Mapping[str, Any] | None = None) -> list[str]:
    return [*BUILTIN_NAMES, *PRESETS, *[n for n in (configured or {}) if n not in PRESETS]]


def resolve(name: str, configured: Mapping[str, Mapping[str, Any]] | None = None,
            ) -> ProviderConfig:
    """The provider ``name`` as the presets and the settings' entries make it."""
    from agent_tui.providers.config import ProviderConfig, ProviderConfigError

    entry = (configured or {}).get(name)
    preset = PRESETS.get(name)
    if preset is None and entry is None:
        raise ProviderConfigError(
            f"unknown provider {name!r} (known: {', '.join(known_names(configured))}; "
            "or add it under \"providers\" in your settings)")
    if preset is None:
        assert entry is not None
        if "api" not in entry or "baseURL" not in entry:
            raise ProviderConfigError(f"providers.{name}: give \"api\" and \"baseURL\"")
        return ProviderConfig.model_validate(entry)
    base = ProviderConfig.model_validate(preset)
    return base.merged(entry) if entry else base
