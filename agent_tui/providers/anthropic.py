"""Claude through the official SDK's async streaming client.

The SDK is imported here, and this module is imported only when the anthropic
provider is chosen (``import anthropic`` takes about a second). SDK retries are off
(``max_retries=0``): the core's retry loop owns back-off so a cancel can stop it and
a person can see it. ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are honoured
by the SDK itself. With a :class:`~agent_tui.providers.key_helper.KeyHelper` (Claude
Code's ``apiKeyHelper``) the key is asked of it before each request, and a 401 makes
it fetch a new one, with which the request is sent once more.

The cloud providers (:mod:`agent_tui.providers.cloud`) are this class with the SDK's
Bedrock or Vertex client in place of ``AsyncAnthropic``: they set the hooks below
(the client, what each request's body adds, the hints of their errors, the errors of
their credentials) and share the streaming, the cancel and the error mapping here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
import os
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import httpx2

from agent_tui.providers import anthropic_lazy, base
from agent_tui.providers.key_helper import KeyHelper, KeyHelperError
from agent_tui.providers.retry_after import retry_after as _retry_after

if TYPE_CHECKING:
    import anthropic
else:
    anthropic = anthropic_lazy.load()  # what a request reads, not all 3,500 modules

DEFAULT_MODEL = "claude-sonnet-5-5"
RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
# An error event in the middle of a stream arrives with the stream's status (200).
RETRYABLE_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error",
                         # Bedrock's exception frames in an event stream
                         "throttlingException", "serviceUnavailableException",
                         "internalServerException", "modelStreamErrorException"}
T = TypeVar("T")


def open_telemetry() -> Literal[False] | None:
    """The SDK's OpenTelemetry spans: off, unless the environment names a tracer provider
    (``OTEL_PYTHON_TRACER_PROVIDER``), which is then the SDK's to use as it would.

    agent-tui sets no tracer provider itself, so without one every span the SDK starts is a
    no-op. It still reads each request's attributes for it, and the first read imports the
    request types of both message APIs, the beta's included: some 400 modules, about 0.1 s
    of CPU in every ``-p`` run."""
    return None if "OTEL_PYTHON_TRACER_PROVIDER" in os.environ else False


class AnthropicProvider(base.Provider):
    name = "anthropic"
    default_model = DEFAULT_MODEL
    #: What every request's body adds (a cloud's ``anthropic_version``).
    body_extras: dict[str, Any] = {}
    #: One line to act on, by HTTP status.
    hints: dict[int, str] = {}
    #: Errors of the client's own credentials (raised before any HTTP answer).
    auth_errors: tuple[type[BaseException], ...] = ()

    def __init__(
        self, *, api_key: str | None = None, base_url: str | None = None, timeout: float = 600.0,
        key_helper: KeyHelper | None = None, client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self._key_helper = key_helper
        if client is not None:
            self._client = client
            return
        if key_helper is not None and api_key is None:
            api_key = "-"  # a placeholder: the helper's key replaces it before any request
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout,
            open_telemetry=open_telemetry(),
        )

    def _client_for(self, client: Any, model: str) -> Any:
        """The client a request for ``model`` goes through (Vertex: the model's region)."""
        return client

    def _auth_failure(self, exc: BaseException) -> base.ProviderError:
        """One of :attr:`auth_errors` as the error to show."""
        return base.ProviderError(f"{type(exc).__name__}: {exc}", retryable=False,
                                  kind=base.ErrorKind.AUTHENTICATION)

    async def _keyed(self, *, fresh: bool = False) -> anthropic.AsyncAnthropic:
        """The client, with the helper's key when there is a helper (a new one when
        ``fresh``); the SDK's copy shares the connection pool."""
        helper = self._key_helper
        if helper is None:
            return self._client
        try:
            key = await (helper.refresh() if fresh else helper.key())
        except KeyHelperError as exc:
            raise base.ProviderError(str(exc), retryable=False,
                                     kind=base.ErrorKind.AUTHENTICATION) from None
        if key != self._client.api_key:
            self._client = self._client.with_options(api_key=key)
        return self._client

    async def _call(self, call: Callable[[anthropic.AsyncAnthropic], Awaitable[T]]) -> T:
        """``call(client)``; on a 401 with a helper, once more with the helper's new key."""
        client = await self._keyed()
        try:
            return await call(client)
        except anthropic.AuthenticationError:
            if self._key_helper is None:
                raise
        client = await self._keyed(fresh=True)
        try:
            return await call(client)
        except anthropic.AuthenticationError as exc:
            raise _refused_again(exc, self._key_helper.name) from None

    async def stream(self, request: base.ModelRequest) -> AsyncIterator[base.StreamEvent]:
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
        if request.thinking is not None:
            kwargs["thinking"] = request.thinking
        if request.output_config is not None:
            kwargs["output_config"] = request.output_config
        try:
            stream = await self._call(lambda client: _create_stream(
                self._client_for(client, request.model), kwargs, self.body_extras))
        except anthropic.APIError as exc:
            raise _provider_error(exc, self.hints) from exc
        except self.auth_errors as exc:
            raise self._auth_failure(exc) from None
        try:
            async for raw in stream:
                event = _convert(raw)
                if event is not None:
                    yield event
        except anthropic.APIError as exc:
            raise _provider_error(exc, self.hints) from exc
        except httpx2.TransportError as exc:
            # A connection lost while reading the stream is not wrapped by the SDK.
            raise base.ProviderError(f"connection lost: {exc!r}", retryable=True,
                                     kind=base.ErrorKind.CONNECTION) from exc
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # A stream that cannot be read (data that is not JSON, a shape not known).
            raise base.ProviderError(f"malformed stream: {exc!r}", retryable=True) from exc
        finally:
            await stream.close()

    async def model_info(self, model: str) -> base.ModelInfo | None:
        try:
            info = await self._call(lambda client: _retrieve_model(client, model))
        except ValueError as exc:  # an empty id, or a path segment such as ``..``: not asked
            raise base.ProviderError(f"model {model!r} cannot be looked up: {exc}",
                                     retryable=False) from None
        except anthropic.APIError as exc:
            raise _provider_error(exc) from exc
        except httpx2.TransportError as exc:
            raise base.ProviderError(f"connection lost: {exc!r}", retryable=True,
                                     kind=base.ErrorKind.CONNECTION) from exc
        return _model_info(info)

    async def list_models(self) -> list[base.ModelInfo]:
        found: list[base.ModelInfo] = []
        try:
            client = await self._keyed()
            try:
                page = await client.models.list(limit=100)
            except anthropic.AuthenticationError:
                if self._key_helper is None:
                    raise
                helper_name = self._key_helper.name
                try:
                    page = await (await self._keyed(fresh=True)).models.list(limit=100)
                except anthropic.AuthenticationError as exc:
                    raise _refused_again(exc, helper_name) from None
            async for info in page:
                found.append(_model_info(info.to_dict()))
        except anthropic.APIError as exc:
            raise _provider_error(exc) from exc
        except httpx2.TransportError as exc:
            raise base.ProviderError(f"connection lost: {exc!r}", retryable=True,
                                     kind=base.ErrorKind.CONNECTION) from exc
        return found

    async def aclose(self) -> None:
        await self._client.close()


def _create_stream(client: Any, body: dict[str, Any], extras: dict[str, Any]) -> Awaitable[Any]:
    """``client.messages.create(**body)`` with ``stream=True``, made as the SDK's messages
    API makes it: the same request to ``/v1/messages`` (a cloud client turns it into its
    own), the same options, the same stream (its error events raised as the API's errors).
    Going through the API's resource would import it, and with it its batches and the types
    of every argument of its methods (some 300 modules, about 70 ms of every ``-p`` run),
    which only annotate them: the body is sent as given either way. Its events come as the
    API sends them, JSON objects (:func:`_convert` reads them): the SDK's event types are
    made without checking what they hold, and the types of every block a reply may hold
    cost about 45 ms more a run."""
    from anthropic._base_client import make_request_options
    from anthropic.lib._tracing import messages_create_request_attributes

    return client.post(  # type: ignore[no-any-return]
        "/v1/messages", body=body, cast_to=object, stream=True,
        stream_cls=anthropic.AsyncStream[object],
        options=make_request_options(
            extra_body=extras or None, span_name="anthropic.messages.create",
            span_route="/v1/messages", span_attributes=messages_create_request_attributes))


def _retrieve_model(client: Any, model_id: str) -> Awaitable[Any]:
    """``client.models.retrieve(model_id)`` as the SDK's Models API makes it (its path, its
    options), the answer as sent (its JSON object): the API's resource would import its
    pages and types for it (about 12 ms of every run, the first request waiting on it)."""
    from anthropic._base_client import make_request_options
    from anthropic._utils._path import path_template

    if not model_id:
        raise ValueError(f"Expected a non-empty value for `model_id` but received {model_id!r}")
    return client.get(  # type: ignore[no-any-return]
        path_template("/v1/models/{model_id}", model_id=model_id), cast_to=object,
        options=make_request_options(span_name="anthropic.models.retrieve",
                                     span_route="/v1/models/{model_id}",
                                     span_attributes={"anthropic.model.id": model_id}))


def _supported(obj: Any, *path: str) -> bool:
    for name in path:
        obj = obj.get(name) if isinstance(obj, dict) else None
        if obj is None:
            return False
    return isinstance(obj, dict) and bool(obj.get("supported", False))


def _model_info(info: Any) -> base.ModelInfo:
    """One model of a Models API answer (its JSON object); a ProviderError when the answer
    has another shape (a list where an object belongs...): a message, never a traceback."""
    try:
        return _read_model_info(info)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        raise base.ProviderError(
            f"the Models API answered in a shape agent-tui cannot read ({type(info).__name__}: "
            f"{exc})") from exc


def _read_model_info(info: Any) -> base.ModelInfo:
    caps = info.get("capabilities")
    levels = [lvl for lvl in ("low", "medium", "high", "xhigh", "max")
              if _supported(caps, "effort", lvl)] if _supported(caps, "effort") else []
    return base.ModelInfo(
        id=info["id"],
        display_name=info.get("display_name") or "",
        max_input_tokens=info.get("max_input_tokens"),
        max_tokens=info.get("max_tokens"),
        thinking_adaptive=_supported(caps, "thinking", "types", "adaptive"),
        thinking_enabled=_supported(caps, "thinking", "types", "enabled"),
        thinking_disabled=caps is None or _supported(caps, "thinking", "types", "disabled"),
        effort_levels=levels,
        image_input=_supported(caps, "image_input"),
    )


def _usage(raw: Any) -> base.UsageCounts:
    usage = raw if isinstance(raw, dict) else {}
    return base.UsageCounts(
        input_tokens=usage.get("input_tokens") or 0,
        output_tokens=usage.get("output_tokens") or 0,
        cache_read_input_tokens=usage.get("cache_read_input_tokens") or 0,
        cache_creation_input_tokens=usage.get("cache_creation_input_tokens") or 0,
        web_search_requests=_searches(usage) or 0,
    )


def _searches(usage: Any) -> int | None:
    """``usage.server_tool_use.web_search_requests`` (None when the usage has none)."""
    server = usage.get("server_tool_use") if isinstance(usage, dict) else None
    return server.get("web_search_requests") if isinstance(server, dict) else None


def _convert(raw: Any) -> base.StreamEvent | None:
    """One event of the stream as the API sent it (its JSON object: the SDK's stream gives
    it as it is, ``cast_to=object``); a shape not as documented raises KeyError or
    TypeError, which the caller says is a malformed stream."""
    kind = raw["type"]
    if kind == "message_start":
        message = raw["message"]
        return base.MessageStarted(id=message["id"], model=message["model"],
                                   usage=_usage(message.get("usage")))
    if kind == "content_block_start":
        block, index = raw["content_block"], raw["index"]
        if block["type"] == "text":
            return base.TextStarted(index=index)
        if block["type"] == "tool_use":
            return base.ToolUseStarted(index=index, id=block["id"], name=block["name"])
        if block["type"] == "thinking":
            return base.ThinkingStarted(index=index)
        if block["type"] == "redacted_thinking":
            return base.RedactedThinking(index=index, data=block["data"])
        return base.OtherBlockStarted(index=index, block=block)
    if kind == "content_block_delta":
        delta, index = raw["delta"], raw["index"]
        if delta["type"] == "text_delta":
            return base.TextDelta(index=index, text=delta["text"])
        if delta["type"] == "input_json_delta":
            return base.ToolInputDelta(index=index, partial_json=delta["partial_json"])
        if delta["type"] == "thinking_delta":
            return base.ThinkingDelta(index=index, text=delta["thinking"])
        if delta["type"] == "signature_delta":
            return base.SignatureDelta(index=index, signature=delta["signature"])
        if delta["type"] == "citations_delta":
            return base.CitationDelta(index=index, citation=delta["citation"])
        return None
    if kind == "content_block_stop":
        return base.BlockStopped(index=raw["index"])
    if kind == "message_delta":
        usage = raw.get("usage")
        counts = usage if isinstance(usage, dict) else {}
        return base.MessageEnded(
            stop_reason=raw["delta"].get("stop_reason"),
            output_tokens=counts.get("output_tokens"),
            input_tokens=counts.get("input_tokens"),
            cache_read_input_tokens=counts.get("cache_read_input_tokens"),
            cache_creation_input_tokens=counts.get("cache_creation_input_tokens"),
            web_search_requests=_searches(usage),
        )
    return None


# What to do, by status: one line a person can act on.
_HINTS = {
    401: "the API key was refused: check ANTHROPIC_API_KEY",
    403: "the API key may not use this model or resource",
    404: "not found: check the model name (/model lists the models)",
    413: "the request is too large: remove large attachments or /compact",
}
_KINDS = {
    401: base.ErrorKind.AUTHENTICATION,
    403: base.ErrorKind.PERMISSION,
    404: base.ErrorKind.NOT_FOUND,
    413: base.ErrorKind.TOO_LARGE,
    429: base.ErrorKind.RATE_LIMIT,
    529: base.ErrorKind.OVERLOADED,
}


def _provider_error(exc: anthropic.APIError, hints: dict[int, str] | None = None,
                    ) -> base.ProviderError:
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        message = _message(exc)
        error_type = _error_type(exc)
        kind = _KINDS.get(status, base.ErrorKind.SERVER if status >= 500 else base.ErrorKind.OTHER)
        if error_type == "overloaded_error":
            kind = base.ErrorKind.OVERLOADED
        elif status == 400:
            kind = (base.ErrorKind.CONTEXT_OVERFLOW if "prompt is too long" in message
                    else base.ErrorKind.INVALID)
        hint = {**_HINTS, **(hints or {})}.get(status)
        return base.ProviderError(
            f"{status}: {message}" + (f" ({hint})" if hint else ""),
            retryable=status in RETRYABLE_STATUS or error_type in RETRYABLE_ERROR_TYPES,
            retry_after=_retry_after(exc.response.headers),
            status=status,
            kind=kind,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return base.ProviderError(f"connection error: {exc}", retryable=True,
                                  kind=base.ErrorKind.CONNECTION)
    return base.ProviderError(str(exc), retryable=False)


def _refused_again(exc: anthropic.APIStatusError, helper: str) -> base.ProviderError:
    """A 401 for the helper's new key too: the helper is what to look at."""
    return base.ProviderError(
        f"{exc.status_code}: {_message(exc)} (the API refused the key {helper} printed, "
        "also when run again)", retryable=False, status=exc.status_code,
        kind=base.ErrorKind.AUTHENTICATION)


def _error_type(exc: anthropic.APIStatusError) -> str | None:
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def _message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(body.get("message"), str):  # Bedrock's {"message": ...}
            return str(body["message"])
    return exc.message
