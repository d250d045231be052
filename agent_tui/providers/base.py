"""The one interface every model client stands behind, with its own stream events.

A provider turns a :class:`ModelRequest` (messages already in the Anthropic
Messages API shape, built by the core's model view) into an async stream of
:class:`StreamEvent` items. It does not retry: it raises :class:`ProviderError`
saying whether a retry makes sense and after how long, and the core's retry loop
(which a cancel can interrupt and a person can watch) decides.

Providers never import the core; the core imports this module.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made, and a -p turn makes these classes whether it uses them or not.
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class DeferredModel(BaseModel):
    """Built on its first use (protocol/model_base.py, which this layer does not import):
    a turn without tool calls or thinking never reads most of these."""

    model_config = ConfigDict(defer_build=True)


class ModelRequest(DeferredModel):
    model: str
    # A plain string, or text blocks (which may carry ``cache_control``).
    system: str | list[dict[str, Any]]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    max_tokens: int = 8192
    thinking: dict[str, Any] | None = None  # the API's ``thinking`` parameter
    output_config: dict[str, Any] | None = None  # e.g. {"effort": "high"}


class UsageCounts(DeferredModel):
    """Token counts as the API reports them (``usage``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    # usage.server_tool_use.web_search_requests: searches the API ran (billed per use)
    web_search_requests: int = 0
    # input_tokens is agent-tui's estimate, not the server's: a wire format that says
    # the request's size only at its end (OpenAI's) was cut before it did
    estimated: bool = False

    @property
    def context_tokens(self) -> int:
        """Everything the request put in the context window."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


class ModelInfo(DeferredModel):
    """What the Models API says of a model (``GET /v1/models/{id}``)."""

    id: str
    display_name: str = ""
    max_input_tokens: int | None = None
    max_tokens: int | None = None
    thinking_adaptive: bool = False
    thinking_enabled: bool = False  # extended thinking with a budget
    thinking_disabled: bool = True  # accepts {"type": "disabled"}
    effort_levels: list[str] = Field(default_factory=list)
    image_input: bool = False


class MessageStarted(DeferredModel):
    kind: Literal["message_started"] = "message_started"
    id: str = ""
    model: str = ""
    usage: UsageCounts = Field(default_factory=UsageCounts)


class TextStarted(DeferredModel):
    kind: Literal["text_started"] = "text_started"
    index: int


class TextDelta(DeferredModel):
    kind: Literal["text_delta"] = "text_delta"
    index: int
    text: str


class CitationDelta(DeferredModel):
    """``citations_delta``: one citation of a text block (a web search result's
    location, ...), kept verbatim with the text."""

    kind: Literal["citation_delta"] = "citation_delta"
    index: int
    citation: dict[str, Any]


class ToolUseStarted(DeferredModel):
    kind: Literal["tool_use_started"] = "tool_use_started"
    index: int
    id: str
    name: str


class ToolInputDelta(DeferredModel):
    kind: Literal["tool_input_delta"] = "tool_input_delta"
    index: int
    partial_json: str


class ThinkingStarted(DeferredModel):
    kind: Literal["thinking_started"] = "thinking_started"
    index: int


class ThinkingDelta(DeferredModel):
    kind: Literal["thinking_delta"] = "thinking_delta"
    index: int
    text: str


class SignatureDelta(DeferredModel):
    kind: Literal["signature_delta"] = "signature_delta"
    index: int
    signature: str


class RedactedThinking(DeferredModel):
    """A ``redacted_thinking`` block: complete when it starts (its ``data`` is opaque)."""

    kind: Literal["redacted_thinking"] = "redacted_thinking"
    index: int
    data: str


class OtherBlockStarted(DeferredModel):
    """A block the agent does not act on (``server_tool_use``, a server tool's
    result, ...), kept verbatim: a paused turn must be sent back exactly."""

    kind: Literal["other_block_started"] = "other_block_started"
    index: int
    block: dict[str, Any]


class BlockStopped(DeferredModel):
    kind: Literal["block_stopped"] = "block_stopped"
    index: int


class MessageEnded(DeferredModel):
    """``message_delta``: the stop reason and the cumulative usage (fields the delta
    does not carry are None: the ``message_start`` figures stand)."""

    kind: Literal["message_ended"] = "message_ended"
    stop_reason: str | None = None
    output_tokens: int | None = None
    input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    web_search_requests: int | None = None


StreamEvent = (
    MessageStarted
    | TextStarted
    | TextDelta
    | CitationDelta
    | ThinkingStarted
    | ThinkingDelta
    | SignatureDelta
    | RedactedThinking
    | OtherBlockStarted
    | ToolUseStarted
    | ToolInputDelta
    | BlockStopped
    | MessageEnded
)


class ErrorKind(StrEnum):
    """What kind of failure a provider error is, for what to do next."""

    CONTEXT_OVERFLOW = "context_overflow"  # "prompt is too long": compact, then retry
    AUTHENTICATION = "authentication"  # 401: the key
    PERMISSION = "permission"  # 403
    NOT_FOUND = "not_found"  # 404: usually the model name
    TOO_LARGE = "too_large"  # 413: the request's bytes
    INVALID = "invalid"  # 400: anything else
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER = "server"
    CONNECTION = "connection"
    OTHER = "other"


class ProviderError(Exception):
    """The model call failed. ``retryable`` says whether trying again may help."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
        kind: ErrorKind = ErrorKind.OTHER,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.kind = kind


class Provider(ABC):
    name: str = "provider"
    default_model: str = ""
    #: Claude Code's model aliases (sonnet, opus, haiku) as this provider's ids; empty:
    #: the Anthropic API's (the core's table).
    model_aliases: dict[str, str] = {}

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """An async iterator of stream events. Closing it (``aclose``) or cancelling
        the task reading it must release the connection."""

    async def model_info(self, model: str) -> ModelInfo | None:
        """What the provider knows of ``model`` (None: nothing). Raises ProviderError
        (kind NOT_FOUND for an unknown model)."""
        return None

    async def list_models(self) -> list[ModelInfo]:
        """The models the provider offers (empty: it cannot say)."""
        return []

    async def aclose(self) -> None:
        """Release clients and connections."""


async def close_stream(stream: AsyncIterator[StreamEvent]) -> None:
    """Close a provider's stream (an async generator) now: its connection goes with it."""
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()
