"""What the two OpenAI wire formats share: the SDK client, errors, usage, models.

The ``openai`` SDK is imported here, and this module only when an OpenAI-wire
provider is chosen. SDK retries are off (``max_retries=0``): the core's retry loop
owns back-off (it honours ``retry-after``, and a cancel ends it). A stream's
connection is closed when the stream is closed or its reader cancelled
(``AsyncStream.close`` in the providers' ``finally``).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai

from agent_tui.providers import base
from agent_tui.providers.config import NO_KEY, ProviderConfig, info_from
from agent_tui.providers.retry_after import retry_after

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
#: The marker of a thinking block that holds a Chat Completions ``reasoning_content``.
CHAT_REASONING = "openai-chat:reasoning_content"
#: The prefix of a thinking block's signature that holds a Responses reasoning item.
RESPONSES_REASONING = "openai-responses:"


_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def safe_call_id(raw: str | None) -> str:
    """A tool call's id as every wire format takes it (the Messages API wants
    ``^[a-zA-Z0-9_-]+$``; some servers send ``functions.bash:0``), so that the history
    survives a switch of provider; a missing one is made."""
    if not raw:
        return f"call_{uuid.uuid4().hex[:24]}"
    return _UNSAFE_ID.sub("_", raw)[:64]


def make_client(name: str, cfg: ProviderConfig, *, timeout: float = 600.0) -> openai.AsyncOpenAI:
    key = cfg.key()
    if not key and cfg.api_key_env and not cfg.free:
        raise base.ProviderError(
            f"{name}: no API key: set {cfg.api_key_env}", kind=base.ErrorKind.AUTHENTICATION)
    return openai.AsyncOpenAI(
        api_key=key or NO_KEY, base_url=cfg.url(), max_retries=0, timeout=timeout,
        default_headers=cfg.headers or None,
    )


async def read_stream(stream: Any, name: str) -> AsyncIterator[Any]:
    """The stream's chunks, with its failures as ProviderErrors; the connection is
    closed however the reading ends (done, failed, cancelled or closed early)."""
    try:
        async for chunk in stream:
            yield chunk
    except openai.APIError as exc:
        raise provider_error(exc, name) from exc
    except httpx2.TransportError as exc:
        raise base.ProviderError(f"connection lost: {exc!r}", retryable=True,
                                 kind=base.ErrorKind.CONNECTION) from exc
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise base.ProviderError(f"malformed stream from {name}: {exc!r}",
                                 retryable=True) from exc
    finally:
        await stream.close()


_HINTS = {
    401: "the API key was refused: check {key}",
    403: "the API key may not use this model or resource",
    404: "not found: check the model name (/model lists the models) and the base URL",
    413: "the request is too large: remove large attachments or /compact",
}
_KINDS = {
    401: base.ErrorKind.AUTHENTICATION, 403: base.ErrorKind.PERMISSION,
    404: base.ErrorKind.NOT_FOUND, 413: base.ErrorKind.TOO_LARGE,
    429: base.ErrorKind.RATE_LIMIT,
}
# "This model's maximum context length is 8192 tokens. However, your messages resulted
# in 9000 tokens" (OpenAI, vLLM); llama.cpp and Ollama word it their own ways.
_WINDOW = re.compile(r"maximum context length is (\d+) tokens.*?(\d+) tokens", re.S)
_OVERFLOW_WORDS = ("context_length_exceeded", "maximum context length", "context length",
                   "too many tokens", "exceeds the context", "prompt is too long")


def provider_error(exc: openai.APIError, name: str, key_env: str | None = None,
                   ) -> base.ProviderError:
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _message(exc)
        kind = _KINDS.get(status, base.ErrorKind.SERVER if status >= 500 else base.ErrorKind.OTHER)
        if status in (400, 413) or "context_length_exceeded" in str(exc.body):
            if any(word in message.lower() or word in str(exc.body) for word in _OVERFLOW_WORDS):
                kind = base.ErrorKind.CONTEXT_OVERFLOW
                message = overflow_message(message)
            elif status == 400:
                kind = base.ErrorKind.INVALID
        hint = _HINTS.get(status, "").format(key=key_env or "the provider's key variable")
        return base.ProviderError(
            f"{name}: {status}: {message}" + (f" ({hint})" if hint else ""),
            retryable=status in RETRYABLE_STATUS, retry_after=retry_after(exc.response.headers),
            status=status, kind=kind)
    if isinstance(exc, openai.APIConnectionError):
        return base.ProviderError(f"{name}: cannot reach the server: {exc}", retryable=True,
                                  kind=base.ErrorKind.CONNECTION)
    return base.ProviderError(f"{name}: {exc}", retryable=False)


def overflow_message(message: str) -> str:
    """The server's words, led by the figures in the Messages API's form, which the
    core reads to learn the window (``prompt is too long: N tokens > M maximum``)."""
    found = _WINDOW.search(message)
    if found is None:
        return message
    window, prompt = int(found.group(1)), int(found.group(2))
    return f"prompt is too long: {prompt} tokens > {window} maximum ({message})"


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return exc.message


def usage_counts(prompt: int, output: int, cached: int, cache_write: int = 0,
                 ) -> dict[str, int]:
    """OpenAI's counts (the prompt includes its cached part) in the Messages API's
    shape (input counts only what was not read from the cache)."""
    return {"input_tokens": max(0, prompt - cached - cache_write), "output_tokens": output,
            "cache_read_input_tokens": cached, "cache_creation_input_tokens": cache_write}


def estimate_tokens(payload: Any) -> int:
    """A request's size in tokens, roughly (4 bytes each), until the server says."""
    return max(1, len(json.dumps(payload, default=str)) // 4)


class OpenAIWireProvider(base.Provider):
    """What both OpenAI wire formats' providers share: the client, the model lookups
    (the configuration first, then the server's model list), closing."""

    def __init__(self, name: str, cfg: ProviderConfig, *,
                 client: openai.AsyncOpenAI | None = None) -> None:
        self.name = name
        self.cfg = cfg
        self.default_model = cfg.default_model or next(iter(cfg.models), "")
        self._client = client or make_client(name, cfg)

    async def create(self, create: Any, body: dict[str, Any]) -> Any:
        """``create(**body)`` (the SDK's streaming call), its failure a ProviderError."""
        try:
            return await create(**body)
        except openai.APIError as exc:
            raise provider_error(exc, self.name, self.cfg.api_key_env) from exc

    async def model_info(self, model: str) -> base.ModelInfo | None:
        return await lookup_model(self._client, self.cfg, self.name, model)

    async def list_models(self) -> list[base.ModelInfo]:
        return await list_models(self._client, self.cfg, self.name)

    async def aclose(self) -> None:
        await self._client.close()


async def lookup_model(client: openai.AsyncOpenAI, cfg: ProviderConfig, name: str,
                       model_id: str) -> base.ModelInfo | None:
    entry = cfg.models.get(model_id)
    try:
        listed = await client.models.retrieve(model_id)
    except openai.NotFoundError as exc:
        if entry is not None:
            return info_from(model_id, entry)
        raise provider_error(exc, name, cfg.api_key_env) from exc
    except (openai.APIError, httpx2.TransportError):
        return info_from(model_id, entry) if entry is not None else None
    return info_from(model_id, entry, listed)


async def list_models(client: openai.AsyncOpenAI, cfg: ProviderConfig, name: str,
                      ) -> list[base.ModelInfo]:
    found: dict[str, base.ModelInfo] = {m: info_from(m, e) for m, e in cfg.models.items()}
    try:
        async for listed in await client.models.list():
            found.setdefault(listed.id, info_from(listed.id, cfg.models.get(listed.id), listed))
    except openai.APIError as exc:
        if not found:
            raise provider_error(exc, name, cfg.api_key_env) from exc
    except httpx2.TransportError:
        pass
    return list(found.values())
