"""The one way the core asks the model: a request streamed under the cancel scope, the
stream closed on every way out, its usage reported, and a failed request tried again
after a back-off that Esc ends.

The turn (``core/turn/turn.py``), compaction (``core/compaction/compaction.py``) and a
``web_search`` call (``core/turn/web_search.py``) all ask through a :class:`ModelCall`,
so they share one retry policy (:meth:`ModelCall.retry_delay`) and one way to close a
stream. Its seam is the provider interface (``providers/base.py``): any provider's
stream and its :class:`~agent_tui.providers.base.ProviderError` fit it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent_tui.cancel import Cancelled, CancelScope
from agent_tui.core.journal.records import RetryRecord
from agent_tui.core.services.deps import SessionDeps
from agent_tui.protocol import Event, RequestPurpose, ResponseStarted, RetryScheduled
from agent_tui.providers import base as model

#: How long closing a stream may take (it drops the connection; the server may not
#: answer the close).
CLOSE_TIMEOUT_S = 2.0


class StreamEnding(StrEnum):
    """How one request's stream ended."""

    COMPLETED = "completed"  # the provider's stream ran to its end
    CANCELLED = "cancelled"  # the scope was cancelled while it was read
    FAILED = "failed"  # the provider raised a ProviderError


@dataclass
class Streamed:
    """What one request's stream came to: how it ended, its usage, its time."""

    ending: StreamEnding
    usage: model.UsageCounts | None = None  # None: message_start never came
    error: model.ProviderError | None = None
    cancelled: Cancelled | None = None
    seconds: float = 0.0

    def raise_if_cancelled(self) -> None:
        """Raise the scope's Cancelled again, for a caller that unwinds on a cancel."""
        if self.cancelled is not None:
            raise self.cancelled


def fold_usage(usage: model.UsageCounts | None,
               event: model.StreamEvent) -> model.UsageCounts | None:
    """The usage so far: message_start's counts, updated by message_delta's."""
    match event:
        case model.MessageStarted():
            return event.usage.model_copy()
        case model.MessageEnded():
            update = {k: v for k, v in event.model_dump().items()
                      if k in model.UsageCounts.model_fields and v is not None}
            if "input_tokens" in update:
                update["estimated"] = False  # the server said it
            return (usage or model.UsageCounts()).model_copy(update=update)
        case _:
            return usage


class ModelCall:
    """Requests of one purpose (a turn's, a compaction's, a web search's), made alike."""

    def __init__(
        self,
        deps: SessionDeps,
        scope: CancelScope,
        *,
        turn_id: str,
        purpose: RequestPurpose,
        record: Callable[[Any], bool],
        emit: Callable[[Event], None],
        window: Callable[[], int | None] | None = None,
        parent_tool_use_id: str | None = None,
        label: str = "",
    ) -> None:
        self.deps = deps
        self.scope = scope
        self.turn_id = turn_id
        self.purpose = purpose
        self.record = record
        self.emit = emit
        self.window = window or (lambda: deps.limits.window(deps.config.model))
        self.parent_tool_use_id = parent_tool_use_id
        self.label = label  # said before a retry's reason ("web search: ...")

    async def stream(self, request: model.ModelRequest,
                     on_event: Callable[[model.StreamEvent], None]) -> Streamed:
        """One request: each event handed to ``on_event`` as it comes; the stream is
        closed however it ends, and the usage the API reported is recorded (a request
        cut short is billed for what it processed, and says so). Past the spending cap
        the request is not sent (:class:`~agent_tui.core.usage.budget.BudgetReached`)."""
        self.deps.budget.check_spend(
            request.model, self.deps.usage.prices.lookup(request.model) is not None)
        usage: model.UsageCounts | None = None
        stop_reason: str | None = None
        stream = self.deps.provider.stream(request)
        started = time.monotonic()
        ending, error, cancelled = StreamEnding.FAILED, None, None
        try:
            async with self.scope.linked():  # cancel point: while the stream is read
                async for event in stream:
                    usage = fold_usage(usage, event)
                    if isinstance(event, model.MessageStarted):
                        self._started(event, request.model)
                    elif isinstance(event, model.MessageEnded):
                        stop_reason = event.stop_reason or stop_reason
                    on_event(event)
            ending = StreamEnding.COMPLETED
        except Cancelled as exc:
            ending, cancelled = StreamEnding.CANCELLED, exc
        except model.ProviderError as exc:
            ending, error = StreamEnding.FAILED, exc
        finally:
            await close_stream(stream)
        streamed = Streamed(ending=ending, usage=usage, error=error, cancelled=cancelled,
                            seconds=time.monotonic() - started)
        if usage is not None:
            self.deps.usage.report(
                self.record, self.emit, turn_id=self.turn_id, model=request.model,
                counts=usage, interrupted=ending is not StreamEnding.COMPLETED,
                purpose=self.purpose, window=self.window(),
                parent_tool_use_id=self.parent_tool_use_id, stop_reason=stop_reason,
            )
        return streamed

    def _started(self, started: model.MessageStarted, model_id: str) -> None:
        """The response began: told with what ``message_start`` counted."""
        counts = started.usage
        self.emit(ResponseStarted(
            turn_id=self.turn_id, model=started.model or model_id, message_id=started.id,
            input_tokens=counts.input_tokens, output_tokens=counts.output_tokens,
            cache_read_input_tokens=counts.cache_read_input_tokens,
            cache_creation_input_tokens=counts.cache_creation_input_tokens,
            purpose=self.purpose, parent_tool_use_id=self.parent_tool_use_id))

    def retry_delay(self, error: model.ProviderError, attempt: int, *, shown: bool) -> float | None:
        """How long to wait before trying again after ``attempt`` failed tries, or None
        to give up: what was shown cannot be taken back, nor is a failure that will not
        pass tried again; the wait is the server's ``retry-after``, else a doubling one."""
        cfg = self.deps.config
        if shown or not error.retryable or attempt >= cfg.max_retries:
            return None
        return min(cfg.retry_cap, error.retry_after or cfg.retry_base * 2 ** attempt)

    async def back_off(self, error: model.ProviderError, attempt: int, delay: float) -> None:
        """The wait before try ``attempt`` + 1, journalled and told; Esc ends it."""
        reason = f"{self.label}{error}"
        self.record(RetryRecord(turn_id=self.turn_id, attempt=attempt, delay=delay,
                                reason=reason))
        self.emit(RetryScheduled(turn_id=self.turn_id, attempt=attempt, delay=delay,
                                 reason=reason))
        async with self.scope.linked():  # cancel point: during retry back-off
            await asyncio.sleep(delay)

    async def ask(self, request: model.ModelRequest,
                  on_event: Callable[[], Callable[[model.StreamEvent], None]],
                  shown: Callable[[], bool] = lambda: False) -> tuple[Streamed, int]:
        """A request tried until it completes or may not be tried again: ``on_event``
        gives each try a fresh event handler, ``shown`` says whether the failed try
        already showed something. Returns the last try and how many were made; a
        cancel raises :class:`Cancelled`."""
        attempt = 0
        while True:
            streamed = await self.stream(request, on_event())
            streamed.raise_if_cancelled()
            if streamed.error is None:
                return streamed, attempt + 1
            delay = self.retry_delay(streamed.error, attempt, shown=shown())
            if delay is None:
                return streamed, attempt + 1
            attempt += 1
            await self.back_off(streamed.error, attempt, delay)


async def close_stream(stream: AsyncIterator[model.StreamEvent] | Any) -> None:
    """Close a provider's stream (its connection is dropped), bounded; best effort."""
    aclose = getattr(stream, "aclose", None)
    if aclose is None:
        return
    try:
        await asyncio.wait_for(aclose(), timeout=CLOSE_TIMEOUT_S)
    except Exception:
        pass  # closing is best effort; the connection goes with the client
