"""A provider as configured: its wire format, where it is, its key, its models.

The ``providers`` settings key (from the user's settings, ``--settings``, or a trusted
project's file: an untrusted one could send the user's key to a server of its
choosing) holds one
:class:`ProviderConfig` per name::

    {"providers": {"work": {"api": "openai-chat", "baseURL": "https://llm.example/v1",
                            "apiKeyEnv": "WORK_LLM_KEY", "headers": {"X-Team": "a"},
                            "models": {"coder-1": {"contextWindow": 131072,
                                                   "price": {"input": 1, "output": 2}}}}}}

An entry named like a preset (:mod:`agent_tui.providers.presets`) changes that preset:
what it gives replaces the preset's field, its models join the preset's.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import os
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictInt, ValidationError

from agent_tui.providers.base import DeferredModel
from agent_tui.providers import base

#: A key the SDKs need when the server takes none (a server on this machine).
NO_KEY = "no-key"


class Api(StrEnum):
    """The wire formats agent-tui speaks."""

    OPENAI_CHAT = "openai-chat"  # Chat Completions: every OpenAI-compatible server
    OPENAI_RESPONSES = "openai-responses"  # OpenAI's Responses API
    ANTHROPIC = "anthropic"  # the Messages API: Anthropic and compatible servers


class ModelPrice(DeferredModel):
    """USD per million tokens. Cache reads and writes cost the input price unless given."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0, alias="cacheRead")
    cache_write: float | None = Field(default=None, ge=0, alias="cacheWrite")


class ModelEntry(DeferredModel):
    """What the configuration says of one model (None: not said)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    context_window: StrictInt | None = Field(default=None, ge=1024, alias="contextWindow")
    max_output: StrictInt | None = Field(default=None, ge=1, alias="maxOutput")
    images: StrictBool | None = None
    reasoning: StrictBool | None = None
    price: ModelPrice | None = None


class ProviderConfig(DeferredModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    api: Api
    base_url: str | None = Field(default=None, alias="baseURL")
    #: the variable that holds the key (None: the server takes no key, as a local one)
    api_key_env: str | None = Field(default=None, alias="apiKeyEnv")
    #: the variable that may move the server (``OPENAI_BASE_URL``), above ``base_url``
    base_url_env: str | None = Field(default=None, alias="baseURLEnv")
    headers: dict[str, str] = Field(default_factory=dict)
    models: dict[str, ModelEntry] = Field(default_factory=dict)
    #: every model of this provider costs nothing (a server on this machine)
    free: StrictBool = False
    #: the model used when none is named
    default_model: str | None = Field(default=None, alias="defaultModel")
    #: what the server lacks, said rather than guessed (an Anthropic-compatible server:
    #: "models" (no Models API), "cacheControl", "thinking")
    lacks: list[str] = Field(default_factory=list)
    #: Responses API: run each request in background mode (kept on the server), so that
    #: an interrupted one is cancelled there too (``responses.cancel``)
    background: StrictBool = False
    #: Chat Completions: the name the server gives the output limit (OpenAI's newer
    #: ``max_completion_tokens``; most compatible servers know ``max_tokens``)
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        default="max_tokens", alias="maxTokensParam")

    def url(self, environ: Mapping[str, str] | None = None) -> str | None:
        env = os.environ if environ is None else environ
        if self.base_url_env and env.get(self.base_url_env):
            return env[self.base_url_env]
        return self.base_url

    def key(self, environ: Mapping[str, str] | None = None) -> str | None:
        env = os.environ if environ is None else environ
        return env.get(self.api_key_env) if self.api_key_env else None

    def merged(self, over: Mapping[str, Any]) -> "ProviderConfig":
        """This config with a settings entry's fields over it (models join)."""
        data = self.model_dump(by_alias=True, exclude_none=True)
        models = {**data.pop("models", {}), **dict(over.get("models") or {})}
        return ProviderConfig.model_validate({**data, **dict(over), "models": models})


def info_from(model_id: str, entry: ModelEntry | None, listed: Any = None) -> base.ModelInfo:
    """What the configuration (first) and the server's model list say of a model."""
    extra = getattr(listed, "model_extra", None) or {}
    window = (entry.context_window if entry else None) or _int(
        extra.get("context_length") or extra.get("context_window")
        or extra.get("max_context_length"))
    return base.ModelInfo(
        id=model_id, max_input_tokens=window,
        max_tokens=entry.max_output if entry else None,
        image_input=bool(entry and entry.images),
        thinking_disabled=True,
    )


def _int(value: Any) -> int | None:
    """A window a server states, if it is one (below 1,024 tokens it is not: a server
    saying 1 would make every request compact)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1024 \
        else None


class ProviderConfigError(Exception):
    """A ``providers`` entry that cannot be used: one line naming it."""


def parse_providers(raw: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The settings' ``providers`` value checked entry by entry: the good entries (as
    written, to be merged over presets) and one problem line per bad one."""
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, ["providers: give an object of NAME: {api, baseURL, apiKeyEnv, models}"]
    good: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for name, entry in raw.items():
        if not isinstance(entry, dict) or "/" in name or not name.strip():
            problems.append(f"providers.{name}: give an object under a name without '/'")
            continue
        try:
            ProviderConfig.model_validate({"api": Api.OPENAI_CHAT, **entry})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"providers.{name}.{where}: {first['msg']} (entry ignored)")
            continue
        good[name] = entry
    return good, problems
