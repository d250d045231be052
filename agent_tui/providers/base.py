"""The one interface every model client stands behind, with its own stream events.

A provider turns a :class:`ModelRequest` (messages already in the Anthropic
Messages API shape, built by the core's model view) into an async stream of
:class:`StreamEvent` items. It does not retry: it raises :class:`ProviderError`
saying whether a retry makes sense and after how long, and the core's retry loop
(which a cancel can interrupt and a person can watch) decides.

Providers never import the core; the core imports this module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, Field


class ModelRequest(BaseModel):
    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    max_tokens: int = 8192


class TextStarted(BaseModel):
    kind: Literal["text_started"] = "text_started"
    index: int


class TextDelta(BaseModel):
    kind: Literal["text_delta"] = "text_delta"
    index: int
    text: str


class ToolUseStarted(BaseModel):
    kind: Literal["tool_use_started"] = "tool_use_started"
    index: int
    id: str
    name: str


class ToolInputDelta(BaseModel):
    kind: Literal["tool_input_delta"] = "tool_input_delta"
    index: int
    partial_json: str


class BlockStopped(BaseModel):
    kind: Literal["block_stopped"] = "block_stopped"
    index: int


class MessageEnded(BaseModel):
    kind: Literal["message_ended"] = "message_ended"
    stop_reason: str | None = None


StreamEvent = TextStarted | TextDelta | ToolUseStarted | ToolInputDelta | BlockStopped | MessageEnded


class ProviderError(Exception):
    """The model call failed. ``retryable`` says whether trying again may help."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


class Provider(ABC):
    name: str = "provider"
    default_model: str = ""

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """An async iterator of stream events. Closing it (``aclose``) or cancelling
        the task reading it must release the connection."""

    async def aclose(self) -> None:
        """Release clients and connections."""
