"""Claude through the official SDK's async streaming client.

The SDK is imported here, and this module is imported only when the anthropic
provider is chosen (``import anthropic`` takes about a second). SDK retries are off
(``max_retries=0``): the core's retry loop owns back-off so a cancel can stop it and
a person can see it. ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are honoured
by the SDK itself.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from agent_tui.providers import base

DEFAULT_MODEL = "claude-sonnet-5-5"
RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
# An error event in the middle of a stream arrives with the stream's status (200).
RETRYABLE_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error"}


class AnthropicProvider(base.Provider):
    name = "anthropic"
    default_model = DEFAULT_MODEL

    def __init__(
        self, *, api_key: str | None = None, base_url: str | None = None, timeout: float = 600.0
    ) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
        )

    async def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:  # type: ignore[override]
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": request.messages,
            "stream": True,
        }
        if request.system:
            kwargs["system"] = request.system
        if request.tools:
            kwargs["tools"] = request.tools
        try:
            stream = await self._client.messages.create(**kwargs)
        except anthropic.APIError as exc:
            raise _provider_error(exc) from exc
        try:
            async for raw in stream:
                event = _convert(raw)
                if event is not None:
                    yield event
        except anthropic.APIError as exc:
            raise _provider_error(exc) from exc
        except httpx2.TransportError as exc:
            # A connection lost while reading the stream is not wrapped by the SDK.
            raise base.ProviderError(f"connection lost: {exc!r}", retryable=True) from exc
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # A stream that cannot be read (data that is not JSON, a shape not known).
            raise base.ProviderError(f"malformed stream: {exc!r}", retryable=True) from exc
        finally:
            await stream.close()

    async def aclose(self) -> None:
        await self._client.close()


def _convert(raw: Any) -> base.StreamEvent | None:
    kind = raw.type
    if kind == "content_block_start":
        block = raw.content_block
        if block.type == "text":
            return base.TextStarted(index=raw.index)
        if block.type == "tool_use":
            return base.ToolUseStarted(index=raw.index, id=block.id, name=block.name)
        return None
    if kind == "content_block_delta":
        delta = raw.delta
        if delta.type == "text_delta":
            return base.TextDelta(index=raw.index, text=delta.text)
        if delta.type == "input_json_delta":
            return base.ToolInputDelta(index=raw.index, partial_json=delta.partial_json)
        return None
    if kind == "content_block_stop":
        return base.BlockStopped(index=raw.index)
    if kind == "message_delta":
        return base.MessageEnded(stop_reason=raw.delta.stop_reason)
    return None


def _provider_error(exc: anthropic.APIError) -> base.ProviderError:
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        return base.ProviderError(
            f"{status}: {_message(exc)}",
            retryable=status in RETRYABLE_STATUS or _error_type(exc) in RETRYABLE_ERROR_TYPES,
            retry_after=_retry_after(exc.response.headers),
            status=status,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return base.ProviderError(f"connection error: {exc}", retryable=True)
    return base.ProviderError(str(exc), retryable=False)


def _error_type(exc: anthropic.APIStatusError) -> str | None:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type")
    return None


def _message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return exc.message


def _retry_after(headers: Any) -> float | None:
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None
